"""Qwen Code: `~/.qwen/projects/<escaped cwd>/chats/<session id>.jsonl` (`QWEN_HOME` moves `~/.qwen`).

Claude-like records, each with `sessionId`, `cwd`, `gitBranch`, `timestamp`. Title: the newest
`system` record of subtype `custom_title` (`/rename`), else the first user message. Model: the
newest `assistant` record's `model`. Last used: the newest record's `timestamp` (the file's
mtime is a few ms later). The approval mode is not stored. Sub-agents are kept elsewhere.
"""

from __future__ import annotations

import os

from sessidx.apps.base import UUID, AppPlan, ArgvBuilder, Source, json_markers, one, said_in
from sessidx.model import Session
from sessidx.readers import Record, files, iso_ms, mtime_ms, open_transcript, stamp, subdirs, text

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from sessidx.apps.base import CliHelp
    from sessidx.config import Env

UNKNOWN_BRANCHES = {"", "HEAD"}


def _parts_text(record: Record) -> str | None:
    message = record.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    for part in parts if isinstance(parts, list) else []:
        if isinstance(part, dict) and (t := text(part.get("text"))):
            return t
    return None


def parse_chat(path: str) -> Session | None:
    t = open_transcript(path)
    if t is None:
        return None
    with t:
        first_user = next((r for r in t.head() if r.get("type") == "user"), None)
        newest = next(t.newest(), None)  # any record: the last one written
        if first_user is None or newest is None:
            return None
        custom = next((p for r in t.newest("system") if r.get("subtype") == "custom_title"
                       and isinstance(p := r.get("systemPayload"), dict) and text(p.get("customTitle"))), None)
        title = text(custom.get("customTitle")) if isinstance(custom, dict) else None
        model = next((m for r in t.newest("assistant") if (m := text(r.get("model")))), None)
        cwd = text(first_user.get("cwd")) or text(newest.get("cwd"))
        branch = next((b for r in t.newest("user", "assistant") if r.get("cwd") == cwd
                       and isinstance(b := r.get("gitBranch"), str)), None)
        size = t.size
    sid = text(first_user.get("sessionId")) or os.path.basename(path)[: -len(".jsonl")]
    updated = iso_ms(newest.get("timestamp"))
    updated = updated or mtime_ms(path)
    if updated is None:
        return None
    return Session(app="qwen", id=sid, cwd=cwd, branch=None if branch in UNKNOWN_BRANCHES else branch,
                   title=title or _parts_text(first_user), mtime=updated, bytes=size, model=model, effort=None,
                   approval=None, sandbox=None, path=path, origin=None)


def _load(path: str) -> list[Session]:
    return one(parse_chat(path))


class Qwen:
    name = "qwen"
    program = "qwen"
    proven_on = "0.24.4"  # the CLI version the plans were proven on (make conformance)
    home_vars: tuple[str, ...] = ("QWEN_HOME",)
    home_dirs: tuple[str, ...] = (".qwen",)
    id_pattern = UUID
    refusal_fields = ()  # its plan refuses on the CLI alone (base.App)
    help_args: tuple[str, ...] = ("--help",)

    def sources(self, env: Env) -> Iterator[Source]:
        for project in subdirs(os.path.join(env.path("QWEN_HOME", ".qwen"), "projects")):
            for entry in files(os.path.join(project.path, "chats"), ".jsonl"):
                st = stamp(entry.path)
                if st is not None:
                    yield Source(f"qwen:{entry.path}", st, _load, entry.path)

    said_markers = json_markers("type", "user", "assistant")

    def said(self, record: dict[str, Any]) -> list[tuple[str, str]]:
        message = record.get("message")
        if record.get("type") not in ("user", "assistant") or not isinstance(message, dict):
            return []
        return said_in(record["type"], message.get("parts"))

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        b = ArgvBuilder(cli, self.program, "--resume", session.id)
        b.option("-m", session.model)
        return b.plan


APP = Qwen()
