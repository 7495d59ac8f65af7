"""Kiro CLI (`kiro-cli`) and its predecessor Amazon Q Developer CLI (`q`).

SYNTHETIC data only: neither installs from npm or PyPI. Amazon Q's format is from its public
source (aws/amazon-q-developer-cli at 15cc8f3, read 2026-12-01): `$XDG_DATA_HOME/amazon-q/
data.sqlite3`, table `conversations(key, value)`, the key the **absolute folder**, the value
the JSON of its `ConversationState` (`conversation_id`, `history[]` of `{user: {content:
{Prompt: {prompt}}}, assistant: {...}}`, `transcript[]`, `model_info.model_id`). One
conversation per folder, and no time of its own: last use is the database's mtime. It is
resumed with `cd <folder> && q chat --resume`, which takes the folder's conversation.

Kiro's stores are from the source of `kiro-cli-history` 0.4.1 (PyPI, MIT), the one maintained
reader of them, which reads four, newest format first, one session per id:
- 3.0: `~/.kiro/sessions/<hash>/sess_*/session.json` (`id`, `title`, `workspacePaths[0]`,
  `lastModifiedAt`) beside `messages.jsonl` (`{payload: {type: user|assistant, content}}`);
- 2.x classic: `~/.kiro/sessions/cli/<id>.json` (`session_id`, `cwd`, `title`, `updated_at`)
  beside `<id>.jsonl` (`{kind: Prompt|AssistantMessage, data: {content: [{kind: text, data}]}}`);
- 2.x: `$XDG_DATA_HOME/kiro-cli/data.sqlite3` `conversations_v2(key = folder, conversation_id,
  value, created_at, updated_at)` (ms);
- 1.x: the same database's `conversations(key, value)`, as Amazon Q's.
Each is resumed with `kiro-cli chat --resume-id <id>`, as that reader does.

Both databases also hold the CLI's credentials (table `auth_kv`). So they are never copied
(the private snapshot other stores get would copy the tokens too): only the conversation
tables are read, in place, read-only (`mode=ro`; both CLIs use SQLite's rollback journal).
Neither CLI records a permission mode (`--trust-all-tools` is a flag of one launch), so none
can be restored.
"""

from __future__ import annotations

import os

from sessidx.apps.base import AppPlan, ArgvBuilder, Source, SourceError, report, said_in, stamp_or_none
from sessidx.model import Session
from sessidx.readers import (
    files,
    iso_ms,
    json_value,
    mtime_ms,
    open_regular,
    parse_record,
    read_small_json,
    subdirs,
    text,
)

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from sessidx.apps.base import CliHelp
    from sessidx.config import Env

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
DOCUMENT_CAP = 64 * 1024 * 1024


def read_in_place(db: str, table: str, columns: list[str]) -> list[dict[str, Any]]:
    """Rows of one table, read-only in place: for a store that also holds credentials."""
    import sqlite3

    from sessidx.sqlite_snapshot import select_present

    try:
        conn = sqlite3.connect(f"file:{os.path.abspath(db)}?mode=ro", uri=True, timeout=0.5)
    except sqlite3.Error as exc:
        raise SourceError(f"{db}: cannot be opened ({exc})") from None
    conn.text_factory = lambda b: b.decode("utf-8", "surrogateescape")
    try:
        return list(select_present(conn, table, columns))
    except Exception as exc:  # StoreError, sqlite3.Error: a locked, damaged or foreign store
        raise SourceError(f"{db}: {exc}") from None
    finally:
        conn.close()


def _history_said(history: Any) -> list[tuple[str, str]]:
    said: list[tuple[str, str]] = []
    for entry in history if isinstance(history, list) else []:
        if not isinstance(entry, dict):
            continue
        user = entry.get("user")
        content = user.get("content") if isinstance(user, dict) else None
        prompt = content.get("Prompt") if isinstance(content, dict) else None
        if isinstance(prompt, dict):
            said += said_in("user", prompt.get("prompt"))
        said += [("assistant", t) for t in _reply_texts(entry.get("assistant"))]
    return said


def _reply_texts(assistant: Any) -> list[str]:
    """A reply's text in each shape the CLIs wrote: `{content: {Text}}`, `{Response: {content}}`,
    `{ToolUse: {content}}`."""
    if not isinstance(assistant, dict):
        return []
    content = assistant.get("content")
    if isinstance(content, dict) and text(content.get("Text")):
        return [content["Text"]]
    for shape in ("Response", "ToolUse"):
        inner = assistant.get(shape)
        if isinstance(inner, dict) and text(inner.get("content")):
            return [inner["content"]]
    return []


def _state(value: Any) -> dict[str, Any]:
    doc = json_value(value) if isinstance(value, (str, bytes)) else None
    return doc if isinstance(doc, dict) else {}


def _model(state: dict[str, Any]) -> str | None:
    info = state.get("model_info")
    return (text(info.get("model_id")) if isinstance(info, dict) else None) or text(state.get("model"))


def _first_prompt(said: list[tuple[str, str]]) -> str | None:
    return next((t for role, t in said if role == "user"), None)


def conversation_session(app: str, cwd: Any, state: dict[str, Any], mtime: int, db: str,
                         sid: Any = None) -> Session | None:
    sid = text(sid) or text(state.get("conversation_id"))
    if sid is None or not isinstance(cwd, str):
        return None
    return Session(app=app, id=sid, cwd=cwd, title=_first_prompt(_history_said(state.get("history"))),
                   mtime=mtime, model=_model(state), path=db)


# --- Amazon Q ------------------------------------------------------------------------------

def load_q(db: str) -> list[Session]:
    mtime = os.stat(db).st_mtime_ns // 1_000_000
    rows = read_in_place(db, "conversations", ["key", "value"])
    return [s for r in rows if (s := conversation_session("q", r["key"], _state(r["value"]), mtime, db))]


def _q_row(db: str, session: Session) -> dict[str, Any]:
    rows = read_in_place(db, "conversations", ["key", "value"])
    return next((_state(r["value"]) for r in rows if r["key"] == session.cwd), {})


class AmazonQ:
    name = "q"
    program = "q"
    help_args: tuple[str, ...] = ("chat", "--help")
    home_vars: tuple[str, ...] = ("XDG_DATA_HOME",)
    home_dirs: tuple[str, ...] = (os.path.join(".local", "share", "amazon-q"),)
    id_pattern = UUID
    refusal_fields = ()  # its plan refuses on the CLI alone (base.App)

    def sources(self, env: Env) -> Iterator[Source]:
        db = os.path.join(env.data_home(), "amazon-q", "data.sqlite3")
        st = stamp_or_none(db)
        if st[0] is not None:
            yield Source(f"q-db:{db}", st + stamp_or_none(db + "-journal"), load_q, db)

    def conversation(self, session: Session) -> list[tuple[str, str]]:
        return _history_said(_q_row(session.path or "", session).get("history"))

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        # `--resume` is a switch: it takes the conversation of the folder it runs in, this one.
        b = ArgvBuilder(cli, self.program, "chat", "--resume")
        b.option("--model", session.model)
        b.plan.warnings.append("q keeps one conversation per folder: a new chat started here replaced any older one")
        return b.plan


# --- Kiro ----------------------------------------------------------------------------------

def _jsonl_said(path: str, parse: Any) -> list[tuple[str, str]]:
    f = open_regular(path)
    if f is None:
        return []
    said: list[tuple[str, str]] = []
    with f:
        for line in f.readlines(DOCUMENT_CAP):
            record = parse_record(line)
            if record is not None:
                said += parse(record)
    return said


def _v3_said(record: dict[str, Any]) -> list[tuple[str, str]]:
    payload = record.get("payload")
    if isinstance(payload, dict) and payload.get("type") in ("user", "assistant"):
        return said_in(payload["type"], payload.get("content"))
    return []


def _v2_said(record: dict[str, Any]) -> list[tuple[str, str]]:
    role = {"Prompt": "user", "AssistantMessage": "assistant"}.get(record.get("kind"))  # type: ignore[arg-type]
    data = record.get("data")
    content = data.get("content") if isinstance(data, dict) else None
    if role is None or not isinstance(content, list):
        return []
    return said_in(role, [{"type": "text", "text": p["data"]} for p in content
                          if isinstance(p, dict) and p.get("kind") == "text" and isinstance(p.get("data"), str)])


def load_v3(meta_path: str) -> list[Session]:
    meta = read_small_json(meta_path)
    if not isinstance(meta, dict) or not (sid := text(meta.get("id"))):
        return []
    paths = meta.get("workspacePaths")
    cwd = text(paths[0]) if isinstance(paths, list) and paths else None
    messages = os.path.join(os.path.dirname(meta_path), "messages.jsonl")
    mtime = iso_ms(meta.get("lastModifiedAt")) or iso_ms(meta.get("createdAt")) or mtime_ms(meta_path) or 0
    title = text(meta.get("title")) or _first_prompt(_jsonl_said(messages, _v3_said))
    return [Session(app="kiro", id=sid, cwd=cwd, title=title, mtime=mtime, path=messages)]


def load_v2(meta_path: str) -> list[Session]:
    meta = read_small_json(meta_path)
    if not isinstance(meta, dict) or not (sid := text(meta.get("session_id"))):
        return []
    transcript = meta_path[: -len(".json")] + ".jsonl"
    mtime = iso_ms(meta.get("updated_at")) or iso_ms(meta.get("created_at")) or mtime_ms(meta_path) or 0
    title = text(meta.get("title")) or _first_prompt(_jsonl_said(transcript, _v2_said))
    return [Session(app="kiro", id=sid, cwd=text(meta.get("cwd")), title=title, mtime=mtime, path=transcript)]


def load_kiro_db(db: str) -> list[Session]:
    mtime = os.stat(db).st_mtime_ns // 1_000_000
    sessions = []
    try:
        rows = read_in_place(db, "conversations_v2", ["key", "conversation_id", "value", "updated_at", "created_at"])
    except SourceError:
        rows = []  # a 1.x database: only the older table
    for r in rows:
        when = r["updated_at"] if isinstance(r["updated_at"], int) else r["created_at"]
        s = conversation_session("kiro", r["key"], _state(r["value"]), when if isinstance(when, int) else mtime, db,
                                 r["conversation_id"])
        if s is not None:
            sessions.append(s)
    try:
        legacy = read_in_place(db, "conversations", ["key", "value"])
    except SourceError:
        legacy = []
    sessions += [s for r in legacy if (s := conversation_session("kiro", r["key"], _state(r["value"]), mtime, db))]
    return sessions


_LOADERS = {"v3": load_v3, "v2": load_v2, "db": load_kiro_db}


def load_kiro(found: tuple[tuple[str, str], ...]) -> list[Session]:
    sessions: dict[str, Session] = {}
    for kind, path in found:
        try:
            loaded = _LOADERS[kind](path)
        except (SourceError, OSError) as exc:
            report(f"{path}: skipped: {exc}")
            continue
        for s in loaded:
            sessions.setdefault(s.id, s)
    return list(sessions.values())


class Kiro:
    name = "kiro"
    program = "kiro-cli"
    help_args: tuple[str, ...] = ("chat", "--help")
    home_vars: tuple[str, ...] = ("XDG_DATA_HOME",)
    home_dirs: tuple[str, ...] = (".kiro", os.path.join(".local", "share", "kiro-cli"))
    # 3.0 names its sessions `sess_…`; the others are UUIDs
    id_pattern = rf"{UUID}|sess_[A-Za-z0-9][A-Za-z0-9_-]{{3,63}}"
    refusal_fields = ()  # its plan refuses on the CLI alone (base.App)

    def sources(self, env: Env) -> Iterator[Source]:
        # One source for every store: a session may be in more than one (2.x wrote both its
        # files and the database), and is listed once, from the newest format.
        found: list[tuple[str, str]] = []
        stamps: tuple[Any, ...] = ()
        for workspace in subdirs(os.path.join(env.home, ".kiro", "sessions")):
            if workspace.name == "cli":
                for entry in files(workspace.path, ".json"):
                    found.append(("v2", entry.path))
                    stamps += stamp_or_none(entry.path) + stamp_or_none(entry.path[: -len(".json")] + ".jsonl")
                continue
            for folder in subdirs(workspace.path):
                meta = os.path.join(folder.path, "session.json")
                if folder.name.startswith("sess_") and stamp_or_none(meta)[0] is not None:
                    found.append(("v3", meta))
                    stamps += stamp_or_none(meta) + stamp_or_none(os.path.join(folder.path, "messages.jsonl"))
        db = os.path.join(env.data_home(), "kiro-cli", "data.sqlite3")
        if stamp_or_none(db)[0] is not None:
            found.append(("db", db))
            stamps += stamp_or_none(db) + stamp_or_none(db + "-journal")
        if found:
            found.sort(key=lambda kind_path: ("v3", "v2", "db").index(kind_path[0]))
            yield Source(f"kiro:{env.home}", stamps, load_kiro, tuple(found))

    def conversation(self, session: Session) -> list[tuple[str, str]]:
        path = session.path or ""
        if path.endswith("messages.jsonl"):
            return _jsonl_said(path, _v3_said)
        if path.endswith(".jsonl"):
            return _jsonl_said(path, _v2_said)
        for table, id_column in (("conversations_v2", "conversation_id"), ("conversations", None)):
            try:
                rows = read_in_place(path, table, ["key", "value", *([id_column] if id_column else [])])
            except SourceError:
                continue
            for r in rows:
                state = _state(r["value"])
                if (r.get(id_column) if id_column else state.get("conversation_id")) == session.id:
                    return _history_said(state.get("history"))
        return []

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        b = ArgvBuilder(cli, self.program, "chat", "--resume-id", session.id)
        b.option("--model", session.model)
        return b.plan


KIRO = Kiro()
AMAZON_Q = AmazonQ()
