"""Cline CLI: `~/.cline/data/db/sessions.db`, table `sessions` (`CLINE_DIR` moves `~/.cline`,
`CLINE_DATA_DIR` moves `~/.cline/data`).

Read through a private copy with its WAL (see sqlite_snapshot). Title: `metadata_json.title`,
else the prompt with its `<user_input mode="...">` wrapper removed. Branch:
`metadata_json.git.branch` (a bare commit hash means a detached HEAD: no branch). The mode
(`act`/`plan`) is read from the `<user_input mode="...">` of the first user message in
`sessions/<id>/<id>.messages.json`, else `metadata_json.mode`. Sub-agents are skipped. A
session run through Cline's hub daemon keeps `metadata.autoApproveTools: false` in its
manifest when started with `--auto-approve false` (or `-p`); a resume passes it on.
"""

from __future__ import annotations

import os

from sessidx.apps.base import AppPlan, ArgvBuilder, Source, document_messages, read_table, said_in, stamp_or_none
from sessidx.model import Session
from sessidx.readers import iso_ms, read_prefix, stamp, text

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from sessidx.apps.base import CliHelp
    from sessidx.config import Env

COLUMNS = ["session_id", "cwd", "workspace_root", "model", "prompt", "metadata_json", "messages_path",
           "updated_at", "ended_at", "started_at", "is_subagent", "parent_session_id"]
_MODE = rb'<user_input mode=\\?"([A-Za-z_-]+)\\?"'
_WRAPPER = r'^\s*<user_input mode="[^"]*">(.*)</user_input>\s*$'
_SHA = r"[0-9a-f]{7,40}"


def _unwrapped(said: str) -> str:
    import re

    found = re.match(_WRAPPER, said, re.S)
    return found.group(1) if found else said


def _first_mode(path: str) -> str | None:
    """The mode of the first user message, from the first 64 KiB of the messages file."""
    import re

    m = re.search(_MODE, read_prefix(path, 64 * 1024) or b"")
    return m.group(1).decode("ascii") if m else None


def _metadata(value: Any) -> dict[str, Any]:
    import json

    try:
        doc = json.loads(value) if isinstance(value, str) else None
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}


def load_sessions(db: str, data: str) -> list[Session]:
    import re

    rows = read_table(db, "sessions", COLUMNS)
    sessions = []
    for row in rows:
        sid = text(row["session_id"])
        if sid is None or row["is_subagent"] in (1, "1", True) or row["parent_session_id"]:
            continue
        meta = _metadata(row["metadata_json"])
        git = meta.get("git")
        branch = text(git.get("branch")) if isinstance(git, dict) else None
        if branch and re.fullmatch(_SHA, branch):
            branch = None
        prompt = text(row["prompt"])
        if prompt and (m := re.match(_WRAPPER, prompt, re.S)):
            prompt = m.group(1)
        messages = os.path.join(data, "sessions", sid, f"{sid}.messages.json")  # recorded paths may be stale
        updated = iso_ms(row["updated_at"]) or iso_ms(row["ended_at"]) or iso_ms(row["started_at"]) or 0
        sessions.append(Session(
            app="cline", id=sid, cwd=text(row["cwd"]) or text(row["workspace_root"]), branch=branch,
            title=text(meta.get("title")) or prompt, mtime=updated, bytes=None, model=text(row["model"]),
            effort=None, approval=_first_mode(messages) or text(meta.get("mode")), sandbox=None,
            path=messages, origin=None,
        ))
    return sessions


def _asks_before_tools(session: Session) -> bool:
    """The session was started with `--auto-approve false`: its manifest (`<id>.json`, beside
    the messages file) keeps `metadata.autoApproveTools: false`. A resume does not restore it."""
    from sessidx.readers import read_small_json

    if not session.path:
        return False
    manifest = read_small_json(os.path.join(os.path.dirname(session.path), f"{session.id}.json"))
    meta = manifest.get("metadata") if isinstance(manifest, dict) else None
    return isinstance(meta, dict) and meta.get("autoApproveTools") is False


class Cline:
    name = "cline"
    program = "cline"
    proven_on = "3.0.65"  # the CLI version the plans were proven on (make conformance)
    home_vars: tuple[str, ...] = ("CLINE_DIR", "CLINE_DATA_DIR")
    home_dirs: tuple[str, ...] = (".cline",)
    id_pattern = "[0-9]+(?:_[0-9A-Za-z]+)?"  # <ms>_<base36>; tasks of older builds are <ms>
    refusal_fields = ()  # its plan refuses on the CLI alone (base.App)
    help_args: tuple[str, ...] = ("--help",)

    def sources(self, env: Env) -> Iterator[Source]:
        data = env.get("CLINE_DATA_DIR") or os.path.join(env.path("CLINE_DIR", ".cline"), "data")
        db = os.path.join(data, "db", "sessions.db")
        st = stamp(db)
        if st is not None:
            yield Source(f"cline-db:{db}", st + stamp_or_none(db + "-wal"), load_sessions, db, data)

    def conversation(self, session: Session) -> list[tuple[str, str]]:
        said = []
        for m in document_messages(session.path, "messages"):
            content = m.get("content")
            if isinstance(content, list):  # the prompt inside Cline's `<user_input mode=...>`
                content = [{**p, "text": _unwrapped(p["text"])} if isinstance(p, dict) and isinstance(
                    p.get("text"), str) else p for p in content]
            said += said_in(m.get("role"), content)
        return said

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        # `cline --id ID` alone opens in Act, auto-approving every tool, on the global default
        # model (3.0.65): Plan mode, a recorded `--auto-approve false` (both stricter than
        # the default) and the model are passed.
        b = ArgvBuilder(cli, self.program, "--id", session.id)
        if session.approval == "plan":
            b.switch("-p")
        if _asks_before_tools(session):
            b.option("--auto-approve", "false")
        b.option("-m", session.model)
        return b.plan


APP = Cline()
