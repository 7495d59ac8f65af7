"""The preview beside the picker's list: what Enter would do for one session, and what was said.

fzf runs `sessidx preview --shell SHELL KEY` on every arrow key, a new process each time, so
this path loads one app module (the one the key names) and neither `commands` (which loads all
of them), `json`, `re` nor `subprocess`: the session comes from the lookup kept after the
index, the plan is made fresh (folder, branch, modes, what the installed CLI accepts) exactly
as Enter makes it. Any other key (a host's session, a short id, one the cache does not know
yet) goes the long way, through `commands.preview`.
"""

from __future__ import annotations

import sys

from sessidx import render
from sessidx.apps import app_named
from sessidx.errors import ExitCode
from sessidx.index import cached_session

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Callable

    from sessidx.config import Env
    from sessidx.model import Session
    from sessidx.resume import Plan


def preview(env: Env, out: Callable[[str], None], ident: str, shell: str | None) -> int:
    session = cached_session(env, ident) if ":" in ident and not ident.startswith("@") else None
    if session is None:
        from sessidx import commands

        return commands.preview(env, out, ident, shell)
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
        from sessidx.commands import _best_hit

        lines += ["", *_best_hit(env, session, query, width)]
    app = app_named(session.app)
    lines += ["", *render.conversation(recent(session, app) if app is not None else [], width)]
    out("\n".join(lines))  # one write: stdout may be unbuffered
    return ExitCode.OK
