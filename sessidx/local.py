"""This machine's sessions: the index loaded (with its notes), an app checked by name, the
sessions a query and filters pick, one session's resume plan, the content index brought up to
date. What the commands and the host side share, so neither reads the other's names.
"""

from __future__ import annotations

from sessidx import render
from sessidx.apps import NAMES
from sessidx.config import Env
from sessidx.errors import SessidxError
from sessidx.index import Index, cache_path, cached_session, load, wait_for_first_press
from sessidx.model import Session
from sessidx.refusals import Looks, refusals

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from sessidx.resume import Plan

DEMO_NOTE = "no agent sessions found here; showing the demo home (fixtures/home)"


def listed(env: Env, sessions: list[Session], as_json: bool, hosts: bool = False,
           present: frozenset[str] = frozenset()) -> list[str]:
    """`sessidx list`'s lines: a table whose rows carry their refusal mark, or a JSON object a
    session with `"refused"`; `hosts`: with a `"host"` field too, and a host's session without
    `"refused"` (it is checked on its host, when asked); `present`: as refusals.Looks takes it."""
    import sys

    refused = refusals(env, sessions, Looks(present))  # what Enter would refuse, and why: Enter's checks
    if not as_json:
        return render.table(sessions, render.terminal_width(160), header=sys.stdout.isatty(),
                            marks={key: r.mark for key, r in refused.items()})
    lines = []
    for s in sessions:
        host = getattr(s, "host", None)
        fields = {**s.to_json(), "host": host} if hosts else s.to_json()
        if not host:
            fields["refused"] = r.to_json() if (r := refused.get(s.key)) else None
        lines.append(render.json_line(fields))
    return lines


def listing(env: Env, refresh: bool = True, verbose: bool = False, announce: bool = True) -> Index:
    index = load(env, None, refresh)
    if index.demo and announce:
        render.warn(DEMO_NOTE)
    if verbose:
        for problem in index.problems:
            render.warn(problem)
    return index


def check_app(app: str | None) -> None:
    if app is not None and app not in NAMES:
        raise SessidxError(f"unknown app {app!r}: known apps are {', '.join(NAMES)}")


def select(sessions: list[Session], query: str | None, app: str | None, archived: bool) -> list[Session]:
    check_app(app)
    chosen = [s for s in sessions if (app is None or s.app == app) and (archived or not s.archived)]
    if not query:
        return chosen
    from sessidx.search import find

    return find(chosen, query)


def session_for(env: Env, ident: str, fresh: bool = False) -> Session:
    """One session by its key or id prefix. `fresh`: re-read what changed first (a resume acts
    on it); otherwise the cache answers, and is refreshed only if it does not know the id yet."""
    from sessidx.search import resolve

    if not fresh and ":" in ident and (found := cached_session(env, ident)) is not None:  # the picker's `app:id`
        return found
    if not fresh and ":" in ident and wait_for_first_press(env) and (found := cached_session(env, ident)):
        return found  # the first press's index
    try:
        return resolve(listing(env, refresh=fresh, announce=False).sessions, ident)
    except SessidxError:
        if fresh:
            raise
        return resolve(listing(env, announce=False).sessions, ident)


def plan_for(env: Env, ident: str, allow_permissive: bool, fresh: bool,
             wait_for_cli: bool = True) -> tuple[Session, Plan]:
    """The session (session_for) and the plan for it."""
    from sessidx.resume import make_plan

    session = session_for(env, ident, fresh)
    return session, make_plan(session, env, allow_permissive, wait_for_cli)


def refresh_content(env: Env, db: Any, report: Callable[[Any], None] | None = None, announce: bool = False,
                    planned: Callable[[int], None] | None = None) -> dict[str, int] | None:
    """Bring the content index up to date; None when another sessidx is doing it right now.
    `planned` is told how many sessions are new, changed or gone, before any is read."""
    from sessidx.content.reading import refresh
    from sessidx.content.store import Busy, lock, write_progress

    try:
        held = lock(env)
    except Busy:
        return None
    from sessidx.content.kept import keep
    from sessidx.content.unchanged import listing_stamp, remember, unchanged
    from sessidx.freshness import Watch

    with held:
        with Watch(env) as watch:  # what the listing looks at: the next search checks it alone
            index = listing(env, announce=announce)
        sessions = index.sessions
        stamp = listing_stamp(listing_file := cache_path(env))
        if unchanged(db, stamp):  # no session changed since the last complete refresh
            keep(db, watch, index, listing_file, stamp)
            if planned:
                planned(0)
            return {"sources": 0, "unchanged": len(sessions)}
        try:
            stats = refresh(db, sessions, report, planned)
            remember(db, stamp, len(sessions), stats)
            keep(db, watch, index, listing_file, stamp if unchanged(db, stamp) else None)
            return stats
        finally:
            write_progress(env, None)


def refresh_or_wait(env: Env, refresh: Callable[[], dict[str, int] | None],
                    seconds: float) -> tuple[dict[str, int] | None, str | None]:
    """`refresh()` (refresh_content, as the caller makes it); when another sessidx is doing it,
    that one waited for up to `seconds` (while it shows signs of life) and `refresh()` again
    for what it left. Its stats, or None; and a note when the index may still lack sessions:
    what is indexed so far answers then, and the note says so."""
    from sessidx.content.store import wait_for_indexer

    done = refresh()
    if done is None and wait_for_indexer(env, seconds) is None:
        done = refresh()
    if done is not None:
        return done, None
    indexer = wait_for_indexer(env, 0)
    return None, indexer.note() if indexer else "another sessidx was indexing: searching what is indexed"


class ThisMachine:
    """This machine as a place (where.Place): its index, its plans, its content index."""

    def __init__(self, env: Env) -> None:
        self.env = env

    def sessions(self) -> list[Session]:
        """Every session, newest first, archived ones too."""
        return list(listing(self.env, announce=False).sessions)

    def session(self, key: str) -> Session:
        return session_for(self.env, key)

    def plan(self, key: str, allow_permissive: bool = False, fresh: bool = False) -> Plan:
        """`fresh`: what changed re-read first (a resume acts on it); else the cache answers."""
        return plan_for(self.env, key, allow_permissive, fresh)[1]

    def search(self, query: str, app: str | None = None, limit: int = 50) -> list[tuple[float, Session, str]]:
        """(score, session, snippet) of the sessions that said it, best first, after a refresh."""
        from sessidx.content import query as content_query
        from sessidx.content import store

        refresh_content(self.env, db := store.open_index(self.env))
        return [(-h.score, h.session, h.snippet) for h in content_query.search(db, query, app, limit)]

    def preview(self, out: Callable[[str], None], key: str, shell: str) -> int:
        from sessidx.preview import show  # what a move shows, however the session was found

        session, plan = plan_for(self.env, key, allow_permissive=False, fresh=False, wait_for_cli=False)
        return show(self.env, out, session, plan, shell)
