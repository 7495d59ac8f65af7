"""The commands: plain functions that return an exit code, printing at the edges.

A session's key goes to the place that holds it (where.place_of: this machine or a host), so no
command here knows the `@host/` form or imports the host code. `list` runs on a key press, so
what only planning needs (subprocess, git, quoting) is imported inside the functions that plan.
"""

from __future__ import annotations

import os
import sys
import time

from sessidx import local, render
from sessidx.apps import HOME_VARS, HOMES, NAMES, present
from sessidx.cache import folder_problem, remove
from sessidx.config import Env
from sessidx.errors import Cancelled, ExitCode, SessidxError, cannot_write
from sessidx.index import (
    Index,
    from_cache,
    load,
    mark_first_press,
    wait_for_first_press,
)
from sessidx.model import Session
from sessidx.readers import git_common_dir
from sessidx.refusals import row_marks
from sessidx.where import place_of

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from sessidx.resume import Plan

    Out = Callable[[str], None]  # where a command's lines go


INDEXING_NOTE = "indexing your sessions for the first time: they appear here in a moment"


def list_sessions(env: Env, out: Out, query: str | None = None, app: str | None = None,
                  as_json: bool = False, archived: bool = False, verbose: bool = False,
                  since: str | None = None, until: str | None = None) -> int:
    index = local.listing(env, verbose=verbose)
    sessions = local.select(index.sessions, query, app, archived)
    if since or until:
        from sessidx.when import bounds, within

        low, high = bounds(since, until)
        sessions = [s for s in sessions if within(s.mtime, low, high)]
    if not sessions:
        if since or until:
            from sessidx.when import describe

            kind = f"{app} session" if app else "session"
            render.warn(f"no {kind} {describe(since, until)}" + (f" matches {query!r}" if query else ""))
        else:
            render.warn(f"no session matches {query!r}" if query else f"no {app} sessions found" if app
                        else _nothing_found(index))
    query = query or ("--since/--until" if since or until else None)
    _emit(out, local.listed(env, sessions, as_json, present=index.present))
    return ExitCode.OK if sessions or not query else ExitCode.ERROR


def _nothing_found(index: Index) -> str:
    """Where sessidx looked, for an empty home: the apps' folders (or their override variables)."""
    env = index.env
    if env is None:
        return "no agent sessions found"
    places = []
    for home_vars, home_dirs in HOMES.values():
        moved = [f"${v}" for v in home_vars if v != "XDG_DATA_HOME" and env.get(v)]
        places += moved or [render.tilde(os.path.join(env.home, d)) for d in home_dirs]
    return f"no agent sessions found; looked in {', '.join(dict.fromkeys(places))}"


def _emit(out: Out, lines: list[str]) -> None:
    """All lines in one write: stdout may be unbuffered (PYTHONUNBUFFERED), and a write per
    line of a long list is a system call each."""
    if lines:
        out("\n".join(lines))


def build(env: Env, out: Out, verbose: bool = False) -> int:
    index = local.listing(env, verbose=verbose)
    live = [s for s in index.sessions if not s.archived]
    timings = "  ".join(f"{name} {ms:.0f} ms" for name, ms in index.timings_ms.items())
    out(f"{len(live)} sessions  {timings}")
    if index.problems and not verbose:
        render.warn(f"{len(index.problems)} sources skipped (see `sessidx build -v`)")
    return ExitCode.OK


def preview(env: Env, out: Out, ident: str, shell: str | None) -> int:
    from sessidx.shells import detect_shell

    return place_of(env, ident).preview(out, ident, detect_shell(shell, env.vars))


def _step_match(env: Env, out: Out, ident: str | None, step: int) -> int:
    """Alt-N / Alt-P in content mode: the preview label naming the next or previous match of
    the query in this session (fzf then redraws the preview); nothing in titles mode."""
    from sessidx.content import query as content_query
    from sessidx.content.store import DatabaseError, open_index
    from sessidx.preview import match_number

    query = env.get("FZF_QUERY") or ""
    if not ident or not render.prompt_state(env.get("FZF_PROMPT"))[0] or not query.strip():
        out("")
        return ExitCode.OK
    try:
        count = len(content_query.session_matches(open_index(env), query, ident))
    except (SessidxError, DatabaseError):
        count = 0
    out(f" match {(match_number(env) - 1 + step) % count + 1} of {count} " if count > 1 else "")
    return ExitCode.OK


def _confirmed(plan: Plan, yes: bool) -> Plan:
    """Refuse what must not run; ask about a branch change unless --yes."""
    if plan.error:
        raise SessidxError(f"not resuming {plan.app} session {plan.id[:8]}{plan.where}: {plan.error}")
    if plan.branch_differs and not yes:
        from sessidx.terminal import ask_yes_no

        question = (
            f"sessidx: {plan.app} session {plan.id[:8]}{plan.where} was on branch {plan.branch_recorded!r}, "
            f"the folder{' there' if plan.host else ''} is now on {plan.branch_current!r}. Resume anyway?"
        )
        if not ask_yes_no(question):
            raise Cancelled()
    return plan


def resume(env: Env, out: Out, ident: str, as_json: bool = False, shell: str | None = None,
           allow_permissive: bool = False, yes: bool = False, checked: str | None = None) -> int:
    from sessidx.shells import detect_shell

    if checked is not None:
        from sessidx.picker import same_row

        same_row(checked, ident)
    plan = place_of(env, ident).plan(ident, allow_permissive, fresh=True)  # a host's: made there
    if as_json:
        # a host's plan also says which host, and the line run here (`ssh -t HOST -- ...`)
        out(render.json_line(plan.to_json() | ({"host": plan.host, "line": plan.shell_line(detect_shell(
            shell, env.vars)) if plan.cwd else None} if plan.host else {})))
        return ExitCode.OK if plan.ok or (yes and plan.error is None) else ExitCode.ERROR
    for held in plan.held_back:
        render.warn(f"held back {held.flag}: {held.reason}")
    out(_confirmed(plan, yes).shell_line(detect_shell(shell, env.vars)))
    return ExitCode.OK


def pick(env: Env, out: Out, query: str | None, shell: str | None) -> int:
    """The picker without kept rows (keypress.pick tries those first): from the index cache, or
    on the first press ever an empty frame that the rows stream into."""
    from sessidx.picker import fzf_binary, has_tty, run_fzf, state_folder, terminal_size
    from sessidx.shells import detect_shell

    if not has_tty():
        return list_sessions(env, out, query)  # no terminal to draw on: a plain list instead
    shell_name = detect_shell(shell, env.vars)
    size = terminal_size()
    width = render.list_width(size[0])
    from sessidx.hosts import configured

    hosts = bool(configured(env)[0])
    first = from_cache(env, present(env))
    note: str | None
    cold = first is None and _any_source(env)
    state = state_folder(env)
    cut = None
    lines: list[str] | int
    if cold:
        # The first press ever: no cache to draw from. fzf opens at once with a note; the
        # newest rows come first and end fzf's input, then the whole list; the note leaves with it.
        cut = _cut_file(state)
        lines, note = _stream_into_pipe(env, width, cut), INDEXING_NOTE
    else:
        index = first if first and first.sessions else local.listing(env, announce=False)  # demo note: fzf's header
        sessions = [s for s in index.sessions if not s.archived]
        if hosts:  # what each host sent last, at once; fzf refreshes them in the background
            sessions = _with_hosts(env, sessions)
        if not sessions:
            raise SessidxError(_nothing_found(index))
        lines = render.picker_lines(sessions, here=os.environ.get("PWD"), width=width)
        note = local.DEMO_NOTE if index.demo else None
    fzf = fzf_binary(env.get("SESSIDX_FZF"))
    popup = env.get("SESSIDX_TMUX") if env.get("TMUX") else None
    try:
        picked = run_fzf(lines, query or "", fzf, env.get("SESSIDX_FZF_OPTS"), shell_name, note=note, tmux=popup,
                         cold=cold, size=size, hosts=hosts, state=state, cut=cut)
    finally:  # kept for the next key press, once this one's screen is up (the feed may not finish)
        if cut:
            remove(cut)
        if not cold and not index.demo:
            _keep_rows(env, width, sessions, render.picker_lines(sessions, width=width))
            from sessidx.picker import keep_launch

            keep_launch(env, shell_name, size, hosts)  # the next press: no Python before fzf
    return resume(env, out, picked.key, shell=shell_name, allow_permissive=picked.permissive)


def _cut_file(state: str | None) -> str | None:
    """A file that says the first press's input ends before its last row (_stream_into_pipe),
    for fzf's load event; None when it cannot be made (every row then comes on the input)."""
    from sessidx.picker import CUT_FILE

    if state is None:
        return None
    path = os.path.join(state, f"{CUT_FILE}{os.getpid()}")
    try:
        os.makedirs(state, mode=0o700, exist_ok=True)  # the first press ever: likely not made yet
        if folder_problem(state):
            return None
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600))
    except OSError:
        return None
    return path


def _any_source(env: Env) -> bool:
    """Whether any app has anything to read: a listing (stats), stopped at each app's first."""
    for app in present(env):
        try:
            if next(iter(app.sources(env)), None) is not None:
                return True
        except Exception:  # a broken store is something to read, and to report later
            return True
    return False


def _env_columns(env: Env, name: str, least: int) -> int | None:
    """A width fzf passed in `name`, if it is a number of at least `least` columns."""
    given = env.get(name)
    return int(given) if given and given.isdigit() and int(given) >= least else None


def _list_width(env: Env) -> int:
    """The width of fzf's list: FZF_COLUMNS in fzf's own reload, else the terminal's."""
    given = _env_columns(env, "FZF_COLUMNS", 40)  # 0 at fzf's start event, before it has measured
    if given:
        return render.list_width(given)
    try:
        fd = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
    except OSError:
        return 200
    try:
        return render.list_width(os.get_terminal_size(fd).columns)
    except OSError:
        return 200
    finally:
        os.close(fd)


SCOPES = (None, "repo", "here")  # Ctrl-S steps everywhere -> this folder -> this repository -> everywhere
_NEXT_SCOPE = {None: "here", "here": "repo", "repo": None}


def _in_scope(sessions: list[Session], scope: str | None, here: str | None) -> list[Session]:
    """This folder's sessions (`here`), this repository's (`repo`: below its top level, or in
    one of its worktrees wherever they are), or all."""
    if scope is None or here is None:
        return sessions
    if scope == "here":
        return [s for s in sessions if s.cwd == here]
    ours = git_common_dir(here)
    if ours is None:  # not in a repository: this folder and below
        return [s for s in sessions if s.cwd and (s.cwd == here or s.cwd.startswith(here.rstrip("/") + "/"))]
    common = {cwd: git_common_dir(cwd) for cwd in {s.cwd for s in sessions if s.cwd}}
    return [s for s in sessions if s.cwd and common[s.cwd] == ours]


def picker_feed(env: Env, out: Out, app: str | None = None, scope: str | None = None) -> int:
    """The fresh list for fzf's reload: changed sources re-read, every row's mark looked up;
    one app's, or this folder's or repository's. The whole list is also kept, rendered, for
    the next key press's first screen. During a first press ever, the list of its index, once
    built, as it is (it was listed a moment ago; the next press looks again): not a second
    build beside it on the cores that press needs."""
    here = os.environ.get("PWD")
    built_just_now = wait_for_first_press(env)
    if (since := env.get("SESSIDX_HOSTS_SINCE")) and since.isdigit():  # the picker's reload after its hosts' refresh
        from sessidx.hosts import refresh_wait, wait_for_refresh

        # SESSIDX_HOSTS_SINCE is when the argv was made; a shell's warm press (the kept argv,
        # reused) says when the key was pressed, which is when its hosts' refresh began
        pressed = env.get("SESSIDX_PRESSED_MS") or ""
        since_ms = max(int(since), int(pressed) if pressed.isdigit() else 0)
        # the first press ever waits as long as the hosts may take (its list is still filling);
        # a later one briefly: fzf may drop a key sent while a reload-sync is under way
        wait_for_refresh(env, since_ms, None if env.get("SESSIDX_HOSTS_COLD") else refresh_wait(env))
    index = load(env, refresh=not built_just_now)
    sessions = [s for s in index.sessions if not s.archived]
    marks = row_marks(env, sessions, index.present)
    width = _list_width(env)
    from sessidx.querywords import parse

    words = parse(env.get("FZF_QUERY"))  # `app:` and `since:` typed in the query (fzf's reloads pass it)
    if app is None and scope is None and env.get("FZF_PROMPT"):  # a keystroke's reload: Ctrl-A/S's are in the prompt
        _, app, scope = picker_filters(env)
    if app is not None or scope is not None or index.demo or words.filtering:
        chosen = _in_scope([s for s in sessions if (app is None or s.app == app)
                            and (words.apps is None or s.app in words.apps)
                            and (words.since_ms is None or s.mtime >= words.since_ms)], scope, here)
        if scope is None:  # a host's sessions are never "this folder": it is another machine's
            chosen = _with_hosts(env, chosen, app)
        lines = render.picker_lines(chosen, here=here, width=width, marks=marks)
        from sessidx.querywords import unknown_apps

        if unknown := unknown_apps(env.get("FZF_QUERY")):  # said in the column names' line, fzf's header
            lines[0] += f"  ({render.clean(unknown)})"
        _emit(out, lines)
        _note_loaded(env, words.words)
        return ExitCode.OK
    from sessidx.picker import here_first

    sessions = _with_hosts(env, sessions)
    lines = render.picker_lines(sessions, width=width, marks=marks)  # drawn once: kept, and shown
    cwds = _keep_rows(env, width, sessions, lines)
    shown = here_first(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"),
                       [(c or "").encode("utf-8", "surrogateescape") for c in cwds], here)
    out(shown.decode("utf-8", "surrogateescape").rstrip("\n"))
    _note_loaded(env, "")
    return ExitCode.OK


def _note_loaded(env: Env, words: str) -> None:
    """fzf's reload (FZF_QUERY is set, maybe empty): what its list was filtered by, for the picker's scripts."""
    if "FZF_QUERY" in env.vars:
        from sessidx.picker import note_loaded

        note_loaded(env, words)


def _with_hosts(env: Env, sessions: list[Session], app: str | None = None) -> list[Session]:
    """The local sessions and the SSH hosts' cached ones, newest first."""
    from sessidx.hosts import cached_sessions, newest_first

    remote = cached_sessions(env, app)
    return newest_first([*sessions, *remote]) if remote else sessions


def _keep_rows(env: Env, width: int, sessions: list[Session], lines: list[str]) -> list[str | None]:
    """Keep `lines` (the whole list, rendered) for the next key press's first screen; returns
    each row's folder."""
    from sessidx.picker import save_rows

    by_key = {s.key: s.cwd for s in sessions}
    cwds = [by_key[line.rsplit("\t", 1)[-1]] for line in lines[1:]]
    save_rows(env, width, lines, cwds, HOME_VARS)
    return cwds


def picker_stream(env: Env, out: Out, width: int | None = None, rows_done: Callable[[bool], None] | None = None,
                  first: int | None = None) -> int:
    """The first press ever (no cache yet): the sessions go to fzf as they are read, newest
    first across every app (index.build lists every source first, then parses newest first),
    in fixed columns; the next press finds them cached and sorted. A reader that went away
    (fzf closed early) stops the rows, not the indexing: the next press is a warm one.
    `rows_done(False)` is called after the last row, before the cache is written. With `first`,
    the rows are written once, with the batch that makes that many sessions (or the last), and
    `rows_done(True)` follows when more are to come: no row is written after it."""
    from sessidx.index import build  # not at the top: this module has a `build` of its own

    here = os.environ.get("PWD")
    width = width or _list_width(env)
    gone = False
    given = 0
    failed: SessidxError | None = None  # a write error (a full disk): said once the index is built

    def write(text: str) -> None:
        nonlocal gone, failed
        if gone:
            return
        try:
            out(text)
            sys.stdout.flush()
        except BrokenPipeError:
            gone = True
        except SessidxError as exc:
            gone, failed = True, exc
        except OSError as exc:  # the flush of a full disk
            gone, failed = True, SessidxError(cannot_write(exc))

    # the column names: with `first`, in the one write of the first rows (a line on its own
    # first kept fzf's loop asleep, 10 ms a turn while input lasts, when the rows and their end came)
    header = render.picker_lines([], width=width, widths=render.STREAM_WIDTHS)[0]
    if first is None:
        write(header)

    held: list[Session] = []

    def emit(batch: list[Session], last: bool) -> None:
        nonlocal given
        if given < 0:  # the rows have ended (`first`)
            return
        given += len(batch)
        ends = last or (first is not None and given >= first)
        if first is not None and not ends:  # one write with the input's end: a row that fzf picks up
            held.extend(batch)              # before it keeps its loop busy when the end comes
            return
        sessions = sorted((s for s in held + batch if not s.archived), key=lambda s: s.mtime, reverse=True)
        rows = render.picker_lines(sessions, here=here, width=width, marks=row_marks(env, sessions),
                                   widths=render.STREAM_WIDTHS)[1:]
        if first is not None:  # the one write (it ends the rows)
            write("\n".join([header, *rows]))
        elif rows:
            write("\n".join(rows))
        if ends:
            given = -1
            if rows_done is not None:
                rows_done(not last)

    marker = mark_first_press(env)
    try:
        build(env, present(env), on_batch=emit)
    finally:
        if marker is not None:
            remove(marker)
    if failed is not None:
        raise failed
    return ExitCode.OK


# The first press ever ends fzf's input after the top of the screen (index._Batches.FIRST):
# rows that end the input are drawn at once, where fzf looks for more input at growing
# intervals (10-50 ms) while it lasts. The load event then reloads the whole list.
FIRST_ROWS = 12


def _stream_into_pipe(env: Env, width: int, cut: str | None) -> int:
    """The first press's newest rows, from a forked child, into a pipe that is fzf's stdin: fzf
    opens at once and no second interpreter starts and imports before the first row (as a
    reload would). With a `cut` file (_cut_file), the pipe ends after FIRST_ROWS sessions, and
    fzf's `load` event reloads the whole list (picker.load_script), which waits for the index
    the child goes on to write (picker_feed); when that was every row, the child removes the
    file first. The child lets go of the terminal's and the shell's streams."""
    read_end, write_end = os.pipe()
    if os.fork():
        os.close(write_end)
        return read_end
    try:
        os.close(read_end)
        quiet = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # the shell reads our stdout to its end: the child must not hold it
            os.dup2(quiet, fd)
        os.dup2(write_end, 1)
        os.close(write_end)
        sys.stdout = open(1, "w", encoding="utf-8", errors="surrogateescape", closefd=False)  # noqa: SIM115
        def out(line: str) -> None:
            sys.stdout.write(line + "\n")

        def rows_done(more: bool) -> None:  # fzf's `load`: the end of its input, at once
            try:  # noqa: SIM105 - contextlib loads functools and collections into the stream
                sys.stdout.flush()
            except OSError:
                pass
            if cut and not more:
                remove(cut)  # (one that cannot go: the whole list is reloaded, the same rows)
            os.close(1)  # nothing more is written

        picker_stream(env, out, width, rows_done, FIRST_ROWS if cut else None)
    finally:
        os._exit(0)


def _progress_bar(progress: Any) -> None:
    """One line on stderr, redrawn: sources and MB done, and what is left."""
    done_mb, total_mb = progress.done_bytes / 2**20, progress.total_bytes / 2**20
    elapsed = time.monotonic() - progress.started
    left = elapsed * (progress.total_bytes - progress.done_bytes) / max(progress.done_bytes, 1)
    sys.stderr.write(f"\rindexing what was said: {progress.done_sources}/{progress.sources} sessions, "
                     f"{done_mb:.0f}/{total_mb:.0f} MB" + (f", about {left:.0f} s left" if progress.done_bytes else "")
                     + " \x1b[K")
    sys.stderr.flush()


def search(env: Env, out: Out, query: str | None, app: str | None = None, as_json: bool = False,
           limit: int = 50, drop: bool = False, refresh_only: bool = False, verbose: bool = False,
           since: str | None = None, until: str | None = None, wait_until: float = 0.0) -> int:
    """Sessions by what was said in them, after an incremental refresh of the content index.
    Another sessidx indexing right now is waited for until `wait_until` (time.monotonic()),
    while it shows signs of life; then what it has indexed so far answers, and stderr says so."""
    from sessidx.content import query as content_query
    from sessidx.content import store

    if drop:
        render.warn("content index deleted" if store.drop(env) else "there was no content index")
        return ExitCode.OK
    local.check_app(app)
    from sessidx.when import bounds

    low, high = bounds(since, until)  # a date it cannot read says so before any indexing
    notes: list[str] = []
    db = store.open_index(env, notes)
    tty = sys.stderr.isatty() and not refresh_only

    def report(progress: Any) -> None:
        store.write_progress(env, progress)
        if tty:
            _progress_bar(progress)

    def brought_up_to_date() -> dict[str, int] | None:
        nonlocal db
        try:
            return local.refresh_content(env, db, report, announce=not refresh_only)
        except store.DatabaseError as exc:
            if isinstance(exc, store.OperationalError):  # disk full, I/O: what is indexed still answers
                raise
            db.close()  # damage found while reading it: made again, and read again
            store.drop(env)
            notes.append(f"the content index could not be used ({exc}): made again")
            db = store.open_index(env, notes)
            return local.refresh_content(env, db, report, announce=not refresh_only)

    interrupted = failed = False
    busy: str | None = None  # another sessidx still indexing: what it has so far answers
    try:
        busy = local.refresh_or_wait(env, brought_up_to_date, store.seconds_left(wait_until))[1]
    except KeyboardInterrupt:
        interrupted = True
    except store.OperationalError as exc:
        failed = True
        notes.append(f"the content index was not brought up to date ({exc}): searching what is indexed")
    if tty:
        sys.stderr.write("\r\x1b[K")  # the progress line goes
    for note in notes if verbose or failed else []:
        render.warn(note)
    if interrupted:
        render.warn("interrupted: what was indexed is kept, and the next search goes on from there")
        return ExitCode.CANCELLED
    if refresh_only:
        return ExitCode.ERROR if failed else ExitCode.OK
    if busy:
        render.warn(busy)
    if cut := content_query.query_note(query or ""):
        render.warn(cut)
    try:
        hits = content_query.search(db, query or "", app, limit, since=low, until=high)
    except store.DatabaseError as exc:  # damage the refresh did not touch (nothing had changed)
        if isinstance(exc, store.OperationalError):
            raise
        db.close()
        store.drop(env)
        if verbose:
            render.warn(f"the content index could not be used ({exc}): made again")
        db = store.open_index(env, [])
        local.refresh_content(env, db, report, announce=not refresh_only)
        hits = content_query.search(db, query or "", app, limit, since=low, until=high)
    from sessidx.content.kept import show

    return show(out, hits, query, as_json)


def cycle(env: Env, out: Out, what: str, ident: str | None = None) -> int:
    """Ctrl-A and Alt-A (the next or previous app with sessions, all again after the last) and
    Ctrl-S (this folder -> this repository -> everywhere) in the picker, in either mode. The
    filters live in fzf's prompt (`codex@here> `, `content:codex@repo> `, read from
    FZF_PROMPT); the answer is fzf's actions: the new prompt, a header with the count of every
    app, the filtered list."""
    if what == "mode":
        return _switch_mode(env, out)
    if what in ("match", "match-back"):
        return _step_match(env, out, ident, -1 if what == "match-back" else 1)
    if what in ("index-start", "index-wait", "index-done"):
        return _content_index_progress(env, out, what)
    from sessidx.picker import CONTENT_HEADER, HEADER

    content_mode, app, scope = picker_filters(env)
    if what == "scope":
        scope = _NEXT_SCOPE[scope]
    here = os.environ.get("PWD")
    counts: dict[str, int] = {}
    listed = [s for s in local.listing(env, refresh=False, announce=False).sessions if not s.archived]
    for s in _in_scope(listed, scope, here) if scope is not None else _with_hosts(env, listed):
        counts[s.app] = counts.get(s.app, 0) + 1
    if what in ("app", "app-back"):
        choices: list[str | None] = [None, *(a for a in NAMES if counts.get(a))]
        step = -1 if what == "app-back" else 1
        app = choices[(choices.index(app) + step) % len(choices)] if app in choices else None
    total = sum(counts.values())
    where = {None: "everywhere", "here": "this folder", "repo": "this repository"}[scope]
    # no parentheses in the texts: fzf's action syntax would end an action there
    status = render.with_counts(f"app {app or 'all'}: {counts.get(app, 0) if app else total} of {total} · "
                                f"scope: {where} · ", [(a, counts[a]) for a in NAMES if counts.get(a)],
                                _list_width(env) - 2)
    header = f"{CONTENT_HEADER if content_mode else HEADER}\n{render.clean(status)}"
    out(f"change-prompt({render.prompt_of(content_mode, app, scope)})+change-header({header})"
        f"+reload:{_feed_command(content_mode, app, scope)}")
    return ExitCode.OK


def picker_filters(env: Env) -> tuple[bool, str | None, str | None]:
    """(content mode, app, scope) as fzf's prompt holds them; an app not known is none."""
    content_mode, app, scope = render.prompt_state(env.get("FZF_PROMPT"))
    return content_mode, app if app in NAMES else None, scope


def _feed_command(content_mode: bool, app: str | None, scope: str | None) -> str:
    """What fzf reloads: the titles with the filters, or the content search (which reads the
    filters from the prompt, as its reload on every keystroke is fixed when fzf starts)."""
    from sessidx.picker import self_command

    if content_mode:
        return f"exec {self_command()} lines --content {{q}}"
    # exec: the feed's parent is fzf, whose pid names what its list is filtered by (picker.WORDS_FILE)
    return f"exec {self_command()} lines" + (f" --app {app}" if app else "") + (f" --{scope}" if scope else "")


def _switch_mode(env: Env, out: Out) -> int:
    """Ctrl-F: metadata mode (fzf filters the list) <-> content mode (each keystroke asks the
    content index; fzf's own search is off), the fzf idiom of switching ripgrep and fzf modes.
    The app and folder filters stay. Entering content mode starts a background refresh of the
    index; the list never waits."""
    from sessidx.picker import CONTENT_HEADER, HEADER

    content_mode, app, scope = picker_filters(env)
    if content_mode:
        from sessidx.querywords import parse

        words = parse(env.get("FZF_QUERY"))  # fzf searches the titles for the rest
        out(f"enable-search+change-border-label({words.words})+change-prompt({render.prompt_of(False, app, scope)})"
            f"+change-header({HEADER})+reload({_feed_command(False, app, scope)})"
            + (f"+search:{words.rest}" if words.words else ""))
        return ExitCode.OK
    from sessidx.content.store import enabled, start_refresh

    if not enabled(env):
        out("change-header:content search is off: SESSIDX_CONTENT=0")
        return ExitCode.OK
    start_refresh(env)
    from sessidx.content.store import wait_for_indexer
    from sessidx.picker import self_command
    from sessidx.quoting import sh_quote

    indexer = wait_for_indexer(env, seconds=0)
    empty = not (env.get("FZF_QUERY") or "").strip()  # nothing to search: the list says what to type
    if indexer is None or indexer.stalled:
        feed = f"printf '%s\\n' {sh_quote(render.content_header(hint=True))}" if empty \
            else _feed_command(True, app, scope)
        out(f"rebind(change)+disable-search+change-prompt({render.prompt_of(True, app, scope)})"
            f"+change-header({CONTENT_HEADER})+reload:{feed}")
        return ExitCode.OK
    # Being indexed: the title rows leave at once for an empty list (a reload that prints only
    # the column names and ends: fzf redraws its list when a reload ends or brings a row); the
    # prompt and header say content mode once that list is up (index-start, in the background);
    # the search runs when the index is done (index-wait, index-done).
    out(f"rebind(change)+disable-search+bg-transform({self_command()} cycle index-start)"
        f"+reload:printf '%s\\n' {sh_quote(render.content_header(hint=empty))}")
    return ExitCode.OK


def _indexing_line(env: Env) -> str:
    """The content index's progress for the header (no parentheses: fzf's action syntax)."""
    from sessidx.content.store import read_progress

    done = read_progress(env)
    return f"indexing what was said: {done[0]}/{done[1]} sessions" if done else "indexing what was said"


def _content_index_progress(env: Env, out: Out, what: str) -> int:
    """While the refresh Ctrl-F started runs, content mode's header shows its progress, and
    when it is done the rows are searched again, so no note outlives what it announces.
    `index-wait` runs in fzf's background: up to a second, or until the indexer is done; then
    `index-done` runs in the foreground, where FZF_PROMPT is the picker's mode now (Ctrl-F
    back to titles ends the loop)."""
    from sessidx.content.store import wait_for_indexer
    from sessidx.picker import CONTENT_HEADER, self_command

    content_mode, app, scope = picker_filters(env)
    if what == "index-start":  # just after Ctrl-F: the prompt is still the titles' one
        out(f"change-prompt({render.prompt_of(True, app, scope)})+change-header({CONTENT_HEADER}\n"
            f"{_indexing_line(env)})+bg-transform({self_command()} cycle index-wait)")
        return ExitCode.OK
    if what == "index-wait":
        wait_for_indexer(env, seconds=1.0)
        out(f"transform({self_command()} cycle index-done)")
        return ExitCode.OK
    if not content_mode:
        return ExitCode.OK
    indexer = wait_for_indexer(env, seconds=0)
    if indexer is not None and not indexer.stalled:
        out(f"change-header({CONTENT_HEADER}\n{_indexing_line(env)})+bg-transform({self_command()} cycle index-wait)")
    else:  # this runs in a bg-transform's answer, where a reload is never run (picker.INDEX_DONE)
        from sessidx.picker import INDEX_DONE

        out(f"change-header({CONTENT_HEADER})" + ("" if not (env.get("FZF_QUERY") or "").strip()
                                                  else f"+put({INDEX_DONE})"))
    return ExitCode.OK


def copy(env: Env, out: Out, ident: str, shell: str | None) -> int:
    """Ctrl-Y: copy the resume line; what it prints is fzf's action showing what was copied."""
    from sessidx.shells import detect_shell
    from sessidx.terminal import copy as to_clipboard

    plan = place_of(env, ident).plan(ident)
    line = plan.shell_line(detect_shell(shell, env.vars))
    how = to_clipboard(line)
    out(f"change-header:copied ({how}): {render.clean(line)}")
    return ExitCode.OK


def check(env: Env, out: Out, ident: str | None, allow_permissive: bool) -> int:
    """Enter and Alt-Enter in the picker: fzf's next action, once the key's query is matched
    (picker.hold). A session that can be resumed is accepted (with the key that chose it); one
    that cannot keeps the picker open, and its reason takes the header. A branch change is
    asked about after the picker closes. With no row (no ID: nothing matches yet, the rows
    still coming in or a list being reloaded), the key stays held for the next result. A row
    the whole query does not ask for (its `app:`, `since:` and words), or on a list filtered by
    other words than the query's, is from a list made for an earlier query: the list is made
    again and the key held once more; then such a row is refused (docs/picker.md)."""
    from sessidx.picker import accept_action, again_action, changed_action, held_action, refusal_action

    if not ident:
        out(held_action(allow_permissive))
        return ExitCode.OK
    if (doubt := _not_for_the_query(env, ident)) is not None:
        if not (env.get("FZF_LIST_LABEL") or "").endswith("-again"):
            from sessidx.picker import self_command

            out(again_action(allow_permissive, self_command(), picker_filters(env)[0]))
            return ExitCode.OK
        if doubt:
            out(changed_action())
            return ExitCode.OK
    try:
        reason = place_of(env, ident).plan(ident, allow_permissive).error  # a host's: made there
    except SessidxError as exc:
        reason = str(exc)
    out(refusal_action(reason) if reason else accept_action(ident, allow_permissive))
    return ExitCode.OK


def _not_for_the_query(env: Env, ident: str) -> bool | None:
    """Whether Enter's row may be from a list made for an earlier query: True when the row is
    not one the query asks for (or cannot be told), False when it is but the list on screen was
    made for other words than the query's, or for the other mode (WORDS_FILE), None when all
    agree. A content row is the content index's answer to its reload's query: only the mode
    and the words are checked."""
    from sessidx.querywords import fits, parse

    query = env.get("FZF_QUERY")
    content_mode, _, _ = picker_filters(env)
    if not content_mode:
        try:
            session: Session | None = place_of(env, ident).session(ident)  # a host's: what it sent last
        except SessidxError:
            session = None
        if session is None:
            return True if parse(query).filtering else None  # not known here: the plan's own look decides
        if not fits(query, session.app, session.mtime, env.get("SESSIDX_ROW") or ""):
            return True
    from sessidx.picker import filtered_by, loaded_filters, state_folder

    folder = state_folder(env)
    prompt = env.get("FZF_PROMPT") or render.prompt_of(False, None, None)
    if folder is not None and "FZF_QUERY" in env.vars and loaded_filters(folder) != filtered_by(prompt,
                                                                                                parse(query).words):
        return False
    return None


def init(env: Env, out: Out, shell: str | None, key: str | None, bind: bool) -> int:
    from sessidx.shells import detect_shell, init_script

    sys.stdout.write(init_script(detect_shell(shell, env.vars), key, bind))
    return ExitCode.OK


def host_notes(env: Env) -> list[str]:
    """What each host's last refresh left to say (it did not answer, ...), for the header."""
    from sessidx.hosts import configured, read_cache

    return [n for h in configured(env)[0] if (n := read_cache(env, h).note)]


def fzf_redraw(env: Env, out: Out) -> int:
    """After the background refresh: the header names every host that did not answer (in the
    mode's header). The list itself is reloaded by the load binding's `reload-sync`, which
    waits for this refresh (`hosts.wait_for_refresh`): fzf 0.67 does not run a `reload` that
    a bg-transform returns (it spins and never starts the command)."""
    from sessidx.picker import CONTENT_HEADER, HEADER

    content_mode, _, _ = picker_filters(env)
    notes = host_notes(env)
    header = (CONTENT_HEADER if content_mode else HEADER) + "".join(f"\n{render.clean(n)}" for n in notes)
    out(f"change-header:{header}")  # the `:` form: a note may hold a parenthesis, which would end `(...)`
    return ExitCode.OK
