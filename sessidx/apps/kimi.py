"""Kimi CLI: `~/.kimi/sessions/<md5(cwd)>/<id>/{context.jsonl,wire.jsonl,state.json}` (`KIMI_SHARE_DIR`
moves `~/.kimi`).

The folder of a session is the `kimi.json` work dir whose md5 names its parent folder. Title:
`state.custom_title` (Kimi sets it after the first turn; `/title` renames), else the first
`TurnBegin` prompt of `wire.jsonl`. Last use: the mtime of `context.jsonl`, as Kimi's own list
has it. Mode: `approval.yolo`, `approval.afk` and `plan_mode` of `state.json`, joined with `+`
(`default` when none). No model or branch is stored. Sub-agents live inside a session's
`subagents/` folder, never beside it. Archived: `state.archived` (set by `kimi web`). A session
Kimi Code's `kimi migrate` copied (still in its store) is listed there, as `kimicode`, not here.
"""

from __future__ import annotations

import os

from sessidx.apps import kimicode
from sessidx.apps.base import (
    UUID,
    AppPlan,
    ArgvBuilder,
    Source,
    json_markers,
    loose_reason,
    one,
    output_said,
    said_in,
    stamp_or_none,
    tool_words,
)
from sessidx.model import Session
from sessidx.readers import joined_text, mtime_ms, open_transcript, read_small_json, stamp, subdirs, text

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from sessidx.apps.base import CliHelp
    from sessidx.config import Env

LOOSE_FLAGS = {"yolo": "--yolo", "afk": "--afk"}  # both approve every tool; Kimi restores them itself


def _first_prompt(wire: str) -> str | None:
    t = open_transcript(wire)
    if t is None:
        return None
    with t:
        for record in t.head():
            message = record.get("message")
            if not isinstance(message, dict) or message.get("type") != "TurnBegin":
                continue
            payload = message.get("payload")
            said = joined_text(payload.get("user_input")) if isinstance(payload, dict) else ""
            if said.strip():
                return said[:50]  # Kimi's own fallback shortens it to 50 characters
    return None


def parse_session(folder: str, cwd: str | None) -> Session | None:
    state: Any = read_small_json(os.path.join(folder, "state.json"))
    state = state if isinstance(state, dict) else {}
    title = text(state.get("custom_title")) or _first_prompt(os.path.join(folder, "wire.jsonl"))
    updated = mtime_ms(os.path.join(folder, "context.jsonl"))
    if title is None or updated is None:
        return None  # an empty session: Kimi hides it too
    approval = state.get("approval")
    approval = approval if isinstance(approval, dict) else {}
    flags = [name for name in ("yolo", "afk") if approval.get(name) is True]
    if state.get("plan_mode") is True:
        flags.append("plan")
    return Session(app="kimi", id=os.path.basename(folder), cwd=cwd, title=title, mtime=updated,
                   bytes=(stamp(os.path.join(folder, "context.jsonl")) or (0, 0))[0],
                   approval="+".join(flags) or "default", path=os.path.join(folder, "context.jsonl"),
                   archived=state.get("archived") is True)


class Kimi:
    name = "kimi"
    program = "kimi"
    proven_on = "1.51.0"  # the CLI version the plans were proven on (make conformance)
    help_args: tuple[str, ...] = ("--help",)
    home_vars: tuple[str, ...] = ("KIMI_SHARE_DIR",)
    home_dirs: tuple[str, ...] = (".kimi",)
    id_pattern = UUID

    def home(self, env: Env) -> str:
        return env.path("KIMI_SHARE_DIR", ".kimi")

    def _work_dirs(self, home: str) -> dict[str, str]:
        """md5(path) -> path of every work dir in kimi.json."""
        import hashlib  # here, not at the top: it loads OpenSSL, a cost on every key press

        doc = read_small_json(os.path.join(home, "kimi.json"))
        dirs = doc.get("work_dirs") if isinstance(doc, dict) else None
        found = {}
        for entry in dirs if isinstance(dirs, list) else []:
            path = entry.get("path") if isinstance(entry, dict) else None
            if isinstance(path, str):
                digest = hashlib.md5(path.encode("utf-8", "surrogateescape"), usedforsecurity=False).hexdigest()
                kaos = entry.get("kaos")
                found[digest if kaos in (None, "local") else f"{kaos}_{digest}"] = path
        return found

    def sources(self, env: Env) -> Iterator[Source]:
        home = self.home(env)
        # kimi.json's stamp is in every session's: the folders it maps are read (and hashed)
        # only when a session is read, never on a warm key press
        # Kimi Code's index too: a session `kimi migrate` copied there is listed there, once
        index_stamp = stamp_or_none(os.path.join(home, "kimi.json")) + kimicode.index_stamp(env)
        work_dirs: dict[str, str] | None = None
        migrated: set[str] | None = None

        def load(folder: str, project: str) -> list[Session]:
            nonlocal work_dirs, migrated
            if work_dirs is None:
                work_dirs = self._work_dirs(home)
            if migrated is None:
                migrated = kimicode.migrated_ids(env)
            if os.path.basename(folder) in migrated:
                return []
            return one(parse_session(folder, work_dirs.get(project)))

        for project in subdirs(os.path.join(home, "sessions")):
            for session in subdirs(project.path):
                st = stamp(os.path.join(session.path, "context.jsonl"))
                if st is not None:
                    extra = stamp_or_none(os.path.join(session.path, "state.json")) + index_stamp
                    yield Source(session.path, st + extra, load, session.path, project.name)

    said_markers = json_markers("role", "user", "assistant", "tool")

    def said(self, record: dict[str, Any]) -> list[tuple[str, str]]:
        if record.get("role") == "tool":
            return output_said(record.get("content"))
        said = said_in(record.get("role"), record.get("content"))
        calls = record.get("tool_calls")
        if record.get("role") == "assistant" and isinstance(calls, list):
            said += [("tool", w) for c in calls if isinstance(c, dict) and isinstance(c.get("function"), dict)
                     for w in tool_words(c["function"].get("arguments"))]
        return said

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        # Kimi looks for the id only under md5(cwd): the line cd's into the folder first.
        if cli.found and cli.known and kimicode.is_kimi_code(cli):
            b = ArgvBuilder(cli, self.program)  # Kimi Code's hidden -r looks only in its own store
            b.refuse("the installed kimi is Kimi Code, which resumes only its own sessions: run `kimi migrate --run` "
                     "once (this session is then listed as kimicode), or resume it with kimi-legacy", "migrate_first")
            return b.plan
        b = ArgvBuilder(cli, self.program, "-r", session.id)
        modes = set((session.approval or "default").split("+"))
        loose = [LOOSE_FLAGS[m] for m in ("yolo", "afk") if m in modes]
        if loose and allow_permissive:
            b.safety(*loose)
        elif loose:
            for flag in loose:
                b.hold_back(flag, "", loose_reason(self.program, "ask before each tool", cli.version))
            b.refuse(f"kimi restores {' and '.join(f.lstrip('-') for f in loose)} by itself and has no flag that "
                     "turns it off: every tool would run unasked. Alt-Enter (--allow-permissive) resumes it so "
                     "for this launch", "loose_mode")
        if "plan" in modes:
            b.switch("--plan")
        return b.plan


APP = Kimi()
