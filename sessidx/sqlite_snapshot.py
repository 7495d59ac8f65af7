"""Read an app's SQLite store without writing a byte next to it, WAL and journal included.

Codex (and opencode, Copilot, Cline) keep their index in WAL mode and leave the `-wal`
file un-checkpointed, so the main file alone is stale: on the real Codex data an archive
exists only in the WAL. An `immutable=1` open ignores the WAL, and a plain read-only
open needs a writable `-shm` next to the database (SQLite 3.40 with `mode=ro&readonly_shm=1`
still opens the `-wal` O_RDWR|O_CREAT: it makes one where there is none, and as root it
fchowns both). So the database with its `-wal` (or its `-journal`, in rollback mode) is
copied into a private temp folder and the copy is read: SQLite replays the WAL there, or
rolls a hot journal back, so uncommitted rows of a writer that is mid-transaction or died
are not seen.

A writer may change the files while they are copied. In WAL mode the copy takes, in the
`-shm` opened read-only, the shared lock SQLite's own readers of the database file take
(read lock 0, in the WAL format's lock bytes): while it is held no checkpoint writes into the
database, so the database copied is the one the WAL builds on, and whatever the WAL copy holds
(frames appended, or the WAL restarted or truncated after a checkpoint that had already moved
every frame in) SQLite replays a whole commit prefix of it over that database. Without the
lock (no `-shm`, a checkpoint holding it), the copy counts only if no file changed during it,
and is taken again otherwise. If no consistent copy can be had, StoreBusy says so (the index
keeps the rows of the last good read); a store that cannot be copied at all is opened
`immutable=1` (stale but better than nothing), and the caller is told, in `notes`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from io import BufferedReader  # loaded by open() anyway
from types import TracebackType

from sessidx.csqlite import sqlite3  # the C module alone, without functools: see below
from sessidx.readers import open_regular

# Plain `os` calls, not shutil, tempfile, pathlib and contextlib: those four cost a cold
# `sessidx build` more than reading Codex's index does (it is their only user there). And
# `_sqlite3`, not `sqlite3`: that package is `from _sqlite3 import *` plus the adapters of
# dates, which load `datetime` (4 ms of a cold build; nothing here stores a date); loaded by
# sessidx/csqlite.py, without `functools` where nothing else has loaded it yet.

COPY_ATTEMPTS = 8  # with back-off, at most about 0.35 s of waiting in all
COPY_CAP = 512 * 1024 * 1024  # a store larger than this is opened in place (immutable) instead
_COMPANIONS = ("-wal", "-journal")


class StoreError(Exception):
    """The store cannot be read at all; the message says why."""


class StoreBusy(StoreError):
    """A writer kept the store changing through every copy: no consistent one could be had now."""


def _text(errors: str) -> Callable[[bytes], str]:
    def decode(value: bytes) -> str:
        return value.decode("utf-8", errors)

    return decode


class snapshot:  # noqa: N801 - used as `with snapshot(db) as conn`, as the function it was
    """A connection to a private, consistent copy of the database (+ its WAL or journal).

    strict: damage anywhere (`pragma quick_check`, text that is not UTF-8) is a StoreError, for
    apps whose files can be read instead; otherwise bad text comes back with surrogate escapes.
    Whatever fails while the connection is used is a StoreError too: damage, never a traceback.
    """

    def __init__(self, path: str | os.PathLike[str], notes: list[str] | None = None, strict: bool = False) -> None:
        self.db = os.fspath(path)
        self.notes = [] if notes is None else notes
        self.strict = strict
        self.tmp: str | None = None
        self.conn: sqlite3.Connection | None = None

    def __enter__(self) -> sqlite3.Connection:
        db = self.db
        if not os.path.isfile(db):
            raise StoreError(f"{db}: not a file")
        self.tmp = _private_folder()
        try:
            conn = _consistent_copy(db, self.tmp, self.notes, self.strict)
            if conn is None:
                conn = _open_immutable(db)
                self.notes.append(f"{db}: read in place without its WAL or journal "
                                  "(may be stale or hold uncommitted rows)")
            self.conn = conn
            conn.text_factory = _text("strict" if self.strict else "surrogateescape")
            if self.strict:
                _quick_check(conn, db)
        except BaseException:
            self._close()
            raise
        return conn

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._close()
        if isinstance(exc, Exception) and not isinstance(exc, StoreError):
            # any failure reading a store is damage, never a traceback
            raise StoreError(f"{self.db}: damaged ({type(exc).__name__}: {exc})") from None

    def _close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        if self.tmp is not None:
            _remove_folder(self.tmp)
            self.tmp = None


def _private_folder() -> str:
    """A new folder only we can read (0700, a random name), in the first temp folder that takes
    one: $TMPDIR, $TEMP, $TMP, /tmp, /var/tmp, /usr/tmp, as tempfile looks for them."""
    candidates = [os.environ.get(name) for name in ("TMPDIR", "TEMP", "TMP")] + ["/tmp", "/var/tmp", "/usr/tmp"]
    failed: OSError | None = None
    for base in filter(None, candidates):
        for _ in range(8):
            folder = os.path.join(base, f"sessidx-db-{os.urandom(8).hex()}")
            try:
                os.mkdir(folder, 0o700)
                return folder
            except FileExistsError:
                continue
            except OSError as exc:
                failed = exc
                break
    raise StoreError(f"no temp folder to copy the store into ({failed})")


def _remove_folder(folder: str) -> None:
    """The private folder and what SQLite left in it (the copy, its WAL and -shm): files only."""
    try:
        with os.scandir(folder) as entries:
            names = [entry.name for entry in entries]
        for name in names:
            os.unlink(os.path.join(folder, name))
        os.rmdir(folder)
    except OSError:
        pass


State = tuple[tuple[object, ...] | None, ...]


def _state(db: str) -> State:
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


def _held_still(before: State, after: State, locked: bool = False) -> bool:
    """No writer changed what the copy holds: the database and journal as they were, the WAL
    the same WAL (inode, header), only longer. A checkpoint writes into the database and a
    restart rewrites the WAL header: both are changes. `locked`: read lock 0 was held (see
    ReadersLock), so any WAL is one SQLite replays a commit prefix of over this database."""
    wal = 1 + _COMPANIONS.index("-wal")
    if before[:wal] + before[wal + 1:] != after[:wal] + after[wal + 1:]:
        return False
    if locked:
        return True
    old, new = before[wal], after[wal]
    if old is None or new is None:
        return old == new
    grew = isinstance(old[2], int) and isinstance(new[2], int) and new[2] >= old[2]
    return old[:2] == new[:2] and grew


def _copy(source: str, target: str) -> None:
    """A copy of a regular file (a FIFO or a device put in its place is not read)."""
    src = open_regular(source)
    if src is None:
        raise OSError(f"{source}: not a regular file")
    with src, open(target, "wb") as dst:
        while chunk := src.read(1 << 20):
            dst.write(chunk)


def _consistent_copy(db: str, tmp: str, notes: list[str], strict: bool = False) -> sqlite3.Connection | None:
    before = _state(db)
    size = before[0][1] if before[0] is not None else 0
    if isinstance(size, int) and size > COPY_CAP:
        notes.append(f"{db}: over {COPY_CAP >> 20} MiB, not copied")
        return None
    copy = os.path.join(tmp, os.path.basename(db))
    for attempt in range(COPY_ATTEMPTS):
        for suffix in ("", *_COMPANIONS):
            try:  # noqa: SIM105 - contextlib is what this module no longer loads
                os.unlink(f"{copy}{suffix}")
            except FileNotFoundError:
                pass
        failed = None
        with ReadersLock(db) as lock:
            # taken now: what a writer did before the lock (or during the pause) is no change to this copy
            before = _state(db)
            try:
                _copy(db, copy)
                for suffix, st in zip(_COMPANIONS, before[1:], strict=True):
                    if st is not None:
                        _copy(f"{db}{suffix}", f"{copy}{suffix}")
            except OSError as exc:  # a WAL removed by its writer's last close is a change too
                failed = exc
            after = _state(db)
        if failed is not None and after == before:
            notes.append(f"{db}: could not copy it ({failed.strerror or failed})")
            return None
        if failed is None and _held_still(before, after, lock.held):
            conn, damage = _open_copy(copy)
            if conn is not None:
                return conn
            if strict:  # a copy that held still and cannot be opened: the store is damaged
                raise StoreError(f"{db}: damaged ({damage})")
        if attempt + 1 < COPY_ATTEMPTS:
            time.sleep(min(0.1, 0.005 * 2**attempt))  # a writer mid-checkpoint is done within milliseconds
    raise StoreBusy(f"{db}: changed during every one of {COPY_ATTEMPTS} copies")


# The WAL format's locks are bytes of the -shm from offset 120 on (documented in SQLite's
# walformat.html, fixed for compatibility): WAL_WRITE_LOCK 0, CKPT 1, RECOVER 2, then READ
# locks 0-4. A checkpoint copies frames into the database only while it holds READ lock 0
# exclusively; readers that read the database file alone hold it shared.
_READ_LOCK_0 = 120 + 3


class ReadersLock:
    """Holds read lock 0 of a WAL store, shared, through an O_RDONLY -shm (fcntl locks need no
    write access), when there is a -shm and no checkpoint holds it: `held` says whether. The
    lock goes when the -shm is closed; nothing is written."""

    def __init__(self, db: str) -> None:
        self.db = db
        self.file: BufferedReader | None = None
        self.held = False

    def __enter__(self) -> ReadersLock:
        if not os.path.exists(f"{self.db}-shm"):
            return self  # no connection has it open in WAL mode, or it is in rollback mode
        try:
            import fcntl
        except ImportError:  # not a POSIX system: the copy is judged by the files alone
            return self
        self.file = open_regular(f"{self.db}-shm")
        if self.file is None:
            return self
        try:
            fcntl.lockf(self.file.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB, 1, _READ_LOCK_0, os.SEEK_SET)
            self.held = True
        except OSError:  # a checkpoint is copying frames into the database right now
            pass
        return self

    def __exit__(self, *exc: object) -> None:
        if self.file is not None:
            self.file.close()  # releases the lock
            self.file = None


def _open_copy(copy: str) -> tuple[sqlite3.Connection | None, str]:
    """The copy opened, or None and why. Any exception is damage (a bad schema page raises
    UnicodeDecodeError, not sqlite3.Error)."""
    conn = None
    try:
        conn = sqlite3.connect(copy, timeout=0.5)
        # The copy is ours and deleted after: closing it checkpoints its WAL into it, and without
        # this with an fsync (10-50 ms of a cold `sessidx build` over Codex's store).
        conn.execute("pragma synchronous = off")
        conn.execute("select count(*) from sqlite_master").fetchone()  # replays the WAL / rolls back
        return conn, ""
    except Exception as exc:
        if conn is not None:
            conn.close()
        return None, f"{type(exc).__name__}: {exc}"


def _open_immutable(db: str) -> sqlite3.Connection:
    from pathlib import Path  # only here: the rare store that cannot be copied

    conn = None
    try:
        conn = sqlite3.connect(f"{Path(db).resolve().as_uri()}?mode=ro&immutable=1", uri=True, timeout=0.5)
        conn.execute("select count(*) from sqlite_master").fetchone()
        return conn
    except Exception as exc:
        if conn is not None:
            conn.close()
        raise StoreError(f"{db}: cannot be read ({type(exc).__name__}: {exc})") from None


def _quick_check(conn: sqlite3.Connection, db: str) -> None:
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
