"""The picker's content mode: one keystroke's rows."""

from __future__ import annotations

import os

from sessidx.content.query import search, words_of
from sessidx.content.store import open_index, read_progress, wait_for_indexer

TYPE_CHECKING = False  # see model.Fields
if TYPE_CHECKING:
    from collections.abc import Callable

    from sessidx.config import Env


def feed(env: Env, out: Callable[[str], None], query: str) -> int:
    """The picker's content mode, on each keystroke: matching sessions with their snippets,
    the query's words marked. The refresh that Ctrl-F started runs apart; this waits for it
    (fzf shows its spinner, and the header says why) so the rows are never stale. It runs
    without `sessidx.commands` and imports one app module per app hit: a keystroke's budget."""
    import sys

    from sessidx import render
    from sessidx.errors import SessidxError

    columns = "\t" + render.content_header()
    head: str | None = columns
    if read_progress(env):
        out(columns + "  (reading what was said in your sessions; the matches follow)")
        sys.stdout.flush()
        head = None
    wait_for_indexer(env, seconds=120)
    _, app, here = render.prompt_state(env.get("FZF_PROMPT"))  # Ctrl-A and Ctrl-S narrow it
    try:
        hits = search(open_index(env), query, app=app, limit=30,  # a screenful; typing narrows it
                      folder=os.environ.get("PWD", "") if here else None)
    except SessidxError as exc:
        hits, head = [], (head and f"{head}  ({render.clean(str(exc))})")
    if head is not None:
        out(head + ("  (no session says that)" if not hits and query.strip() else ""))
    words = words_of(query)
    rows = [f"{h.session.key}\t{render.content_row(h.session, h.snippet, words, h.also)}" for h in hits]
    if rows:
        out("\n".join(rows))
    return 0
