"""`sessidx search` when nothing changed: the content index answers without a listing.

The full path lists every session (25 app modules, a stamp per source, a Session each) only
to learn that nothing changed since the content index was last complete. The refresh that
made it complete also keeps, in the index itself (table `kept`, dropped with it), what that
listing looked at (freshness.Watch), and the listing cache's path and identity. When every
path in the record is as it was, the variables the apps read are the same, the listing
cache is the same file and the content index still vouches for it, building the listing
again would change nothing, so the query runs at once. Anything else, or anything this path
does not handle (`--app`, dates, `-v`, a damaged index), is answered by the full path.
"""

from __future__ import annotations

import sys

from sessidx import render
from sessidx.model import Session

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable

    from sessidx.config import Env
    from sessidx.content.query import Hit
    from sessidx.freshness import Watch
    from sessidx.index import Index


def keep(db: sqlite3.Connection, watch: Watch, index: Index, path: str | None, listing: str | None) -> None:
    """After a refresh that left the content index complete for `listing` (the identity of
    the listing cache at `path`): what the listing looked at, for the next search. Anything it
    cannot vouch for (the demo home, a record it could not trust) removes the last one."""
    from sessidx.content.store import DatabaseError

    record = watch.record() if path is not None and listing is not None and not index.demo else None
    try:
        db.execute("CREATE TABLE IF NOT EXISTS kept(path TEXT NOT NULL, listing TEXT NOT NULL, record BLOB NOT NULL)")
        db.execute("DELETE FROM kept")
        if record is not None:
            db.execute("INSERT INTO kept VALUES (?, ?, ?)", (path, listing, record))
    except DatabaseError:  # a full disk, say: the next search takes the full path, as before
        pass


def kept_record(db: sqlite3.Connection) -> tuple[str, str, bytes] | None:
    """(the listing cache's path, its identity, the record) the last complete refresh kept."""
    from sessidx.content.store import DatabaseError

    try:
        row = db.execute("SELECT path, listing, record FROM kept").fetchone()
    except DatabaseError:  # no such table: kept by no refresh yet
        return None
    if row is None or type(row[0]) is not str or type(row[1]) is not str or type(row[2]) is not bytes:
        return None
    return row[0], row[1], row[2]


def search_kept(env: Env, out: Callable[[str], None], query: str, as_json: bool, limit: int) -> int | None:
    """The search answered from the content index when nothing changed; None when the full
    path must answer (something changed, or it cannot be told)."""
    from sessidx.content import store

    if not store.enabled(env):
        return None
    try:
        db = store.connect(env, [])
    except (OSError, store.DatabaseError):
        return None
    from sessidx.content.unchanged import listing_stamp, unchanged
    from sessidx.freshness import begin

    try:
        kept = kept_record(db)
        if kept is None or listing_stamp(kept[0]) != kept[1] or not unchanged(db, kept[1]):
            return None
        if (holds := begin(kept[2], env)) is None:  # most stats of a big home go on in a child
            return None
        try:
            from sessidx.content import query as content_query

            hits = content_query.search(db, query, None, limit)
        finally:
            held = holds()  # the child is waited for whatever happened
        if not held:
            return None  # the hits are dropped unseen: the full path answers
        if sys.stderr.isatty():
            sys.stderr.write("\r\x1b[K")  # as the full path, which clears its progress line
        if cut := content_query.query_note(query):
            render.warn(cut)
    except store.DatabaseError:
        return None  # the full path says so and makes it again
    finally:
        db.close()
    return show(out, hits, query, as_json)


def show(out: Callable[[str], None], hits: list[Hit], query: str | None, as_json: bool) -> int:
    """What `sessidx search` prints of its hits."""
    from sessidx.errors import ExitCode

    if not hits:
        render.warn(f"no session says {query!r}")
        return ExitCode.ERROR
    if as_json:
        from sessidx.redact import mask  # the title is often the first prompt: masked as the snippet is

        lines = [render.json_line({**h.session.to_json(), "title": h.session.title and mask(h.session.title),
                                   "snippet": h.snippet, "score": round(-h.score, 3),
                                   **({"also": h.also} if h.also else {})}) for h in hits]
    else:
        sessions = [Session(**{**h.session.to_json(), "title": render.with_also(h.snippet, h.also)}) for h in hits]
        lines = render.table(sessions, render.terminal_width(160), header=sys.stdout.isatty())
    if lines:
        out("\n".join(lines))
    return ExitCode.OK
