"""Matching and id lookup over the index (title, folder, branch, app and id; never message text)."""

from __future__ import annotations

from sessidx.errors import SessidxError
from sessidx.model import Session

MIN_PREFIX = 4


def matches(session: Session, query: str) -> bool:
    """Case-insensitive: every word of the query is a substring of one of the five fields."""
    haystack = "\n".join(
        v for v in (session.title, session.cwd, session.branch, session.app, session.id) if v
    ).casefold()
    return all(word in haystack for word in query.casefold().split())


def find(sessions: list[Session], query: str | None) -> list[Session]:
    return [s for s in sessions if matches(s, query)] if query else sessions


def resolve(sessions: list[Session], ident: str) -> Session:
    """A full id, `app:id`, or a unique prefix of at least four characters."""
    app, _, rest = ident.partition(":")
    pool = sessions
    if rest and any(s.app == app for s in sessions):
        pool, ident = [s for s in sessions if s.app == app], rest
    exact = [s for s in pool if s.id == ident]
    if len(exact) == 1:
        return exact[0]
    if len(ident) < MIN_PREFIX and not exact:
        raise SessidxError(f"id prefix {ident!r} is too short: give at least {MIN_PREFIX} characters")
    found = exact or [s for s in pool if s.id.startswith(ident)]
    if not found:
        raise SessidxError(f"no session matches {ident!r}")
    if len(found) > 1:
        shown = ", ".join(f"{s.app}:{s.id}" for s in found[:5])
        raise SessidxError(f"{ident!r} is ambiguous: {len(found)} sessions match ({shown})")
    return found[0]
