"""Cursor CLI (`cursor-agent`): `~/.cursor/chats/<md5 of the cwd>/<chat id>/store.db`.

SYNTHETIC data only: Cursor installs its CLI with its own download script (not from npm or
PyPI) and is closed source, so this follows what several independent third-party readers agree
on (fetched 2026-12-01): SQLite in WAL mode, table `meta(key, value)` whose key `"0"` holds
hex-encoded JSON `{agentId, latestRootBlobId, name, mode, createdAt (ms), lastUsedModel}`, and
table `blobs(id, data)` of content-addressed blobs, of which the messages are JSON
`{role, content: [{type: text|tool-call|tool-result, ...}]}` (the root blob is protobuf: skipped).

The folder is stored only as the md5 of its path, so it is found by hashing candidates: every
folder another app's session was listed in (see `reads_known_folders`), and the decodings of
`~/.cursor/projects/<cwd with / turned into ->` (each `-` read as `/` or kept). A chat whose
folder matches none is listed with no folder, and Enter refuses it.

Title: `name`, else the first user text. Last use: the store's (or its WAL's) mtime. Modes:
`--mode plan|ask` are read-only and carried; the default (`agent`, or none) needs nothing;
`--force` (auto-approve) is not recorded; any other recorded mode is refused without the opt-in,
since nothing says which flag would hold it back.
"""

from __future__ import annotations

import os

from sessidx.apps.base import AppPlan, ArgvBuilder, Source, SourceError, said_in, stamp_or_none, tool_words
from sessidx.model import Session
from sessidx.readers import json_value, subdirs, text

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from sessidx.apps.base import CliHelp
    from sessidx.config import Env

STRICT_MODES = {"plan", "ask"}  # read-only modes: `--mode plan|ask`
DEFAULT_MODES = {"agent", "default"}
_MAX_DASHES = 12  # a projects/ name with more is decoded by the known folders alone (2^12 md5s at most)


def _md5(folder: str) -> str:
    import hashlib

    return hashlib.md5(folder.encode("utf-8", "surrogateescape"), usedforsecurity=False).hexdigest()


def _decodings(slug: str) -> Iterator[str]:
    """Folders whose `/` → `-` spelling is `slug` (Cursor's projects/ names): each `-` is a `/` or a `-`."""
    parts = slug.split("-")
    if len(parts) - 1 > _MAX_DASHES:
        return
    for mask in range(1 << (len(parts) - 1)):
        out = parts[0]
        for i, part in enumerate(parts[1:]):
            out += ("/" if mask >> i & 1 else "-") + part
        yield "/" + out


def folders_by_hash(cursor_home: str, known: frozenset[str]) -> dict[str, str]:
    candidates = set(known)
    for project in subdirs(os.path.join(cursor_home, "projects")):
        candidates.update(_decodings(project.name))
    return {_md5(folder): folder for folder in candidates}


def _meta(conn: Any) -> dict[str, Any]:
    row = conn.execute("select value from meta where key = '0'").fetchone()
    value = row[0] if row else None
    try:
        raw = bytes.fromhex(value) if isinstance(value, str) else bytes(value or b"")
    except ValueError:  # not hex: some builds may store the JSON itself
        raw = value.encode("utf-8", "surrogateescape") if isinstance(value, str) else b""
    doc = json_value(raw)
    return doc if isinstance(doc, dict) else {}


def _messages(conn: Any) -> list[dict[str, Any]]:
    out = []
    for (data,) in conn.execute("select data from blobs order by rowid"):
        raw = data if isinstance(data, bytes) else str(data).encode("utf-8", "surrogateescape")
        if raw[:1] != b"{":  # protobuf tree nodes
            continue
        doc = json_value(raw)
        if isinstance(doc, dict) and isinstance(doc.get("role"), str):
            out.append(doc)
    return out


def _said(message: dict[str, Any]) -> list[tuple[str, str]]:
    content = message.get("content")
    said = said_in(message["role"], [p for p in content if isinstance(p, dict) and p.get("type") == "text"]
                   if isinstance(content, list) else content)
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and part.get("type") == "tool-call":
            said += [("tool", w) for w in tool_words(part.get("args"))]
    return said


def load_chat(db: str, chat_id: str, cwd: str | None) -> list[Session]:
    from sessidx.sqlite_snapshot import StoreError, snapshot

    try:
        with snapshot(db) as conn:
            meta = _meta(conn)
            first = next((t for m in _messages(conn) if m["role"] == "user" for role, t in _said(m) if role == "user"),
                         None)
    except StoreError as exc:
        raise SourceError(str(exc)) from None
    except Exception as exc:  # sqlite3.Error and the like: a damaged store
        raise SourceError(f"{db}: cannot be read ({exc})") from None
    wal = stamp_or_none(db + "-wal")[1]
    mtime = max(os.stat(db).st_mtime_ns, wal if isinstance(wal, int) else 0) // 1_000_000
    return [Session(app="cursor", id=text(meta.get("agentId")) or chat_id, cwd=cwd,
                    title=text(meta.get("name")) or first, mtime=mtime, model=text(meta.get("lastUsedModel")),
                    approval=text(meta.get("mode")), bytes=os.path.getsize(db), path=db)]


class Cursor:
    name = "cursor"
    program = "cursor-agent"
    help_args: tuple[str, ...] = ("--help",)
    home_vars: tuple[str, ...] = ()
    home_dirs: tuple[str, ...] = (".cursor",)
    id_pattern = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    reads_known_folders = True

    def sources(self, env: Env, known_folders: frozenset[str] = frozenset()) -> Iterator[Source]:
        home = os.path.join(env.home, ".cursor")
        workspaces = subdirs(os.path.join(home, "chats"))
        if not workspaces:
            return
        by_hash = folders_by_hash(home, known_folders)
        for workspace in workspaces:
            cwd = by_hash.get(workspace.name)
            for chat in subdirs(workspace.path):
                db = os.path.join(chat.path, "store.db")
                st = stamp_or_none(db)
                if st[0] is not None:
                    yield Source(db, st + stamp_or_none(db + "-wal") + (cwd,), load_chat, db, chat.name, cwd)

    def conversation(self, session: Session) -> list[tuple[str, str]]:
        from sessidx.sqlite_snapshot import snapshot

        with snapshot(session.path or "") as conn:
            messages = _messages(conn)
        return [said for m in messages for said in _said(m)]

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        b = ArgvBuilder(cli, self.program, "--resume", session.id)
        b.option("--model", session.model)
        mode = session.approval
        if mode in STRICT_MODES:
            b.safety("--mode", mode)
        elif mode is not None and mode not in DEFAULT_MODES:
            if allow_permissive:
                b.plan.warnings.append(f"recorded mode {mode!r}: cursor-agent restores what it restores")
            else:
                b.hold_back("--mode", mode, "not a mode known to be as strict as cursor-agent's default")
                b.refuse(f"the recorded mode {mode!r} is not known to be as strict as cursor-agent's default, and no "
                         "flag is known to hold it back; Alt-Enter (--allow-permissive) resumes it as recorded",
                         "unknown_mode")
        if session.cwd is None:
            b.refuse("the folder of this chat is unknown (Cursor stores only its md5, and no known folder matches)",
                     "no_folder")
        return b.plan


APP = Cursor()
