"""The picker's content mode: one keystroke's rows."""

from __future__ import annotations

import os

from sessidx import render
from sessidx.content.query import Hit, query_note, search, words_of
from sessidx.content.store import KEYSTROKE_WAIT, DatabaseError, open_index, wait_for_indexer
from sessidx.errors import SessidxError
from sessidx.refusals import row_marks

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Callable

    from sessidx.config import Env
    from sessidx.remote import KeystrokeSearch


def feed(env: Env, out: Callable[[str], None], query: str) -> int:
    """The picker's content mode, on each keystroke: matching sessions with their snippets,
    the query's words marked. The refresh that Ctrl-F started runs apart; this waits for it
    a moment (KEYSTROKE_WAIT, fzf shows its spinner), never for one that shows no sign of
    life, then searches what is indexed, and the header says so. It runs without
    `sessidx.commands` and imports one app module per app hit: a keystroke's budget."""
    notes = []
    _, app, here = render.prompt_state(env.get("FZF_PROMPT"))  # Ctrl-A and Ctrl-S narrow it
    from sessidx.querywords import parse

    filters = parse(query)  # `app:NAME` and `since:WHEN` in the query narrow it too
    from sessidx.querywords import unknown_apps

    if unknown := unknown_apps(query):
        notes.append(render.clean(unknown))
    cut = query_note(query)
    query = filters.rest
    if filters.apps is not None and len(filters.apps) == 1 and app in (None, *filters.apps):
        app = next(iter(filters.apps))
    asking = _ask_hosts(env, query, app) if not here else None  # a host's sessions are never "here"
    indexer = wait_for_indexer(env, seconds=KEYSTROKE_WAIT)
    if indexer is not None:
        notes.append(indexer.note())
    if cut:
        notes.append(cut)
    try:
        hits = search(open_index(env), query, app=app, limit=30,  # a screenful; typing narrows it
                      folder=os.environ.get("PWD", "") if here else None, since=filters.since_ms)
        if filters.apps is not None:
            hits = [h for h in hits if h.session.app in filters.apps]
    except SessidxError as exc:
        hits = []
        notes.append(render.clean(str(exc)))
    except DatabaseError as exc:  # found while reading it: the next refresh (Ctrl-F, search) makes it again
        hits = []
        notes.append(render.clean(f"the content index is damaged ({exc}): the next search makes it again"))
    else:
        if not hits and query.strip() and asking is None:
            notes.append("no session says that")
    if asking is not None:
        hits = [h for h in _merged(hits, asking, notes)
                if (filters.apps is None or h.session.app in filters.apps)
                and (filters.since_ms is None or h.session.mtime >= filters.since_ms)]
        if not hits and query.strip():
            notes.append("no session says that")
    out(render.content_header(hint=not query.strip()) + "".join(f"  ({note})" for note in notes))
    words = words_of(query)
    marks = row_marks(env, [h.session for h in hits])  # as the title rows mark them: refusals.py
    rows = [f"{render.content_row(h.session, h.snippet, words, h.also, marks.get(h.session.key, ''))}\t{h.session.key}"
            for h in hits]
    if rows:
        out("\n".join(rows))
    if "FZF_QUERY" in env.vars:  # fzf's reload: what this list was made for, as a title list says it
        from sessidx.picker import note_loaded

        note_loaded(env, filters.words)
    return 0


def _ask_hosts(env: Env, query: str, app: str | None) -> KeystrokeSearch | None:
    """The SSH hosts asked this keystroke's query (remote.KeystrokeSearch), or None: no host is
    named, or no query. (The hosts and their modules load only when a host is named.)"""
    from sessidx.hosts import configured

    hosts = configured(env)[0] if query.strip() else []
    if not hosts:
        return None
    from sessidx.remote import KeystrokeSearch

    return KeystrokeSearch(env, hosts, query, app, limit=30)


def _merged(local: list[Hit], asking: KeystrokeSearch, notes: list[str]) -> list[Hit]:
    """This machine's hits (in their ranked order) and the hosts' (best score first), merged by
    score as `search --host` merges them: a screenful."""
    from sessidx.render import clean

    found, host_notes = asking.results()
    notes += [clean(note) for note in host_notes]
    remote = []
    for score, session, snippet, also in found:
        hit = Hit(session, -score, snippet, "")
        hit.also = also
        remote.append(hit)
    merged: list[Hit] = []
    i = j = 0
    while i < len(local) or j < len(remote):
        if j == len(remote) or (i < len(local) and local[i].score <= remote[j].score):
            merged.append(local[i])
            i += 1
        else:
            merged.append(remote[j])
            j += 1
    return merged[:30]
