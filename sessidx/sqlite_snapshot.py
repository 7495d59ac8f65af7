"""Read an app's SQLite store without writing a byte next to it, WAL and journal included.

Codex (and opencode, Copilot, Cline) keep their index in WAL mode and leave the `-wal`
file un-checkpointed, so the main file alone is stale: on the real Codex data an archive
exists only in the WAL. An `immutable=1` open ignores the WAL, and a plain read-only
open needs a writable `-shm` next to the database. So the database with its `-wal` (or its
`-journal`, in rollback mode) is copied into a private temp folder and the copy is read:
SQLite replays the WAL there, or rolls a hot journal back, so uncommitted rows of a writer
that is mid-transaction or died are not seen.

A writer may change the files while they are copied (a TRUNCATE checkpoint empties the WAL
after moving it into the database): the copy counts only if no file changed during it, and
is taken again otherwise. If no consistent copy can be had, the original is opened
`immutable=1` (stale but better than nothing) and the caller is told, in `notes`.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

COPY_ATTEMPTS = 8  # with back-off, at most about 0.35 s of waiting in all
COPY_CAP = 512 * 1024 * 1024  # a store larger than this is opened in place (immutable) instead
_COMPANIONS = ("-wal", "-journal")


class StoreError(Exception):
    """The store cannot be read at all; the message says why."""


def _text(errors: str) -> Callable[[bytes], str]:
    def decode(value: bytes) -> str:
        return value.decode("utf-8", errors)

    return decode


@contextmanager
def snapshot(path: str | os.PathLike[str], notes: list[str] | None = None,
             strict: bool = False) -> Iterator[sqlite3.Connection]:
    """A connection to a private, consistent copy of the database (+ its WAL or journal).

    strict: damage anywhere (`pragma quick_check`, text that is not UTF-8) is a StoreError, for
    apps whose files can be read instead; otherwise bad text comes back with surrogate escapes.
    """
    db = Path(path)
    if not db.is_file():
        raise StoreError(f"{db}: not a file")
    if notes is None:
        notes = []
    with tempfile.TemporaryDirectory(prefix="sessidx-db-") as tmp:
        conn = _consistent_copy(db, Path(tmp), notes, strict)
        if conn is None:
            conn = _open_immutable(db)
            notes.append(f"{db}: read in place without its WAL or journal (may be stale or hold uncommitted rows)")
        conn.text_factory = _text("strict" if strict else "surrogateescape")
        try:
            if strict:
                _quick_check(conn, db)
            yield conn
        except StoreError:
            raise
        except Exception as exc:  # any failure reading a store is damage, never a traceback
            raise StoreError(f"{db}: damaged ({type(exc).__name__}: {exc})") from None
        finally:
            conn.close()


State = tuple[tuple[object, ...] | None, ...]


def _state(db: Path) -> State:
    """What would change if a writer touched the database or a companion file. Of the WAL only
    its inode, header and size: a commit appends frames to it, which a copy may take or leave
    (SQLite replays the WAL up to its last whole, checksummed commit), and that must not count
    as a change, or a writer committing faster than a large store copies would leave no copy
    consistent (once: 12 of 60 lists of a 100 MB Codex database lost every WAL-only thread)."""
    out: list[tuple[object, ...] | None] = []
    for suffix in ("", *_COMPANIONS):
        try:
            st = os.stat(f"{db}{suffix}")
        except OSError:
            out.append(None)
            continue
        if suffix == "-wal":
            out.append((st.st_ino, _wal_header(f"{db}{suffix}"), st.st_size))
        else:
            out.append((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(out)


def _wal_header(path: str) -> bytes:
    """The WAL's header: its salts change whenever the WAL restarts after a checkpoint."""
    try:
        with open(path, "rb") as f:
            return f.read(32)
    except OSError:
        return b""


def _held_still(before: State, after: State) -> bool:
    """No writer changed what the copy holds: the database and journal as they were, the WAL
    the same WAL (inode, header), only longer. A checkpoint writes into the database and a
    restart rewrites the WAL header: both are changes."""
    wal = 1 + _COMPANIONS.index("-wal")
    if before[:wal] + before[wal + 1:] != after[:wal] + after[wal + 1:]:
        return False
    old, new = before[wal], after[wal]
    if old is None or new is None:
        return old == new
    grew = isinstance(old[2], int) and isinstance(new[2], int) and new[2] >= old[2]
    return old[:2] == new[:2] and grew


def _copy(source: str, target: Path) -> None:
    shutil.copyfile(source, target)


def _consistent_copy(db: Path, tmp: Path, notes: list[str], strict: bool = False) -> sqlite3.Connection | None:
    before = _state(db)
    size = before[0][1] if before[0] is not None else 0
    if isinstance(size, int) and size > COPY_CAP:
        notes.append(f"{db}: over {COPY_CAP >> 20} MiB, not copied")
        return None
    copy = tmp / db.name
    for attempt in range(COPY_ATTEMPTS):
        for suffix in ("", *_COMPANIONS):
            Path(f"{copy}{suffix}").unlink(missing_ok=True)
        failed = None
        try:
            _copy(str(db), copy)
            for suffix, st in zip(_COMPANIONS, before[1:], strict=True):
                if st is not None:
                    _copy(f"{db}{suffix}", Path(f"{copy}{suffix}"))
        except OSError as exc:  # a WAL removed by its writer's last close is a change too
            failed = exc
        after = _state(db)
        if failed is not None and after == before:
            notes.append(f"{db}: could not copy it ({failed.strerror or failed})")
            return None
        if failed is None and _held_still(before, after):
            conn, damage = _open_copy(copy)
            if conn is not None:
                return conn
            if strict:  # a copy that held still and cannot be opened: the store is damaged
                raise StoreError(f"{db}: damaged ({damage})")
        before = after
        if attempt + 1 < COPY_ATTEMPTS:
            time.sleep(min(0.1, 0.005 * 2**attempt))  # a writer mid-checkpoint is done within milliseconds
    notes.append(f"{db}: changed during every one of {COPY_ATTEMPTS} copies")
    return None


def _open_copy(copy: Path) -> tuple[sqlite3.Connection | None, str]:
    """The copy opened, or None and why. Any exception is damage (a bad schema page raises
    UnicodeDecodeError, not sqlite3.Error)."""
    conn = None
    try:
        conn = sqlite3.connect(copy, timeout=0.5)
        conn.execute("select count(*) from sqlite_master").fetchone()  # replays the WAL / rolls back
        return conn, ""
    except Exception as exc:
        if conn is not None:
            conn.close()
        return None, f"{type(exc).__name__}: {exc}"


def _open_immutable(db: Path) -> sqlite3.Connection:
    conn = None
    try:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro&immutable=1", uri=True, timeout=0.5)
        conn.execute("select count(*) from sqlite_master").fetchone()
        return conn
    except Exception as exc:
        if conn is not None:
            conn.close()
        raise StoreError(f"{db}: cannot be read ({type(exc).__name__}: {exc})") from None


def _quick_check(conn: sqlite3.Connection, db: Path) -> None:
    try:
        verdict = conn.execute("pragma quick_check(1)").fetchone()
    except Exception as exc:
        raise StoreError(f"{db}: damaged ({type(exc).__name__}: {exc})") from None
    if not verdict or verdict[0] != "ok":
        raise StoreError(f"{db}: damaged ({verdict[0] if verdict else 'no answer'})")


def columns(conn: sqlite3.Connection, table: str) -> set[str]:
    """The columns a table has in this version of the app; empty if the table is missing."""
    try:
        return {row[1] for row in conn.execute(f"pragma table_info({table!r})")}
    except Exception:
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
    except Exception as exc:  # damage: a bad page, text that is not UTF-8, anything else
        raise StoreError(f"reading {table!r}: {type(exc).__name__}: {exc}") from None
