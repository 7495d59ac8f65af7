"""Whether anything changed since the content index was last brought up to date, in one look.

The listing already compares every source's stamp with what its cache holds, and rewrites its
cache file whenever one changed. So when that file is the very one it was at the end of the
last complete content refresh (same inode, size, mtime and ctime), no session changed since, and
`sessidx search` needs no look at its sources one by one: the refresh then costs what a warm
`list` costs. The stamp is kept in the index itself (dropped with it), and only after a refresh
that left every source indexed.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py

if TYPE_CHECKING:
    import sqlite3


def listing_stamp(path: str | None) -> str | None:
    """The listing cache file's identity, or None when there is none to trust."""
    try:
        st = os.stat(path) if path else None
    except OSError:
        return None
    return f"{st.st_ino} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns}" if st else None


def unchanged(db: sqlite3.Connection, stamp: str | None) -> bool:
    if stamp is None:
        return False
    _table(db)
    row = db.execute("SELECT stamp FROM listing").fetchone()
    return row is not None and row[0] == stamp


def remember(db: sqlite3.Connection, stamp: str | None, sessions: int, stats: dict[str, int]) -> None:
    """Keep `stamp` as the listing every session of which is indexed, if that is so: no source
    failed and none waits (an interrupted or rebuilt index leaves some with no stamp)."""
    _table(db)
    waiting = db.execute("SELECT count(*), sum(stamp = '') FROM source").fetchone()
    complete = not stats.get("failed") and not (waiting[1] or 0) and (waiting[0] or not sessions)
    db.execute("DELETE FROM listing")
    if stamp is not None and complete:
        db.execute("INSERT INTO listing VALUES (?)", (stamp,))


def _table(db: sqlite3.Connection) -> None:
    db.execute("CREATE TABLE IF NOT EXISTS listing(stamp TEXT NOT NULL)")
