"""The command line: parse, dispatch to `commands`, map errors to exit codes. No logic here."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from sessidx.errors import Cancelled, ExitCode, SessidxError

COMMANDS = ("pick", "list", "find", "preview", "resume", "build", "init", "lines", "copy")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sessidx", description="Find and resume any coding-agent session.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    s = sub.add_parser("pick", help="the fzf picker (the default)")
    s.add_argument("query", nargs="?")
    s.add_argument("--shell", help="quote the command for bash, zsh or fish")

    for name, helptext in (("list", "every session, newest first"), ("find", "sessions matching QUERY")):
        s = sub.add_parser(name, help=helptext)
        s.add_argument("query", nargs="?" if name == "list" else None)
        s.add_argument("--app", help="only this app (claude, codex, ...)")
        s.add_argument("--json", action="store_true", help="one JSON object per session")
        s.add_argument("--archived", action="store_true", help="include archived sessions")
        s.add_argument("-v", "--verbose", action="store_true", help="report skipped sources")

    s = sub.add_parser("preview", help="metadata and resume plan of one session")
    s.add_argument("id")
    s.add_argument("--shell")

    s = sub.add_parser("resume", help="plan a resume and print the command line")
    s.add_argument("id")
    s.add_argument("--json", action="store_true", help="print the plan as JSON")
    s.add_argument("--shell", help="quote for bash, zsh or fish (default: detected)")
    s.add_argument("--allow-permissive", action="store_true", help="carry a recorded loose approval mode")
    s.add_argument("--yes", "-y", action="store_true", help="do not ask about a branch change")

    s = sub.add_parser("build", help="refresh the index and time each app")
    s.add_argument("-v", "--verbose", action="store_true", help="report skipped sources")

    s = sub.add_parser("init", help="print the shell snippet")
    s.add_argument("shell", nargs="?", choices=("bash", "zsh", "fish"))
    s.add_argument("--key", help="key to bind instead of Ctrl-O (e.g. '^X^A'; fish: \\cx\\ca)")
    s.add_argument("--no-bind", dest="bind", action="store_false", help="define sessidx-widget, bind nothing")

    sub.add_parser("lines")  # fzf reload feed; no help so it stays unlisted
    s = sub.add_parser("copy")  # Ctrl-Y in the picker
    s.add_argument("id")
    s.add_argument("--shell")
    return p


def _out(line: str) -> None:
    sys.stdout.write(line + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from sessidx import commands
    from sessidx.config import current_env

    env = current_env()
    try:
        if args.command in (None, "pick"):
            return commands.pick(env, _out, getattr(args, "query", None), getattr(args, "shell", None))
        if args.command in ("list", "find"):
            return commands.list_sessions(env, _out, args.query, args.app, args.json, args.archived, args.verbose)
        if args.command == "preview":
            return commands.preview(env, _out, args.id, args.shell)
        if args.command == "resume":
            return commands.resume(env, _out, args.id, args.json, args.shell, args.allow_permissive, args.yes)
        if args.command == "build":
            return commands.build(env, _out, args.verbose)
        if args.command == "init":
            return commands.init(env, _out, args.shell, args.key, args.bind)
        if args.command == "lines":
            return commands.picker_feed(env, _out)
        if args.command == "copy":
            return commands.copy(env, _out, args.id, args.shell)
        raise NotImplementedError(args.command)
    except SessidxError as exc:
        print(f"sessidx: {exc}", file=sys.stderr)
        return ExitCode.ERROR
    except (Cancelled, KeyboardInterrupt):
        return ExitCode.CANCELLED
    except BrokenPipeError:
        # `sessidx list | head`: the reader left; end quietly.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return ExitCode.OK
