"""The index's store: where it lives, its schema, the lock on indexing and the progress file."""

from __future__ import annotations

import os
import sys
import time

from sessidx.cache import cache_dir, folder_problem
from sessidx.errors import SessidxError

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

    from sessidx.config import Env
else:  # the C module alone: the `sqlite3` package around it loads datetime and collections too
    from sessidx.csqlite import sqlite3

SCHEMA_VERSION = 8  # 7: source_newest; 8: source.title
DatabaseError = sqlite3.DatabaseError  # for callers that do not import sqlite3 themselves
OperationalError = sqlite3.OperationalError  # busy, locked, disk full: not damage
# FTS5 buffers this much before writing a segment (its default is 1 MB): fewer, larger
# segments are written faster and need no merging afterwards (measured: 8 MB, 0.62 s for
# 52 MB of text, 1 MB and a final 'optimize', 1.4 s).
HASH_SIZE = 8 * 1024 * 1024


class Progress:
    """What the indexer reports as it goes: sources and bytes done of all."""

    def __init__(self, sources: int, total_bytes: int) -> None:
        self.sources = sources
        self.total_bytes = total_bytes
        self.done_sources = 0
        self.done_bytes = 0
        self.started = time.monotonic()


def enabled(env: Env) -> bool:
    return env.get("SESSIDX_CONTENT") not in ("0", "off", "false", "no")


def db_path(env: Env) -> str | None:
    folder = cache_dir(env)
    return os.path.join(folder, "content.sqlite") if folder else None


def drop(env: Env) -> bool:
    """Delete the content index; whether there was one."""
    path = db_path(env)
    found = False
    for suffix in ("", "-wal", "-shm", "-journal"):
        if path and os.path.lexists(path + suffix):
            os.unlink(path + suffix)
            found = True
    return found


def connect(env: Env, notes: list[str] | None = None) -> sqlite3.Connection:
    """The index, made if need be. One that is damaged or half made (a first index that ran
    out of disk space before this schema was made in one transaction) is made again, with a
    line in `notes` (what `search -v` shows)."""
    path = db_path(env)
    if path is None:
        raise OSError("no absolute cache folder (HOME and XDG_CACHE_HOME are relative or unset)")
    _check_folder(os.path.dirname(path))
    try:
        return _open(path)
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.OperationalError) and not isinstance(exc, _HalfMade):
            raise  # busy, locked, disk full, unreadable: not damage, nothing to throw away
        if notes is not None:
            notes.append(f"the content index could not be used ({exc}): made again")
    drop(env)
    return _open(path)


class _HalfMade(sqlite3.OperationalError):
    """Tables but no schema version: a schema made before it was made in one transaction."""


def _check_folder(folder: str) -> None:
    os.makedirs(folder, mode=0o700, exist_ok=True)
    if problem := folder_problem(folder):
        raise OSError(problem)
    for suffix in ("-wal", "-shm", "-journal"):  # SQLite opens these itself, following links
        if os.path.islink(os.path.join(folder, "content.sqlite" + suffix)):
            raise OSError(f"{os.path.join(folder, 'content.sqlite' + suffix)} is a symbolic link; not used")


def _open(path: str) -> sqlite3.Connection:
    os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600))  # 0600 before SQLite opens it
    db = sqlite3.connect(path, timeout=5, isolation_level=None)
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version == 0 and db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            raise _HalfMade("half made: tables but no schema version")
        if version == 0:  # before anything is written: pages freed by merging go back to the file system
            db.execute("PRAGMA auto_vacuum = INCREMENTAL")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        if version not in (0, SCHEMA_VERSION):  # another version's index: start over
            raise _HalfMade(f"schema version {version}, not {SCHEMA_VERSION}")
        if version == 0:
            _create(db)
    except BaseException:
        db.close()
        raise
    return db


def _create(db: sqlite3.Connection) -> None:
    """The schema, in one transaction: all of it or, when the disk is full, nothing."""
    db.execute("BEGIN IMMEDIATE")
    try:
        for statement in f"""
            -- session: the Session's fields, marshalled (a keystroke need not load json), title: its
            -- title again, which ranking reads of every session found (a thousand for a word in 1 of 11)
            CREATE TABLE source(
                id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, stamp TEXT, done INTEGER NOT NULL DEFAULT 0,
                tail BLOB, session BLOB NOT NULL, mtime INTEGER NOT NULL, title TEXT NOT NULL DEFAULT '');
            -- id: the FTS row id, places: its records' offsets (or indexes), starts: the token
            -- each of its messages starts at (both marshalled lists)
            CREATE TABLE chunk(id INTEGER PRIMARY KEY, source INTEGER NOT NULL, places BLOB NOT NULL,
                               starts BLOB NOT NULL);
            CREATE INDEX chunk_source ON chunk(source);
            -- the newest sessions first, for words too common to rank by (content/query.py, _newest)
            CREATE INDEX source_newest ON source(mtime DESC, id);
            -- FTS rows and characters of text written since the last rebuild, dead ones too
            CREATE TABLE rows(fts INTEGER NOT NULL, text INTEGER NOT NULL);
            INSERT INTO rows VALUES (0, 0);
            -- every term ever indexed, spelt backwards: a typo early in a word is looked up by its end
            CREATE TABLE term(rev TEXT PRIMARY KEY) WITHOUT ROWID;
            -- what a first index cut short left to do ('terms': the typo tier's, taken from FTS5 at its end)
            CREATE TABLE unfinished(what TEXT PRIMARY KEY) WITHOUT ROWID;
            CREATE VIRTUAL TABLE said USING fts5(body, content='', columnsize=0,
                                                 tokenize='unicode61 remove_diacritics 2');
            INSERT INTO said(said, rank) VALUES ('hashsize', {HASH_SIZE});
            PRAGMA user_version = {SCHEMA_VERSION}
        """.split(";"):
            db.execute(statement)
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def open_index(env: Env, notes: list[str] | None = None) -> sqlite3.Connection:
    """The index, or SessidxError saying why not (turned off, no cache folder, a broken file)."""
    if not enabled(env):
        raise SessidxError("content search is off (SESSIDX_CONTENT=0)")
    try:
        return connect(env, notes)
    except (OSError, sqlite3.Error) as exc:
        raise SessidxError(f"cannot open the content index: {exc}") from None


class Busy(Exception):
    """Another sessidx is indexing right now."""


LOCK_FD_VARIABLE = "SESSIDX_CONTENT_LOCK_FD"  # a child handed the lock its parent took
# An indexer that has shown no sign of life (its lock taken, a commit) for this long is
# stopped (Ctrl-Z), or stuck: nobody waits for it. It commits every COMMIT_SECONDS.
STALL_SECONDS = 5.0
# What a keystroke waits for a live indexer (a refresh with nothing new takes a fraction of
# this); then it shows what is indexed, and says so.
KEYSTROKE_WAIT = 2.0
held: list[Any] = []  # this process's lock files: a forked reader closes its copies of the open ones


def lock(env: Env) -> Any:
    """An exclusive lock on indexing (an open file; closing it lets go). Raises Busy.
    A background refresh gets the lock already taken (so a search started right after it
    waits for it): its fd is named in SESSIDX_CONTENT_LOCK_FD."""
    import fcntl

    inherited = env.get(LOCK_FD_VARIABLE)
    if inherited and inherited.isdigit():
        os.environ.pop(LOCK_FD_VARIABLE, None)  # not for this process's own children
        f = os.fdopen(int(inherited), "a")
    else:
        path = db_path(env)
        if path is None:
            raise OSError("no absolute cache folder")
        _check_folder(os.path.dirname(path))
        f = os.fdopen(_open_nofollow(path + ".lock", os.O_WRONLY | os.O_CREAT | os.O_APPEND), "a")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            raise Busy() from None
    held[:] = [*(h for h in held if not h.closed), f]
    _alive(f.fileno())
    return f


def _open_nofollow(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)


def _alive(fd: int) -> None:
    """A sign of life: the lock file's time, which waiters compare with the clock."""
    try:
        os.utime(fd)
    except OSError:
        return


class Indexer:
    """Another sessidx indexing right now, as a waiter sees it: how far, whether it is stuck."""

    def __init__(self, progress: tuple[int, int] | None, quiet_seconds: float) -> None:
        self.progress = progress
        self.quiet_seconds = quiet_seconds

    @property
    def stalled(self) -> bool:
        return self.quiet_seconds > STALL_SECONDS

    def note(self) -> str:
        if self.stalled:
            return (f"another sessidx has been indexing without progress for {self.quiet_seconds:.0f} s"
                    " (stopped?): searching what is indexed")
        done = f" {self.progress[0]}/{self.progress[1]} sessions" if self.progress else ""
        return f"indexing{done}: searching what is indexed so far"


def seconds_left(deadline: float) -> float:
    """From now to a time.monotonic() deadline, never less than none."""
    return max(0.0, deadline - time.monotonic())


def wait_for_indexer(env: Env, seconds: float) -> Indexer | None:
    """Until no sessidx is indexing, `seconds` passed, or the one indexing shows no sign of
    life: None when nobody is indexing any more, else the one that is."""
    import fcntl

    path = db_path(env)
    if path is None:
        return None
    try:
        fd = _open_nofollow(path + ".lock", os.O_RDONLY)
    except OSError:
        return None  # no lock file: nobody ever indexed
    try:
        deadline = time.monotonic() + seconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return None
            except OSError:
                pass
            indexer = Indexer(read_progress(env), time.time() - _last_sign(path, fd))
            if indexer.stalled or time.monotonic() > deadline:
                return indexer
            time.sleep(0.05)
    finally:
        os.close(fd)


def _last_sign(path: str, lock_fd: int) -> float:
    lock_time = os.fstat(lock_fd).st_mtime
    try:
        return max(lock_time, os.lstat(path + ".progress").st_mtime)
    except OSError:
        return lock_time


def start_refresh(env: Env) -> bool:
    """`sessidx search --refresh` in the background, holding the lock from this moment on;
    False when another sessidx is indexing already."""
    import subprocess
    try:
        taken = lock(env)
    except (Busy, OSError):
        return False
    with taken:
        subprocess.Popen([sys.executable, "-m", "sessidx", "search", "--refresh"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                         pass_fds=(taken.fileno(),), env={**os.environ, LOCK_FD_VARIABLE: str(taken.fileno())})
    return True


def write_progress(env: Env, progress: Progress | None) -> None:
    """What the picker's content mode shows while a background refresh runs, and a sign of
    life for whoever waits: written to a temp file of its own, then renamed into place (a
    link planted at either name is never followed)."""
    path = db_path(env)
    if path is None:  # never a relative path: that would write into whatever folder this runs in
        return
    path += ".progress"
    try:
        if progress is None:
            os.unlink(path)
            return
        tmp = f"{path}.{os.getpid()}.tmp"
        if os.path.lexists(tmp):
            os.unlink(tmp)
        fd = _open_nofollow(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        with os.fdopen(fd, "w") as f:
            f.write(f"{progress.done_sources} {progress.sources}")
        os.replace(tmp, path)
    except OSError:
        pass


def read_progress(env: Env) -> tuple[int, int] | None:
    path = db_path(env)
    if path is None:
        return None
    try:
        with os.fdopen(_open_nofollow(path + ".progress", os.O_RDONLY)) as f:
            done, total = f.read(100).split()
        return int(done), int(total)
    except (OSError, ValueError):
        return None


def rebuild_if_mostly_dead(db: sqlite3.Connection, force: bool = False) -> None:
    """Dead FTS rows cost space and query time: past half of the index, start over (the next
    refresh reads every source again)."""
    live = db.execute("SELECT count(*) FROM chunk").fetchone()[0]
    rows = db.execute("SELECT fts FROM rows").fetchone()[0]
    if force or (rows > 1000 and live < rows // 2):
        db.executescript("""
            BEGIN; DELETE FROM chunk; DELETE FROM source; DELETE FROM term; UPDATE rows SET fts = 0, text = 0;
            INSERT INTO said(said) VALUES ('delete-all'); COMMIT;""")
