"""Read an app's SQLite store without writing a byte next to it, WAL included.

Codex (and opencode, Copilot, Cline) keep their index in WAL mode and leave the `-wal`
file un-checkpointed, so the main file alone is stale: on the real Codex data an archive
exists only in the WAL. An `immutable=1` open ignores the WAL, and a plain read-only
open needs a writable `-shm` next to the database. So the database and its WAL are copied
into a private temp folder and the copy is read (SQLite replays the WAL there). If the copy
fails, the original is opened `immutable=1` (stale but better than nothing) and the caller
is told.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class StoreError(Exception):
    """The store cannot be read at all; the message says why."""


@contextmanager
def snapshot(path: str | os.PathLike[str], notes: list[str] | None = None) -> Iterator[sqlite3.Connection]:
    """A read-only connection to a private copy of the database (+ its WAL)."""
    db = Path(path)
    if not db.is_file():
        raise StoreError(f"{db}: not a file")
    with tempfile.TemporaryDirectory(prefix="sessidx-db-") as tmp:
        conn = _open_copy(db, Path(tmp))
        if conn is None:
            conn = _open_immutable(db)
            if notes is not None:
                notes.append(f"{db}: could not copy it; read without its WAL (may be stale)")
        try:
            yield conn
        finally:
            conn.close()


def _open_copy(db: Path, tmp: Path) -> sqlite3.Connection | None:
    copy = tmp / db.name
    try:
        shutil.copyfile(db, copy)
        wal = db.with_name(db.name + "-wal")
        if wal.is_file():
            shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
        conn = sqlite3.connect(copy, timeout=0.5)
        conn.execute("select count(*) from sqlite_master").fetchone()
        return conn
    except (OSError, sqlite3.Error):
        return None


def _open_immutable(db: Path) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro&immutable=1", uri=True, timeout=0.5)
        conn.execute("select count(*) from sqlite_master").fetchone()
        return conn
    except sqlite3.Error as exc:
        raise StoreError(f"{db}: cannot be read ({exc})") from None


def columns(conn: sqlite3.Connection, table: str) -> set[str]:
    """The columns a table has in this version of the app; empty if the table is missing."""
    try:
        return {row[1] for row in conn.execute(f"pragma table_info({table!r})")}
    except sqlite3.Error:
        return set()


def select_present(
    conn: sqlite3.Connection, table: str, wanted: list[str], where: str = ""
) -> Iterator[dict[str, object]]:
    """Rows of `table` as dicts over the wanted columns that exist; missing ones are None."""
    have = columns(conn, table)
    if not have:
        raise StoreError(f"table {table!r} is missing")
    present = [c for c in wanted if c in have]
    if not present:
        raise StoreError(f"table {table!r} has none of the expected columns")
    sql = f"select {', '.join(present)} from {table} {where}"
    try:
        cursor = conn.execute(sql)
        for row in cursor:
            record: dict[str, object] = dict.fromkeys(wanted)
            record.update(zip(present, row, strict=True))
            yield record
    except sqlite3.Error as exc:
        raise StoreError(f"reading {table!r}: {exc}") from None
