"""`sessidx search` when nothing changed: the content index answers without a listing.

The full path lists every session (25 app modules, a stamp per source, a Session each) only
to learn that nothing changed since the content index was last complete. The refresh that
made it complete also kept, beside the listing's cache, what that listing looked at
(freshness.Watch) and the listing cache's identity it made complete: `index-<hash>.fresh`.
When every path in it is as it was, the variables the apps read are the same, the listing
cache is the same file and the content index still vouches for it, building the listing
again would change nothing, so the query runs at once. Anything else, or anything this path
does not handle (`--app`, dates, `-v`, a damaged index), is answered by the full path.
"""

from __future__ import annotations

import marshal
import os
import sys

from sessidx import cache, render
from sessidx.model import Session

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Callable

    from sessidx.config import Env
    from sessidx.content.query import Hit
    from sessidx.freshness import Watch
    from sessidx.index import Index


def fresh_path(env: Env) -> str | None:
    from sessidx.index import cache_path

    path = cache_path(env)
    return path[:-len(".marshal")] + ".fresh" if path and path.endswith(".marshal") else None


def keep(env: Env, watch: Watch, index: Index, listing: str | None) -> None:
    """After a refresh that left the content index complete for `listing` (the listing
    cache's identity): what the listing looked at, for the next search. Anything it cannot
    vouch for (the demo home, a record it could not trust) removes the last one."""
    path = fresh_path(env)
    if path is None:
        return
    record = watch.record() if listing is not None and not index.demo else None
    if record is None:
        drop(env)
    else:
        cache.write(path, marshal.dumps((listing, record)))


def drop(env: Env) -> None:
    path = fresh_path(env)
    if path is not None:
        import contextlib

        with contextlib.suppress(OSError):
            os.unlink(path)


def search_kept(env: Env, out: Callable[[str], None], query: str, as_json: bool, limit: int) -> int | None:
    """The search answered from the content index when nothing changed; None when the full
    path must answer (something changed, or it cannot be told)."""
    from sessidx.freshness import fresh

    path = fresh_path(env)
    data, _ = cache.read(path)
    try:
        listing, record = marshal.loads(data) if data else (None, None)
    except (ValueError, EOFError, TypeError):
        return None
    if type(listing) is not str or type(record) is not bytes or not fresh(record, env):
        return None
    from sessidx.content.unchanged import listing_stamp

    if listing_stamp(path[:-len(".fresh")] + ".marshal" if path else None) != listing:
        return None
    from sessidx.content import store

    if not store.enabled(env):
        return None
    try:
        db = store.connect(env, [])
    except (OSError, store.DatabaseError):
        return None
    from sessidx.content import query as content_query
    from sessidx.content.unchanged import unchanged

    try:
        if not unchanged(db, listing):
            return None
        if sys.stderr.isatty():
            sys.stderr.write("\r\x1b[K")  # as the full path, which clears its progress line
        if cut := content_query.query_note(query):
            render.warn(cut)
        hits = content_query.search(db, query, None, limit)
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
