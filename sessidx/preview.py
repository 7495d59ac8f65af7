"""The preview beside the picker's list: what Enter would do for one session, and what was said.

fzf runs `sessidx preview --shell SHELL KEY` on every arrow key, a new process each time, so
this path loads one app module (the one the key names) and neither `commands` (which loads all
of them), `json`, `re` nor `subprocess`: the session comes from the lookup kept after the
index, the plan is made fresh (folder, branch, modes, what the installed CLI accepts) exactly
as Enter makes it. Any other key (a host's session, a short id, one the cache does not know
yet) goes the long way: `preview` answers None and the command line asks `commands.preview`.
"""

from __future__ import annotations

import sys

from sessidx import render
from sessidx.apps import app_named
from sessidx.errors import ExitCode, SessidxError
from sessidx.index import cached_session
from sessidx.keys import on_host

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Callable

    from sessidx.config import Env
    from sessidx.model import Session
    from sessidx.resume import Plan


def preview(env: Env, out: Callable[[str], None], ident: str, shell: str | None) -> int | None:
    """The fast path; None when the lookup cannot answer (the caller goes the long way)."""
    session = cached_session(env, ident) if ":" in ident and not on_host(ident) else None
    if session is None:
        return None
    from sessidx.resume import make_plan

    return show(env, out, session, make_plan(session, env, allow_permissive=False, wait_for_cli=False), shell)


def show(env: Env, out: Callable[[str], None], session: Session, plan: Plan, shell: str | None) -> int:
    from sessidx.conversation import recent
    from sessidx.shells import detect_shell

    # colour in fzf's preview pane (it sets FZF_PREVIEW_COLUMNS) and on a terminal only
    colour = bool(env.get("FZF_PREVIEW_COLUMNS")) or sys.stdout.isatty()
    given = env.get("FZF_PREVIEW_COLUMNS")
    width = int(given) if given and given.isdigit() and int(given) >= 10 else render.terminal_width(80)
    lines = render.preview(session, plan, detect_shell(shell, env.vars), colour)
    query = env.get("FZF_QUERY") if render.prompt_state(env.get("FZF_PROMPT"))[0] else None
    if query:  # content mode: the best match of the query in this session
        lines += ["", *best_hit(env, session, query, width)]
    app = app_named(session.app)
    lines += ["", *render.conversation(recent(session, app) if app is not None else [], width)]
    out("\n".join(lines))  # one write: stdout may be unbuffered
    return ExitCode.OK


def best_hit(env: Env, session: Session, query: str, width: int) -> list[str]:
    """Content mode: the message of this session that best matches the query, words marked."""
    from sessidx.content import query as content_query
    from sessidx.content.store import DatabaseError, open_index

    words, snippet_width = content_query.words_of(query), 3 * max(20, width - 6)
    try:
        db = open_index(env)
        if rows := content_query.session_matches(db, query, session.key):  # Alt-N / Alt-P step through them
            at = (match_number(env) - 1) % len(rows)
            said = content_query.session_match(db, query, session, rows[at], snippet_width)
            title = "best match" if at == 0 else f"match {at + 1} of {len(rows)}"
            return render.conversation([said], width, words, title=title + (" · Alt-N next" if len(rows) > 1 else ""))
        found = content_query.search(db, query, session_key=session.key, limit=1, snippet_width=snippet_width)
    except (SessidxError, DatabaseError):  # off, or damaged: the preview goes on without it
        return []
    if not found:
        return []
    return render.conversation([(found[0].role, found[0].snippet)], width, words, title="best match")


def match_number(env: Env) -> int:
    """Which match the preview shows, 1 the best: fzf's preview label, ` match N of M `, that
    Alt-N and Alt-P set (`cycle match`) and moving to another session clears."""
    label = (env.get("FZF_PREVIEW_LABEL") or "").split()
    return int(label[1]) if len(label) == 4 and label[0] == "match" and label[1].isdigit() else 1
