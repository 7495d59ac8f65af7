"""`sessidx search`: the content index answers at once, and what changed is looked for after.

The full path lists every session (25 app modules, a stamp per source, a Session each) before
it answers; at 10,000 sessions even the stats that tell whether anything changed (one per
transcript) cost more than twice a bare interpreter's start. So a plain search answers from
the index as the last complete refresh left it, and checks after, in a child of its own once
the answer is out (check_after). The refresh that made the index complete keeps, in the index
itself (table `kept`, dropped with it), what that listing looked at (freshness.Watch), and the
listing cache's path and identity. The child stats those paths again; when something
changed it says on stderr how many sessions the answer may have missed and brings the index
up to date, so the next search answers with them. No answer is stale without that line:
the check of every answer ran against the index that answered it (a search that finds a
refresh running waits for it, or takes the full path, which says what it searched).

The full path answers when this one cannot: no complete index (the first search builds it
before answering), the listing cache rewritten since (a `list` or the picker saw a change),
a refresh still running, `--app`, dates, `-v`, a damaged index.
"""

from __future__ import annotations

import os
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

    Refresh = Callable[..., dict[str, int] | None]  # local.refresh_content


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
    row = _kept_row(db, "SELECT path, listing, record FROM kept")
    return None if row is None or type(row[2]) is not bytes else (row[0], row[1], row[2])


def _kept_row(db: sqlite3.Connection, select: str, *params: str) -> tuple[str, str, object] | None:
    from sessidx.content.store import DatabaseError

    try:
        row = db.execute(select, params).fetchone()
    except DatabaseError:  # no such table: kept by no refresh yet
        return None
    if row is None or type(row[0]) is not str or type(row[1]) is not str:
        return None
    return row[0], row[1], row[2]


def search_kept(env: Env, out: Callable[[str], None], query: str, as_json: bool,
                limit: int, wait_until: float) -> tuple[int, str] | None:
    """The search answered from the content index, as it was when last brought up to date:
    (the exit code, the identity of the listing it vouched for, for `check_after`); None when
    the full path must answer (no complete index, the listing cache rewritten since, a refresh
    running). The record itself (a megabyte at 10,000 sessions) is read by the check alone."""
    from sessidx.content import store

    if not store.enabled(env):
        return None
    if store.wait_for_indexer(env, store.seconds_left(wait_until)) is not None:  # the last search's check, say
        return None  # still indexing: the full path says so
    try:
        db = store.connect(env, [])
    except (OSError, store.DatabaseError):
        return None
    from sessidx.content.unchanged import listing_stamp, unchanged

    try:
        kept = _kept_row(db, "SELECT path, listing, NULL FROM kept")
        if kept is None or listing_stamp(kept[0]) != kept[1] or not unchanged(db, kept[1]):
            return None
        from sessidx.content import query as content_query

        hits = content_query.search(db, query, None, limit)
        if sys.stderr.isatty():
            sys.stderr.write("\r\x1b[K")  # as the full path, which clears its progress line
        if cut := content_query.query_note(query):
            render.warn(cut)
    except store.DatabaseError:
        return None  # the full path says so and makes it again
    finally:
        db.close()
    return show(out, hits, query, as_json), kept[1]


# How long the check after an answer may run, its refresh included; past it the refresh stops
# (what it read is kept) and the next search, finding no record, takes the full path.
CHECK_SECONDS = 60


def check_after(env: Env, listing: str, detach: bool, refresh: Refresh) -> None:
    """After an answer from the index: whether anything the listing looks at changed since the
    record was kept; if so, a line on stderr saying how many sessions the answer may have
    missed, and the index brought up to date for the next search. `detach`: in a child of its
    own (os.fork, after the answer is flushed), so this process can exit now: stdin and stdout
    are let go at once, stderr once the line is written (a reader of it waits that long), and
    the child ends within CHECK_SECONDS. Otherwise (an in-process caller) here and now.
    `refresh` brings the index up to date (local.refresh_content: the listing is the caller's floor)."""
    if not detach:
        _here(env, listing, refresh)
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:
            continue  # the caller's own flush says so
    try:
        pid = os.fork()
    except OSError:
        _here(env, listing, refresh)  # no child: the check waits here
        return
    if pid:
        return
    try:
        import signal

        os.setsid()  # out of the terminal's process group: the shell's Ctrl-C and hang-ups are not for it
        nowhere = os.open(os.devnull, os.O_RDWR)
        os.dup2(nowhere, 0)
        os.dup2(nowhere, 1)
        signal.signal(signal.SIGALRM, _too_long)
        signal.alarm(CHECK_SECONDS)
        _bring_up_to_date(env, listing, lambda: os.dup2(nowhere, 2), refresh)
    except BaseException:  # noqa: BLE001 - nothing of a child's may reach the caller's terminal as a traceback
        pass
    finally:
        os._exit(0)


def _here(env: Env, listing: str, refresh: Refresh) -> None:
    from sessidx.content.store import DatabaseError

    try:
        _bring_up_to_date(env, listing, lambda: None, refresh)
    except (OSError, DatabaseError) as exc:  # the answer stands; the next search takes the full path
        render.warn(f"the content index was not brought up to date ({exc}): the next search does it")


class _TooLong(Exception):
    """The check after an answer ran past CHECK_SECONDS."""


def _too_long(signum: int, frame: object) -> None:
    raise _TooLong()


def _bring_up_to_date(env: Env, listing: str, done_telling: Callable[[], object], refresh: Refresh) -> None:
    from sessidx.content import store
    from sessidx.freshness import fresh

    db = store.connect(env, [])
    try:
        row = _kept_row(db, "SELECT path, listing, record FROM kept WHERE listing = ?", listing)
        if row is not None and fresh(row[2] if type(row[2]) is bytes else None, env):
            return
        told = _refreshed(env, db, done_telling, refresh)
        if row is None and not told:  # a refresh in between answer and check: what did it change?
            render.warn("the content index was brought up to date while this search ran: this answer may miss a"
                        " session; search again for it")
    finally:
        db.close()
        sys.stderr.flush()
        done_telling()


def _refreshed(env: Env, db: sqlite3.Connection, done_telling: Callable[[], object], refresh: Refresh) -> bool:
    """The index brought up to date after a check that failed, stderr told how many sessions
    changed (before any is read, then let go); whether it said something."""
    told = False

    def planned(count: int) -> None:
        nonlocal told
        if count and not told:
            render.warn(changed_note(count))
            told = True
        sys.stderr.flush()
        done_telling()

    forget(db)  # until the refresh below ends well, the next search takes the full path
    if refresh(env, db, planned=planned) is None:
        render.warn("something changed since the content index was last brought up to date, and another "
                    "sessidx is indexing: this answer may miss a session; search again for it")
        return True
    return told


def changed_note(count: int) -> str:
    """What a search says when its check found sessions changed since the index it answered from."""
    return (f"{count} session{'s' if count != 1 else ''} changed since the content index was last brought up to "
            f"date: this answer may miss {'it' if count == 1 else 'them'}; search again for "
            f"{'it' if count == 1 else 'them'}")


def forget(db: sqlite3.Connection) -> None:
    """No record kept: the next search checks nothing and takes the full path."""
    import contextlib

    from sessidx.content.store import DatabaseError

    with contextlib.suppress(DatabaseError):  # no such table: nothing kept
        db.execute("DELETE FROM kept")


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
