"""Crush: one database per project, `<project>/.crush/crush.db`, found through the project list
`~/.local/share/crush/projects.json` (`CRUSH_GLOBAL_DATA`, else `XDG_DATA_HOME/crush`).

SYNTHETIC data only (Crush could not be installed here; the schema is its own migrations).
`projects.json` holds `{"projects": [{"path", "data_dir"}]}`: `path` is the session's folder.
Table `sessions`: `id`, `title`, `updated_at` (Unix seconds), `parent_session_id` (title
helpers and agent-tool sub-sessions: never listed). The model is that of the newest assistant
row in `messages`. No mode (`--yolo` is not stored), branch or archive.
"""

from __future__ import annotations

import os

from sessidx.apps.base import (
    UUID,
    AppPlan,
    ArgvBuilder,
    Source,
    output_said,
    read_tables,
    rows_by_session,
    said_in,
    stamp_or_none,
    tool_words,
)
from sessidx.model import Session
from sessidx.readers import read_small_json, stamp, text

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterator

    from sessidx.apps.base import CliHelp
    from sessidx.config import Env


def load_database(db: str, cwd: str | None) -> list[Session]:
    tables = read_tables(db, {"sessions": ["id", "parent_session_id", "title", "updated_at", "created_at"],
                              "messages": ["session_id", "role", "model", "created_at"]})
    newest: dict[object, tuple[int, str]] = {}  # session id -> (created_at, model) of its newest reply
    for m in tables["messages"]:
        created = m["created_at"] if isinstance(m["created_at"], int) else 0
        model = text(m["model"]) if m["role"] == "assistant" else None
        if model and created >= newest.get(m["session_id"], (-1, ""))[0]:
            newest[m["session_id"]] = (created, model)
    sessions = []
    for row in tables["sessions"]:
        sid = text(row["id"])
        seconds = row["updated_at"] if isinstance(row["updated_at"], int) else row["created_at"]
        if sid is None or row["parent_session_id"] or not isinstance(seconds, int):
            continue
        sessions.append(Session(app="crush", id=sid, cwd=cwd, title=text(row["title"]), mtime=seconds * 1000,
                                model=newest.get(sid, (0, None))[1], path=db))
    return sessions


class Crush:
    name = "crush"
    program = "crush"
    help_args: tuple[str, ...] = ("--help",)
    home_vars: tuple[str, ...] = ("CRUSH_GLOBAL_DATA", "XDG_DATA_HOME")
    home_dirs: tuple[str, ...] = (os.path.join(".local", "share", "crush"),)
    id_pattern = UUID
    refusal_fields = ()  # its plan refuses on the CLI alone (base.App)

    def sources(self, env: Env) -> Iterator[Source]:
        folder = env.get("CRUSH_GLOBAL_DATA") or os.path.join(env.data_home(), "crush")
        doc = read_small_json(os.path.join(folder, "projects.json"))
        projects = doc.get("projects") if isinstance(doc, dict) else None
        for project in projects if isinstance(projects, list) else []:
            if not isinstance(project, dict) or not (data_dir := text(project.get("data_dir"))):
                continue
            db = os.path.join(data_dir, "crush.db")
            st = stamp(db)
            if st is not None:
                cwd = text(project.get("path"))
                yield Source(f"crush-db:{db}", st + stamp_or_none(db + "-wal") + (cwd,), load_database, db, cwd)

    def conversation(self, session: Session) -> list[tuple[str, str]]:
        import json

        said = []
        rows = rows_by_session(session.path or "", "messages", ["role", "parts", "created_at"]).get(session.id, [])
        for m in sorted(rows, key=lambda m: m["created_at"] if isinstance(m["created_at"], int) else 0):
            try:
                parts = json.loads(m["parts"]) if isinstance(m["parts"], str) else []
            except ValueError:
                continue
            for part in parts if isinstance(parts, list) else []:
                data = part.get("data") if isinstance(part, dict) else None
                if isinstance(data, dict) and part.get("type") == "text":
                    said += said_in(m["role"], data.get("text"))
                elif isinstance(data, dict) and part.get("type") == "tool_call":
                    said += [("tool", w) for w in tool_words(data.get("input"))]
                elif isinstance(data, dict) and part.get("type") == "tool_result":
                    said += output_said(data.get("content"))
        return said

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        # The database is per project: `--cwd` names it even if the line's cd were skipped.
        b = ArgvBuilder(cli, self.program)
        b.option("--cwd", session.cwd)
        b.safety("--session", session.id)
        return b.plan


APP = Crush()
