"""opencode and its fork Kilo: `~/.local/share/opencode/opencode.db` (`kilo/kilo.db`), table
`session`; older builds kept `storage/session/<project>/<id>.json`. `XDG_DATA_HOME` moves
`~/.local/share` (`SESSIDX_HOME` wins over it, as it points every app at one home).

Read through a private copy with its WAL. Title: `title`. Model: the `model` JSON as
`providerID/id` (the `-m` form). Mode: `agent` (`build`/`plan`) of the latest run. Child
sessions (`parent_id`) are skipped; `time_archived` marks archived ones. No branch is stored.
opencode records the folder from `$PWD`, which the shell's `cd` sets right.
"""

from __future__ import annotations

import os

from sessidx.apps.base import (
    AppPlan,
    ArgvBuilder,
    Source,
    output_said,
    read_table,
    rows_by_session,
    said_in,
    stamp_or_none,
    tool_words,
)
from sessidx.model import Session
from sessidx.readers import files, read_small_json, stamp, subdirs, text

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from sessidx.apps.base import CliHelp
    from sessidx.config import Env

BUILT_IN_AGENTS = {"build", "plan", "code", "ask", "debug", "orchestrator", "architect"}
DEFAULT_AGENTS = {"build", "code"}  # what a resume opens in anyway: not passed
COLUMNS = ["id", "directory", "title", "model", "agent", "parent_id", "time_created", "time_updated",
           "time_archived"]


def model_name(value: Any) -> str | None:
    """`{"id": "mock-large", "providerID": "mock"}` -> `mock/mock-large`."""
    if isinstance(value, str):
        import json

        try:
            value = json.loads(value)
        except ValueError:
            return text(value)
    if isinstance(value, dict) and (model := text(value.get("id") or value.get("modelID"))):
        provider = text(value.get("providerID"))
        return f"{provider}/{model}" if provider else model
    return None


def _json(value: Any) -> dict[str, Any]:
    import json

    try:
        found = json.loads(value) if isinstance(value, str) else None
    except ValueError:
        found = None
    return found if isinstance(found, dict) else {}


def _ms(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class OpenCode:
    help_args: tuple[str, ...] = ("--help",)
    home_vars: tuple[str, ...] = ("XDG_DATA_HOME",)
    refusal_fields = ()  # its plan refuses on the CLI alone (base.App)

    def __init__(self, name: str, folder: str, database: str, proven_on: str) -> None:
        self.name = name
        self.program = name
        self.proven_on = proven_on  # the CLI version the plans were proven on (make conformance)
        self.folder = folder
        self.database = database
        self.home_dirs: tuple[str, ...] = (os.path.join(".local", "share", folder),)
        self.id_pattern = "ses_[0-9A-Za-z]+"  # ses_<12 hex of time><14 base62>

    def _session(self, sid: str, row: dict[str, Any], path: str | None) -> Session:
        return Session(
            app=self.name, id=sid, cwd=text(row.get("directory")), branch=None, title=text(row.get("title")),
            mtime=_ms(row.get("time_updated")) or _ms(row.get("time_created")) or 0, bytes=None,
            model=model_name(row.get("model")), effort=None, approval=text(row.get("agent")), sandbox=None,
            path=path, archived=row.get("time_archived") is not None, origin=None,
        )

    def load_database(self, db: str) -> list[Session]:
        rows = read_table(db, "session", COLUMNS)
        return [self._session(sid, row, db) for row in rows
                if (sid := text(row["id"])) and not row["parent_id"]]

    def load_json(self, path: str) -> list[Session]:
        """One session of the older file storage (`time` and `parentID` nested the JSON way)."""
        doc = read_small_json(path)
        if not isinstance(doc, dict) or not (sid := text(doc.get("id"))) or doc.get("parentID"):
            return []
        times = doc.get("time")
        times = times if isinstance(times, dict) else {}
        row = {"directory": doc.get("directory"), "title": doc.get("title"), "model": doc.get("model"),
               "agent": doc.get("agent"), "time_updated": times.get("updated"),
               "time_created": times.get("created"), "time_archived": times.get("archived")}
        return [self._session(sid, row, path)]

    def sources(self, env: Env) -> Iterator[Source]:
        home = os.path.join(env.data_home(), self.folder)
        db = os.path.join(home, self.database)
        st = stamp(db)
        if st is not None:
            yield Source(f"{self.name}-db:{db}", st + stamp_or_none(db + "-wal"), self.load_database, db)
            return
        for project in subdirs(os.path.join(home, "storage", "session")):
            for entry in files(project.path, ".json"):
                path = entry.path
                if (st := stamp(path)) is not None:
                    yield Source(f"{self.name}:{path}", st, self.load_json, path)

    def conversation(self, session: Session) -> list[tuple[str, str]]:
        if not session.path or not session.path.endswith(".db"):
            return []  # the old JSON layout keeps no message text beside the session
        messages = rows_by_session(session.path, "message", ["id", "time_created", "data"]).get(session.id, [])
        parts = rows_by_session(session.path, "part", ["message_id", "id", "data"], "session_id").get(session.id, [])
        by_message: dict[Any, list[Any]] = {}
        for part in parts:
            by_message.setdefault(part["message_id"], []).append(_json(part["data"]))
        said = []
        for m in sorted(messages, key=lambda m: m["time_created"] if isinstance(m["time_created"], int) else 0):
            role = _json(m["data"]).get("role")
            for part in by_message.get(m["id"], []):
                if part.get("type") == "text":
                    said += said_in(role, part.get("text"))
                elif part.get("type") == "tool" and isinstance(part.get("state"), dict):
                    state = part["state"]  # `output` once completed, `error` once failed
                    said += [("tool", w) for w in tool_words(state.get("input"))]
                    said += output_said([state.get("output"), state.get("error")])
        return said

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        b = ArgvBuilder(cli, self.program, "--session", session.id)
        b.option("-m", session.model)
        # Kilo 7.7.9 opens a recorded Plan session in Code unless told `--agent plan`. A custom
        # agent may grant any permission: only the built-in ones are carried.
        agent = session.approval
        if agent in BUILT_IN_AGENTS - DEFAULT_AGENTS and cli.has("--agent"):
            b.option("--agent", agent)
        elif agent is not None and agent not in BUILT_IN_AGENTS:
            b.plan.warnings.append(f"the recorded agent {agent!r} is not a built-in one, so it is not carried "
                                   f"(its permissions are its own): {self.program} opens in its default agent")
        return b.plan


APP = OpenCode("opencode", "opencode", "opencode.db", "1.18.33")
KILO = OpenCode("kilo", "kilo", "kilo.db", "7.7.9")
