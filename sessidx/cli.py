"""The command line: parse, dispatch to `commands`, map errors to exit codes. No logic here.

The start-up boundary. These commands run on a key press, a new process each time, so what
they import is most of their time (fzf itself starts in a few milliseconds):

    sessidx pick                 the key press (the shell widgets): keypress.pick
    sessidx lines                fzf's reload: the fresh list under the kept rows
    sessidx lines --content Q    each keystroke in content mode (Ctrl-F)
    sessidx preview --shell S ID each move in the picker
    sessidx check [--allow-permissive] ID    Enter and Alt-Enter
    sessidx list                 the list without a terminal
    sessidx search WORDS         the content index at once, checked after (content/kept.py)

`_parse` reads them without argparse (whose import and parser cost a tenth of a `list`), and
`main` imports a command's module only once the command is chosen: the laziness is here.

The modules these commands load (`sessidx`, `apps/*`, `cache`, `commands`, `config`, `errors`,
`hosts`, `index`, `model`, `picker`, `readers`, `render`, `shells`, `tool_output`; `preview` and
`check` add `clihelp`, `conversation`, `quoting`, `redact`, `resume`, `search`; a keystroke
`content/*`; a move, `preview`, loads one app module and not `commands`) keep to builtins and
cheap stdlib modules at their top (`os`, `sys`, `stat`, `time`, ...; not `typing`,
`dataclasses`, `pathlib`, `re`, `json`: importing `typing` alone cost more than listing 1,000
sessions), name their types behind `TYPE_CHECKING = False` (mypy
reads it as typing's), and import inside a function only what that function alone needs (a
parser on a cold cache, `json` for `--json`). tests/startup_test.py pins what each loads.
Every other module (`argv`, `remote`, `terminal`, `sqlite_snapshot`, `content/reading`, ...)
is plain Python: imports at the top, `typing`, dataclasses.
"""

from __future__ import annotations

import gc
import os
import sys

from sessidx.config import current_env
from sessidx.errors import Cancelled, ExitCode, SessidxError, cannot_write

TYPE_CHECKING = False  # the start-up boundary: see above
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


class Args:
    """Parsed arguments: what argparse fills in, or the defaults of a bare command.
    (Not types.SimpleNamespace: one import fewer on the key-press path.)"""

    def __init__(self, **values: object) -> None:
        self.__dict__.update(values)


# Bare `pick`, `list` and `lines` (fzf's reload) run on key presses: they skip argparse, whose
# import and parser building cost a tenth of their time. Anything else goes through argparse.
_BARE: dict[tuple[str, ...], Args] = {
    # the key press itself: the shell widgets run `sessidx pick`
    (): Args(command=None, query=None, shell=None),
    ("pick",): Args(command="pick", query=None, shell=None),
    ("list",): Args(command="list", query=None, app=None, json=False, archived=False, verbose=False, since=None,
                    until=None, host=None),
    ("lines",): Args(command="lines", app=None, here=False, repo=False, content=None, stream=False, background=False),
    # the warm press's fresh list, behind the kept rows on screen
    ("lines", "--background"): Args(command="lines", app=None, here=False, repo=False, content=None, stream=False,
                                    background=True),
    ("build",): Args(command="build", verbose=False),  # timed against a plain script in `make bench`
    # the content index brought up to date: Ctrl-F's background refresh (content.store.start_refresh)
    ("search", "--refresh"): Args(command="search", query=[], app=None, json=False, limit=50, wait=None, drop=False,
                                  verbose=False, since=None, until=None, refresh_only=True, host=None),
    # the picker's background refresh of the SSH hosts, and its header after it
    ("hosts", "--refresh", "--fzf"): Args(command="hosts", refresh=True, fzf=True, fzf_redraw=False),
    ("hosts", "--refresh"): Args(command="hosts", refresh=True, fzf=False, fzf_redraw=False),
    ("hosts", "--fzf-redraw"): Args(command="hosts", refresh=False, fzf=False, fzf_redraw=True),
}


def _parse(argv: list[str]) -> Any:
    if (bare := _BARE.get(tuple(argv))) is not None:
        return bare
    # fzf's preview, on every arrow key: `preview --shell SHELL ID`, exactly as picker.py writes it
    if len(argv) == 4 and argv[:2] == ["preview", "--shell"] and not argv[3].startswith("-"):
        return Args(command="preview", shell=argv[2], id=argv[3])
    # the picker's content mode, on every keystroke: `lines --content QUERY`
    if len(argv) == 3 and argv[:2] == ["lines", "--content"]:
        return Args(command="lines", app=None, here=False, repo=False, content=argv[2], stream=False,
                    background=False)
    # Enter and Alt-Enter: `check ID`, `check --allow-permissive ID`; no ID when fzf has no row
    if argv[:1] == ["check"] and argv[1:] in ([], ["--allow-permissive"]):
        return Args(command="check", id=None, allow_permissive=len(argv) == 2)
    if argv[:1] == ["check"] and argv[1:-1] in ([], ["--allow-permissive"]) and len(argv) > 1 \
            and not argv[-1].startswith("-"):
        return Args(command="check", id=argv[-1], allow_permissive=len(argv) == 3)
    # `search WORDS` (`--json`, `--limit N`): answered at once when nothing changed (content/kept.py)
    if argv[:1] == ["search"] and (plain := _plain_search(argv[1:])) is not None:
        return plain
    from sessidx.argv import parser

    return parser(argv).parse_args(argv, namespace=Args())


def _plain_search(argv: list[str]) -> Args | None:
    """`search` with words, `--json`, `--limit N` and `--wait SECONDS` only (and `--` before
    words, as a host is asked), as argparse would read them; None for anything else (argparse
    reads it, and says what is wrong)."""
    words: list[str] = []
    as_json, limit, wait = False, 50, None
    rest = iter(argv)
    for word in rest:
        if word == "--":  # what an SSH host is asked (remote.search_args): words only from here
            words += rest
        elif word == "--json":
            as_json = True
        elif word == "--limit":
            value = next(rest, "")
            if not (value.isascii() and value.isdigit() and int(value) >= 1):
                return None
            limit = int(value)
        elif word == "--wait":
            try:
                wait = float(next(rest, ""))
            except ValueError:
                return None
            if not 0 <= wait <= 3600:  # argv.seconds's bounds
                return None
        elif word.startswith("-"):
            return None
        else:
            words.append(word)
    if not words:
        return None
    return Args(command="search", query=words, app=None, json=as_json, limit=limit, drop=False, verbose=False,
                since=None, until=None, refresh_only=False, host=None, wait=wait, kept=True)


def _out(line: str) -> None:
    try:
        sys.stdout.write(line + "\n")
    except BrokenPipeError:
        raise
    except OSError as exc:  # a full disk (`> /dev/full`), an I/O error: one line, exit 1
        raise SessidxError(cannot_write(exc)) from None


def main(argv: Sequence[str] | None = None, detach: bool = False) -> int:
    """`detach`: the caller exits right after (bin/sessidx, a host's loader), so work that need
    not delay the answer may go on in a child of its own (the check after a search)."""
    # A short-lived process that builds thousands of small objects: the cyclic collector only
    # costs time here (about a quarter of a warm `list`), and reference counting frees the rest.
    gc.disable()
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = _parse(argv)
        env = current_env()
        if args.command == "lines" and getattr(args, "content", None) is not None:
            from sessidx.content.feed import feed  # a keystroke in content mode: not even `commands`

            return feed(env, _out, args.content)
        if args.command in (None, "pick"):
            from sessidx.keypress import pick  # the key press: kept rows, no index, when it can

            return pick(env, _out, query=getattr(args, "query", None), shell=getattr(args, "shell", None))
        if args.command == "hosts" and args.refresh and args.fzf:  # the picker's background refresh
            from sessidx import remote

            return remote.hosts_command(env, _out, True, True)
        if args.command == "preview":
            from sessidx.preview import preview  # a move in the picker: one app module, not `commands`

            if (shown := preview(env, _out, ident=args.id, shell=args.shell)) is not None:
                return shown
        wait_until = 0.0
        if args.command == "search":  # one deadline for waiting on another sessidx indexing, either path
            import time

            from sessidx.content.store import KEYSTROKE_WAIT

            wait_until = time.monotonic() + (KEYSTROKE_WAIT if args.wait is None else args.wait)
        if getattr(args, "kept", False):
            from sessidx.content.kept import check_after, search_kept  # no listing, not `commands`

            answered = search_kept(env, _out, " ".join(args.query), args.json, args.limit, wait_until)
            if answered is not None:
                check_after(env, answered[1], detach, _refresh_content)  # what changed since, told and indexed
                return answered[0]
        from sessidx import commands

        if args.command in ("list", "find") and getattr(args, "host", None):
            from sessidx import remote

            return remote.list_hosts(env, _out, args.host, args.query, args.app, args.json, args.archived)
        if args.command == "search" and args.host and args.query:
            from sessidx import remote

            return remote.search_hosts(env, _out, args.host, " ".join(args.query), args.app, args.json, args.limit)
        if args.command == "doctor":
            return doctor_command(env, args.json)
        if args.command == "hosts":
            from sessidx import remote

            if args.fzf_redraw:
                return commands.fzf_redraw(env, _out)
            return remote.hosts_command(env, _out, args.refresh, args.fzf)
        if args.command in ("list", "find"):
            return commands.list_sessions(env, _out, query=args.query, app=args.app, as_json=args.json,
                                          archived=args.archived, verbose=args.verbose, since=args.since,
                                          until=args.until)
        if args.command == "resume":
            return commands.resume(env, _out, ident=args.id, as_json=args.json, shell=args.shell,
                                   allow_permissive=args.allow_permissive, yes=args.yes, checked=args.checked)
        if args.command == "build":
            return commands.build(env, _out, verbose=args.verbose)
        if args.command == "init":
            return commands.init(env, _out, shell=args.shell, key=args.key, bind=args.bind)
        if args.command == "lines" and args.stream:
            return commands.picker_stream(env, _out)
        if args.command == "lines":
            if args.background:
                behind_the_screen()
            return commands.picker_feed(env, _out, app=args.app,
                                        scope="here" if args.here else "repo" if args.repo else None)
        if args.command == "search":
            if not args.query and not args.drop and not args.refresh_only:
                raise SessidxError("search needs words to look for: sessidx search WORDS (or --drop)")
            return commands.search(env, _out, " ".join(args.query), app=args.app, as_json=args.json, limit=args.limit,
                                   drop=args.drop, refresh_only=args.refresh_only, verbose=args.verbose,
                                   since=args.since, until=args.until, wait_until=wait_until)
        if args.command == "cycle":
            return commands.cycle(env, _out, args.what, args.id)
        if args.command == "copy":
            return commands.copy(env, _out, ident=args.id, shell=args.shell)
        if args.command == "preview":  # the long way: a host's session, a short id, one not cached yet
            return commands.preview(env, _out, ident=args.id, shell=args.shell)
        if args.command == "check":
            return commands.check(env, _out, ident=args.id, allow_permissive=args.allow_permissive)
        if args.command == "export":
            from sessidx.export import export, to_file

            if args.picker:
                return to_file(env, _out, args.id)
            if not args.id:
                raise SessidxError("export needs a session: sessidx export ID")
            return export(env, _out, args.id, as_json=args.format == "json", output=args.output)
        if args.command == "mcp":
            return _mcp(env)
        if args.command == "help":
            from sessidx.argv import parser

            topic = [args.topic] if args.topic else []
            parser([*topic, "--help"]).parse_args([*topic, "--help"])
        raise NotImplementedError(args.command)
    except SessidxError as exc:
        from sessidx.render import warn

        warn(str(exc))  # cleaned: the message may quote ids, folders or titles from session data
        return ExitCode.ERROR
    except (Cancelled, KeyboardInterrupt):
        return ExitCode.CANCELLED
    except BrokenPipeError:
        _quiet_stdout()
        return ExitCode.OK
    except OSError as exc:  # `> /dev/full`, an I/O error: one line, never a traceback
        from sessidx.render import warn

        warn(cannot_write(exc) if exc.filename is None else f"{exc.filename}: {exc.strerror or exc}")
        return ExitCode.ERROR


def _refresh_content(env: Any, db: Any, **options: Any) -> dict[str, int] | None:
    """local.refresh_content, loaded only when the check after a search finds something changed."""
    from sessidx.local import refresh_content

    return refresh_content(env, db, **options)


def _mcp(env: Any) -> int:
    """`sessidx mcp`, when the SDK is installed (the `mcp` extra)."""
    try:
        from sessidx.mcp_server import serve
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] == "sessidx":
            raise
        raise SessidxError(f"sessidx mcp needs the MCP SDK ({exc.name} is missing): "
                           "pip install 'sessidx[mcp]'") from None
    return serve(env)


def doctor_command(env: Any, as_json: bool) -> int:
    """`sessidx doctor`: the report (doctor.diagnose) printed; 1 when it found a problem."""
    from sessidx import doctor, render

    report = doctor.diagnose(env)
    _out(render.json_line(report.to_json()) if as_json else "\n".join(doctor.screen(report)))
    return ExitCode.ERROR if report.problems else ExitCode.OK


def _quiet_stdout() -> None:
    """`sessidx list | head`: the reader left; what is still buffered goes nowhere, quietly."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def standard_streams() -> None:
    """Make fds 0-2 usable and sys.stdout/stderr real: `sessidx list >&-` or `2>&-` must neither
    crash nor, worse, send a message meant for stderr to stdout, which the shell function runs."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            spare = os.open(os.devnull, os.O_RDWR)  # the lowest free fd: this one
            if spare != fd:
                os.dup2(spare, fd)
                os.close(spare)
    if sys.stdout is None:
        sys.stdout = open(1, "w", encoding="utf-8", errors="surrogateescape", closefd=False)  # noqa: SIM115
    if sys.stderr is None:
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
    # Folder names that are not UTF-8 come back as surrogate escapes; print them as the bytes they were.
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="surrogateescape")


def _utf8_mode() -> None:
    """Re-run under Python's UTF-8 mode when the locale is not UTF-8 (`LC_ALL=en_US.ISO-8859-1`).

    File names are then decoded as UTF-8 with surrogate escapes, the same bytes whatever the
    locale: a `日本` folder recorded by an agent is found on disk, and nothing fails to print.
    Output is UTF-8 (what the names on disk are). A UTF-8 locale, the norm, skips this.
    PYTHONUTF8, not `-X utf8`: fzf's preview and reload, children of this process, inherit it."""
    if sys.flags.utf8_mode or sys.getfilesystemencoding() == "utf-8" or os.environ.get("PYTHONUTF8") == "1":
        return  # already, or the re-run could not turn it on: one try only
    os.environ["PYTHONUTF8"] = "1"
    import contextlib

    with contextlib.suppress(OSError):  # if it fails, go on in the locale's encoding
        os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])


# How far behind fzf and its preview the fresh list runs (`lines --background`). On 2 cores
# beside two busy loops (docs/speed.md) the preview after a move no longer waits behind it (67 ->
# 62 ms, medians of ten runs; none over 69 ms, where four of ten were over 80), and the whole
# list comes 30-110 ms later: the loops run in another session's scheduling group (autogroup),
# as agents in another terminal do, and niceness counts within a group.
BACKGROUND_NICE = 10


def behind_the_screen() -> None:
    """Lowers this process's CPU priority: its work is not what the person at the picker waits for."""
    try:  # noqa: SIM105 - contextlib loads functools and collections into a key press's process
        os.nice(BACKGROUND_NICE)
    except OSError:  # not allowed here: it runs as it is
        pass


def run() -> None:
    """The `sessidx` command (bin/sessidx): `main`, then exit without the interpreter's teardown.

    A key press starts this process; freeing the thousands of objects a listing built, one by
    one, only delays the prompt. Output is flushed first; nothing else needs the teardown
    (no atexit handlers, no temp files left open). In-process callers use `main`.
    """
    _utf8_mode()
    standard_streams()
    try:
        code = main(detach=True)
    except SystemExit as exc:  # argparse's --help, --version and usage errors
        code = exc.code if isinstance(exc.code, int) else ExitCode.OK if exc.code is None else ExitCode.ERROR
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:
            _quiet_stdout()
        except OSError as exc:  # what is still buffered cannot be written: a full disk, say so
            if stream is sys.stdout:
                from sessidx.render import warn

                warn(cannot_write(exc))
                code = ExitCode.ERROR
    os._exit(code)
