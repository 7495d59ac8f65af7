"""Continue CLI `cn`: `~/.continue/sessions/<id>.json` (`CONTINUE_GLOBAL_DIR` moves `~/.continue`).

One JSON document per session: `sessionId`, `title` ("Untitled Session" for `-p` runs),
`workspaceDirectory`, `history[]` (the model is `usage.model` of the newest assistant
message). Last use: the file's mtime, which is also what `cn --resume` goes by. No branch or
mode is stored; sub-agents run in memory only.

cn cannot resume a session by id: `cn --resume` takes the newest session file of any folder.
So Enter opens cn's own picker (`cn ls`) in the session's folder, and the preview names the
session to choose there: never a resume of a different session.
"""

from __future__ import annotations

import os
import time

from sessidx.apps.base import UUID, AppPlan, ArgvBuilder, Source, document_messages, file_sources, said_in
from sessidx.model import Session
from sessidx.readers import mtime_ms, read_document, text

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterable

    from sessidx.apps.base import CliHelp
    from sessidx.config import Env


def _model(history: object) -> str | None:
    for item in reversed(history) if isinstance(history, list) else []:
        message = item.get("message") if isinstance(item, dict) else None
        if isinstance(message, dict) and message.get("role") == "assistant":
            usage = message.get("usage")
            if isinstance(usage, dict) and (model := text(usage.get("model"))):
                return model
    return None


def parse_session(path: str) -> Session | None:
    doc = read_document(path, ("sessionId", "title", "workspaceDirectory"))
    if doc is None or not (sid := text(doc.get("sessionId"))):
        return None
    updated = mtime_ms(path)
    if updated is None:
        return None
    return Session(app="cn", id=sid, cwd=text(doc.get("workspaceDirectory")), title=text(doc.get("title")),
                   mtime=updated, bytes=os.path.getsize(path), model=_model(doc.get("history")), path=path)


class Continue:
    name = "cn"
    program = "cn"
    help_args: tuple[str, ...] = ("--help",)
    home_vars: tuple[str, ...] = ("CONTINUE_GLOBAL_DIR",)
    home_dirs: tuple[str, ...] = (".continue",)
    id_pattern = UUID

    def sources(self, env: Env) -> Iterable[Source]:
        folder = os.path.join(env.path("CONTINUE_GLOBAL_DIR", ".continue"), "sessions")
        return file_sources(folder, ".json", parse_session, keep=lambda name: name != "sessions.json")  # the index

    def conversation(self, session: Session) -> list[tuple[str, str]]:
        said = []
        for item in document_messages(session.path, "history"):
            message = item.get("message")
            if isinstance(message, dict):
                said += said_in(message.get("role"), message.get("content"))
        return said

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        b = ArgvBuilder(cli, self.program, "ls")
        b.plan.warnings.append(f"cn cannot resume a session by id (`cn --resume` takes the newest of any folder): "
                               f"its picker opens here; choose {_described(session)}")
        onboarded = os.path.join(env.path("CONTINUE_GLOBAL_DIR", ".continue"), ".onboarding_complete")
        if not os.path.exists(onboarded):
            b.plan.warnings.append(f"cn first asks you to log in or pick a config (its onboarding): {onboarded} "
                                   "is missing")
        return b.plan


UNTITLED = "Untitled Session"  # what cn's picker shows for every `-p` session


def _described(session: Session) -> str:
    """The session as cn's picker lets you find it: its title where it has one of its own, else
    its first prompt, and when it was last used."""
    first = next((said for role, said in APP.conversation(session) if role == "user" and said.strip()), None)
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(session.mtime / 1000))
    if session.title and session.title != UNTITLED:
        return f"{session.title!r} (last used {when})"
    began = f", the one that began {' '.join(first.split())[:60]!r}" if first else ""
    return f"{UNTITLED!r} last used {when}{began}"


APP = Continue()
