"""Hermes Agent: `~/.hermes/state.db` (`HERMES_HOME` moves `~/.hermes`), tables `sessions` and
`messages`, read through a private copy with its WAL (see sqlite_snapshot).

Listed as `hermes sessions list` lists them (hermes_state.py 0.19.0): roots and `/branch`
children; sub-agent runs (`_delegate_from`) and compression continuations are hidden, and a
root ended by compression shows its continuation's tip (id, title, model, folder, last use).
Title: `sessions.title`, else the first user message cut to 60 characters as Hermes' preview
is. Last use: the newest `messages.timestamp`, else `started_at`. Effort:
`model_config.reasoning_config.effort`. Archived: `sessions.archived`. No branch is written
by the classic CLI, and no mode is stored per session (`--yolo` lives in the process only),
so none can be carried or held back.
"""

from __future__ import annotations

import os

from sessidx.apps.base import AppPlan, ArgvBuilder, Source, SourceError, report, rows_by_session, said_in, stamp_or_none
from sessidx.model import Session
from sessidx.readers import json_value, stamp, text

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from sessidx.apps.base import CliHelp
    from sessidx.config import Env

# `YYYYMMDD_HHMMSS_<6 hex>` (CLI; gateway sessions 8 hex), cron runs `cron_<job>_<time>`
ID_PATTERN = r"\d{8}_\d{6}_[0-9a-f]{6,8}|cron_[0-9A-Za-z]+_\d{8}_\d{6}"
COLUMNS = ["id", "source", "model", "model_config", "parent_session_id", "started_at", "ended_at", "end_reason",
           "cwd", "git_branch", "title", "archived"]
PREVIEW = 60
_PER_SESSION = """
    SELECT s.id, (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id),
        (SELECT SUBSTR(REPLACE(REPLACE(m.content, X'0A', ' '), X'0D', ' '), 1, 63) FROM messages m
         WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL ORDER BY m.timestamp, m.id LIMIT 1)
    FROM sessions s"""


def _read(db: str) -> tuple[list[dict[str, Any]], dict[Any, tuple[Any, Any]]]:
    import sqlite3

    from sessidx.sqlite_snapshot import StoreError, select_present, snapshot

    notes: list[str] = []
    try:
        with snapshot(db, notes) as conn:
            rows = list(select_present(conn, "sessions", COLUMNS))
            try:
                spoken = {sid: (last, first) for sid, last, first in conn.execute(_PER_SESSION)}
            except sqlite3.Error as exc:
                raise StoreError(f"reading 'messages': {exc}") from None
            return rows, spoken
    except StoreError as exc:
        raise SourceError(str(exc)) from None
    finally:
        for note in notes:
            report(note)


def _config(row: dict[str, Any]) -> dict[str, Any]:
    value = json_value(row["model_config"]) if isinstance(row["model_config"], str) else None
    return value if isinstance(value, dict) else {}


def _is_branch(row: dict[str, Any], by_id: dict[Any, dict[str, Any]]) -> bool:
    if "_branched_from" in _config(row):
        return True
    parent = by_id.get(row["parent_session_id"])
    return bool(parent and parent["end_reason"] == "branched" and isinstance(row["started_at"], (int, float))
                and isinstance(parent["ended_at"], (int, float)) and row["started_at"] >= parent["ended_at"])


def _tip(row: dict[str, Any], children: dict[Any, list[dict[str, Any]]], last: dict[Any, float]) -> dict[str, Any]:
    """The live end of a compression chain, as `get_compression_tip` walks it."""
    seen = {row["id"]}
    while row["end_reason"] == "compression":
        candidates = [c for c in children.get(row["id"], []) if c["id"] not in seen and c["source"] != "tool"
                      and not ({"_branched_from", "_delegate_from"} & _config(c).keys())]
        if not candidates:
            break
        row = min(candidates, key=lambda c: (0 if c["end_reason"] == "compression" else 1 if c["ended_at"] is None
                                             else 2, -(last.get(c["id"]) or 0)))
        seen.add(row["id"])
    return row


def load_sessions(db: str) -> list[Session]:

    rows, spoken = _read(db)
    by_id = {row["id"]: row for row in rows}
    children: dict[Any, list[dict[str, Any]]] = {}
    for row in rows:
        children.setdefault(row["parent_session_id"], []).append(row)
    last = {sid: (v[0] if isinstance(v[0], (int, float)) else by_id[sid]["started_at"]) for sid, v in spoken.items()
            if sid in by_id}
    sessions = []
    for root in rows:
        if text(root["id"]) is None or "_delegate_from" in _config(root):
            continue
        if root["parent_session_id"] is not None and not _is_branch(root, by_id):
            continue  # a sub-agent run or a compression continuation
        row = _tip(root, children, last)
        sid = row["id"]
        if not isinstance(sid, str):
            continue  # (an id of another form is skipped by the core, with a note)
        first = text(spoken.get(sid, (None, None))[1])
        preview = first.strip()[:PREVIEW] + ("..." if len(first.strip()) > PREVIEW else "") if first else None
        effort = _config(row).get("reasoning_config")
        updated = last.get(sid)
        sessions.append(Session(
            app="hermes", id=sid, cwd=text(row["cwd"]), branch=text(row["git_branch"]),
            title=text(row["title"]) or preview, mtime=int(updated * 1000) if isinstance(updated, (int, float)) else 0,
            model=text(row["model"]), effort=text(effort.get("effort")) if isinstance(effort, dict) else None,
            path=db, archived=root["archived"] in (1, True), origin=text(row["source"])))
    return sessions


class Hermes:
    name = "hermes"
    program = "hermes"
    proven_on = "0.19.0"  # the CLI version the plans were proven on (make conformance)
    help_args: tuple[str, ...] = ("--help",)
    home_vars: tuple[str, ...] = ("HERMES_HOME",)
    home_dirs: tuple[str, ...] = (".hermes",)
    id_pattern = ID_PATTERN
    refusal_fields = ()  # its plan refuses on the CLI alone (base.App)

    def sources(self, env: Env) -> Iterator[Source]:
        db = os.path.join(env.path("HERMES_HOME", ".hermes"), "state.db")
        st = stamp(db)
        if st is not None:
            yield Source(f"hermes-db:{db}", st + stamp_or_none(db + "-wal"), load_sessions, db)

    def conversation(self, session: Session) -> list[tuple[str, str]]:
        said = []
        messages = rows_by_session(session.path or "", "messages", ["role", "content", "id", "active"])
        for m in messages.get(session.id, []):
            if m["active"] in (0, False):
                continue  # rewound out of the conversation
            said += said_in(m["role"], m["content"])
        return said

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        # 0.19.0's `--resume` runs the config's default model, not the session's (make conformance
        # saw `mock-hermes` asked for a `mock-hermes-large` session), so the model is carried with
        # `-m`. It cd's into the recorded folder itself (sessidx has already). Approval is global
        # config (`approvals.mode`), never per session.
        b = ArgvBuilder(cli, self.program, "--resume", session.id)
        b.option("-m", session.model)
        return b.plan


APP = Hermes()
