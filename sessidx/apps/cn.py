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
from sessidx.readers import mtime_ms, read_document, read_small_json, text

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
    proven_on = "1.5.47"  # the CLI version the plans were proven on (make conformance)
    help_args: tuple[str, ...] = ("--help",)
    home_vars: tuple[str, ...] = ("CONTINUE_GLOBAL_DIR",)
    home_dirs: tuple[str, ...] = (".continue",)
    id_pattern = UUID
    refusal_fields = ()  # its plan refuses on the CLI alone (base.App)

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


def _created_ms(session: Session) -> int | None:
    """When cn made the session, from its `sessions.json` index (`dateCreated`, ms as a string):
    the time cn's picker shows and sorts by (1.5.47: the file's birth time, which the index's
    stamp is within a second of; Python on Linux cannot read a birth time)."""
    if not session.path:
        return None
    index = read_small_json(os.path.join(os.path.dirname(session.path), "sessions.json"), 16 * 1024 * 1024)
    for entry in index if isinstance(index, list) else []:
        if isinstance(entry, dict) and entry.get("sessionId") == session.id:
            created = entry.get("dateCreated")
            return int(created) if isinstance(created, str) and created.isdigit() else None
    return None


def _as_cn_shows(ms: int, now: float) -> str:
    """cn's picker's own words for a time (date-fns: today `4:39 PM`, `yesterday`, this week the
    weekday, this year `Dec 1`, else `Dec 1, 2025`)."""
    when, today = time.localtime(ms / 1000), time.localtime(now)
    days = round((time.mktime((today.tm_year, today.tm_mon, today.tm_mday, 0, 0, 0, 0, 0, -1))
                  - time.mktime((when.tm_year, when.tm_mon, when.tm_mday, 0, 0, 0, 0, 0, -1))) / 86400)
    if days == 0:
        return time.strftime("%I:%M %p", when).lstrip("0")
    if days == 1:
        return "yesterday"
    if 0 < days <= (today.tm_wday + 1) % 7:  # the same week, which starts on Sunday
        return time.strftime("%A", when)
    return time.strftime("%b %-d" if when.tm_year == today.tm_year else "%b %-d, %Y", when)


def _described(session: Session) -> str:
    """The session as cn's picker lets you find it: its title where it has one of its own, else
    its first prompt, and the time the picker shows beside it (when it was created)."""
    first = next((said for role, said in APP.conversation(session) if role == "user" and said.strip()), None)
    created = _created_ms(session)
    if created is None:
        shown = f"last used {time.strftime('%Y-%m-%d %H:%M', time.localtime(session.mtime / 1000))}"
    else:
        shown = (f"shown as {_as_cn_shows(created, time.time())!r}, created "
                 f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(created / 1000))}")
    if session.title and session.title != UNTITLED:
        return f"{session.title!r} ({shown})"
    began = f", the one that began {' '.join(first.split())[:60]!r}" if first else ""
    return f"{UNTITLED!r} {shown}{began}"


APP = Continue()
