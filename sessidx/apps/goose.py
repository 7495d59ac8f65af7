"""Goose: `~/.local/share/goose/sessions/sessions.db` (`GOOSE_PATH_ROOT/data`, else
`XDG_DATA_HOME/goose`).

SYNTHETIC data only (Goose could not be installed here; the schema is its own migrations).
Table `sessions`: `id` (`YYYYMMDD_N`), `name` (else `description`), `working_dir`, `updated_at`
(SQLite UTC text), `model_config_json.model_name`, `goose_mode`, `session_type`, `archived_at`.
Listed as Goose lists them: `user` and `scheduled` sessions with at least one message.

Modes: `auto` is Goose's default and its loosest; `approve`, `smart_approve` and `chat` are
stricter and are carried in `GOOSE_MODE` (Goose takes the mode from there, not from a flag).
"""

from __future__ import annotations

import os

from sessidx.apps.base import AppPlan, ArgvBuilder, Source, read_tables, rows_by_session, said_in, stamp_or_none
from sessidx.model import Session
from sessidx.readers import iso_ms, stamp, text

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterator

    from sessidx.apps.base import CliHelp
    from sessidx.config import Env

LISTED_TYPES = {"user", "scheduled"}
STRICT_MODES = {"approve", "smart_approve", "chat"}


def _model(config: object) -> str | None:
    import json

    try:
        doc = json.loads(config) if isinstance(config, str) else None
    except ValueError:
        return None
    return text(doc.get("model_name")) if isinstance(doc, dict) else None


def load_database(db: str) -> list[Session]:
    tables = read_tables(db, {
        "sessions": ["id", "name", "description", "session_type", "working_dir", "updated_at", "created_at",
                     "model_config_json", "goose_mode", "archived_at"],
        "messages": ["session_id"]})
    spoken = {m["session_id"] for m in tables["messages"]}
    sessions = []
    for row in tables["sessions"]:
        sid = text(row["id"])
        if sid is None or sid not in spoken or (row["session_type"] or "user") not in LISTED_TYPES:
            continue
        updated = _utc_ms(row["updated_at"]) or _utc_ms(row["created_at"])
        if updated is None:
            continue
        sessions.append(Session(app="goose", id=sid, cwd=text(row["working_dir"]),
                                title=text(row["name"]) or text(row["description"]), mtime=updated,
                                model=_model(row["model_config_json"]), approval=text(row["goose_mode"]), path=db,
                                archived=row["archived_at"] is not None))
    return sessions


def _utc_ms(value: object) -> int | None:
    """SQLite's `CURRENT_TIMESTAMP` text (`2026-11-30 09:40:05`, UTC) in ms."""
    return iso_ms(value.replace(" ", "T") + "Z") if isinstance(value, str) and " " in value else iso_ms(value)


class Goose:
    name = "goose"
    program = "goose"
    help_args: tuple[str, ...] = ("session", "--help")
    home_vars: tuple[str, ...] = ("GOOSE_PATH_ROOT", "XDG_DATA_HOME")
    home_dirs: tuple[str, ...] = (os.path.join(".local", "share", "goose"),)
    id_pattern = "[0-9]{8}_[0-9]+"  # <yyyymmdd>_<n>
    refusal_fields = ()  # its plan refuses on the CLI alone (base.App)

    def sources(self, env: Env) -> Iterator[Source]:
        root = env.get("GOOSE_PATH_ROOT")
        data = os.path.join(root, "data") if root else os.path.join(env.data_home(), "goose")
        db = os.path.join(data, "sessions", "sessions.db")
        st = stamp(db)
        if st is not None:
            yield Source(f"goose-db:{db}", st + stamp_or_none(db + "-wal"), load_database, db)

    def conversation(self, session: Session) -> list[tuple[str, str]]:
        import json

        said = []
        for m in rows_by_session(session.path or "", "messages", ["role", "content_json", "id"]).get(session.id, []):
            try:
                content = json.loads(m["content_json"]) if isinstance(m["content_json"], str) else None
            except ValueError:
                continue
            said += said_in(m["role"], content)
        return said

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        mode = session.approval if session.approval in STRICT_MODES else None
        # `env NAME=VALUE goose …` carries a strict mode the same way in bash, zsh and fish.
        b = ArgvBuilder(cli, *(["env", f"GOOSE_MODE={mode}"] if mode else []), self.program, "session", "--resume")
        b.safety("--session-id", session.id)
        return b.plan


APP = Goose()
