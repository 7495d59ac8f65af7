"""Amp: `~/.local/share/amp/threads/T-<id>.json` (`AMP_HOME`, else `XDG_DATA_HOME/amp`).

The real binary (npm `@ampcode/cli-linux-x64` 0.0.1790142911) confirms the resume command
(`amp threads continue [options] [threads...]`, its help) and the data folder (it creates
`~/.local/share/amp/device-id.json` at its first start), but every thread command asks its
server first (`threads list` is the `listThreads` call, `-x` starts with `getUserInfo`): offline
it writes no thread, so the thread files are still SYNTHETIC, in the format third-party readers
use: `id`, `title`, `messages[]` (`role`, `content[]`, `meta.sentAt` ms), `env.initial.cwd`, else
the first `env.initial.trees[].uri` (a `file://` URL). Title: `title`, else the first user text.
Last use: the newest `sentAt`, else `created`, else the file's mtime. No model, mode or branch is
known.
"""

from __future__ import annotations

import os

from sessidx.apps.base import UUID, AppPlan, ArgvBuilder, Source, document_messages, file_sources, said_in
from sessidx.model import Session
from sessidx.readers import joined_text, mtime_ms, read_document, text

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from sessidx.apps.base import CliHelp
    from sessidx.config import Env


def _folder(environment: Any) -> str | None:
    initial = environment.get("initial") if isinstance(environment, dict) else None
    if not isinstance(initial, dict):
        return None
    if cwd := text(initial.get("cwd")):
        return cwd
    trees = initial.get("trees")
    uri = text(trees[0].get("uri")) if isinstance(trees, list) and trees and isinstance(trees[0], dict) else None
    if uri and uri.startswith("file://"):
        from urllib.parse import unquote

        return unquote(uri[len("file://"):], errors="surrogateescape")
    return None


def parse_thread(path: str) -> Session | None:
    doc = read_document(path, ("id", "title"))
    if doc is None or not (tid := text(doc.get("id"))):
        return None
    messages = [m for m in doc.get("messages") or [] if isinstance(m, dict)]
    sent = [m["meta"]["sentAt"] for m in messages if isinstance(m.get("meta"), dict)
            and isinstance(m["meta"].get("sentAt"), int)]
    created = doc.get("created") if isinstance(doc.get("created"), int) else None
    updated = max(sent, default=None) or created or mtime_ms(path)
    if updated is None:
        return None
    first = next((said for m in messages if m.get("role") == "user" and (said := joined_text(m.get("content")))), None)
    return Session(app="amp", id=tid, cwd=_folder(doc.get("env")), title=text(doc.get("title")) or first,
                   mtime=updated, bytes=os.path.getsize(path), path=path)


class Amp:
    name = "amp"
    program = "amp"
    proven_on = "0.0.1790142911-g7618fb"  # the binary its help and argv were checked on (make conformance)
    help_args: tuple[str, ...] = ("threads", "continue", "--help")  # the resume command's own help
    home_vars: tuple[str, ...] = ("AMP_HOME", "XDG_DATA_HOME")
    home_dirs: tuple[str, ...] = (os.path.join(".local", "share", "amp"),)
    id_pattern = f"T-{UUID}"
    refusal_fields = ()  # its plan refuses on the CLI alone (base.App)

    def sources(self, env: Env) -> Iterable[Source]:
        home = env.get("AMP_HOME") or os.path.join(env.data_home(), "amp")
        return file_sources(os.path.join(home, "threads"), ".json", parse_thread, keep=lambda n: n.startswith("T-"))

    def conversation(self, session: Session) -> list[tuple[str, str]]:
        said = []
        for message in document_messages(session.path, "messages"):
            said += said_in(message.get("role"), message.get("content"))
        return said

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        b = ArgvBuilder(cli, self.program, "threads", "continue", session.id)
        if cli.found and cli.known and not cli.has("threads continue"):
            b.refuse(f"the installed amp cannot resume: its help has no `threads continue`. It says: {cli.said()}",
                     "cannot_resume")
        return b.plan


APP = Amp()
