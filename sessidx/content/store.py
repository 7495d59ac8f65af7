"""The index's store: where it lives, its schema, the lock on indexing and the progress file."""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # see model.Fields
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

    from sessidx.config import Env
else:
    try:  # the C module alone: the `sqlite3` package around it loads datetime and collections too
        import _sqlite3 as sqlite3
    except ImportError:
        import sqlite3

SCHEMA_VERSION = 5
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
    from sessidx.cache import cache_dir

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


def connect(env: Env) -> sqlite3.Connection:
    path = db_path(env)
    if path is None:
        raise OSError("no absolute cache folder (HOME and XDG_CACHE_HOME are relative or unset)")
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600))  # 0600 before SQLite opens it
    db = sqlite3.connect(path, timeout=5, isolation_level=None)
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version == 0:  # before anything is written: pages freed by merging go back to the file system
        db.execute("PRAGMA auto_vacuum = INCREMENTAL")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    if version not in (0, SCHEMA_VERSION):  # another version's index: start over
        db.close()
        drop(env)
        return connect(env)
    if version == 0:
        _create(db)
    return db


def _create(db: sqlite3.Connection) -> None:
    db.executescript(f"""
        -- session: the Session's fields, marshalled (a keystroke need not load json)
        CREATE TABLE source(
            id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, stamp TEXT, done INTEGER NOT NULL DEFAULT 0,
            tail BLOB, session BLOB NOT NULL, mtime INTEGER NOT NULL);
        -- id: the FTS row id; places: its records' offsets (or indexes), a marshalled list
        CREATE TABLE chunk(id INTEGER PRIMARY KEY, source INTEGER NOT NULL, places BLOB NOT NULL);
        CREATE INDEX chunk_source ON chunk(source);
        -- FTS rows and characters of text written since the last rebuild, dead ones too
        CREATE TABLE rows(fts INTEGER NOT NULL, text INTEGER NOT NULL);
        INSERT INTO rows VALUES (0, 0);
        CREATE VIRTUAL TABLE said USING fts5(body, content='', columnsize=0,
                                             tokenize='unicode61 remove_diacritics 2');
        INSERT INTO said(said, rank) VALUES ('hashsize', {HASH_SIZE});
        PRAGMA user_version = {SCHEMA_VERSION};
    """)


def open_index(env: Env) -> sqlite3.Connection:
    """The index, or SessidxError saying why not (turned off, no cache folder, a broken file)."""
    from sessidx.errors import SessidxError

    if not enabled(env):
        raise SessidxError("content search is off (SESSIDX_CONTENT=0)")
    try:
        return connect(env)
    except (OSError, sqlite3.Error) as exc:
        raise SessidxError(f"cannot open the content index: {exc}") from None


class Busy(Exception):
    """Another sessidx is indexing right now."""


LOCK_FD_VARIABLE = "SESSIDX_CONTENT_LOCK_FD"  # a child handed the lock its parent took


def lock(env: Env) -> Any:
    """An exclusive lock on indexing (an open file; closing it lets go). Raises Busy.
    A background refresh gets the lock already taken (so a search started right after it
    waits for it): its fd is named in SESSIDX_CONTENT_LOCK_FD."""
    import fcntl

    inherited = env.get(LOCK_FD_VARIABLE)
    if inherited and inherited.isdigit():
        os.environ.pop(LOCK_FD_VARIABLE, None)  # not for this process's own children
        return os.fdopen(int(inherited), "a")
    path = db_path(env)
    if path is None:
        raise OSError("no absolute cache folder")
    f = os.fdopen(os.open(path + ".lock", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600), "a")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        raise Busy() from None
    return f


def wait_for_indexer(env: Env, seconds: float) -> None:
    """Until no sessidx is indexing (or `seconds` passed): a search then sees its work."""
    import fcntl

    path = db_path(env)
    if path is None:
        return
    try:
        f = open(path + ".lock", "rb")  # noqa: SIM115 - closed below
    except OSError:
        return  # no lock file: nobody ever indexed
    with f:
        deadline = time.monotonic() + seconds
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return
            except OSError:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.05)


def start_refresh(env: Env) -> bool:
    """`sessidx search --refresh` in the background, holding the lock from this moment on;
    False when another sessidx is indexing already."""
    import subprocess
    import sys

    try:
        held = lock(env)
    except (Busy, OSError):
        return False
    with held:
        subprocess.Popen([sys.executable, "-m", "sessidx", "search", "--refresh"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                         pass_fds=(held.fileno(),), env={**os.environ, LOCK_FD_VARIABLE: str(held.fileno())})
    return True


def write_progress(env: Env, progress: Progress | None) -> None:
    """What the picker's content mode shows while a background refresh runs."""
    path = db_path(env)
    if path is None:  # never a relative path: that would write into whatever folder this runs in
        return
    path += ".progress"
    try:
        if progress is None:
            os.unlink(path)
        else:
            with open(path, "w") as f:
                f.write(f"{progress.done_sources} {progress.sources}")
    except OSError:
        pass


def read_progress(env: Env) -> tuple[int, int] | None:
    path = db_path(env)
    if path is None:
        return None
    try:
        with open(path + ".progress") as f:
            done, total = f.read().split()
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
            BEGIN; DELETE FROM chunk; DELETE FROM source; UPDATE rows SET fts = 0, text = 0;
            INSERT INTO said(said) VALUES ('delete-all'); COMMIT;""")
