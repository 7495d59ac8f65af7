"""The argparse parser of the command line, built only for the command being run."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NoReturn

from sessidx import __version__
from sessidx.render import terminal_width

if TYPE_CHECKING:
    from _typeshed import SupportsWrite


class _Formatter(argparse.HelpFormatter):
    """argparse builds a formatter for every add_argument, and the default one imports shutil
    to ask for the terminal size each time: 20 ms of a 60 ms `list`. Ask the terminal once."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=max(40, terminal_width(102) - 2))


def _pick(s: argparse.ArgumentParser) -> None:
    s.add_argument("query", nargs="?")
    s.add_argument("--shell", help="quote the command for bash, zsh or fish")


def _list(s: argparse.ArgumentParser, optional_query: bool = True) -> None:
    s.add_argument("query", nargs="?" if optional_query else None)
    s.add_argument("--app", help="only this app (claude, codex, ...)")
    s.add_argument("--json", action="store_true", help="one JSON object per session")
    s.add_argument("--archived", action="store_true", help="include archived sessions")
    s.add_argument("-v", "--verbose", action="store_true", help="report skipped sources")
    _dates(s)
    _host_option(s)


def _dates(s: argparse.ArgumentParser) -> None:
    from sessidx.when import HELP  # only the parsers with --since load it

    s.add_argument("--since", metavar="WHEN", help=f"only sessions used since WHEN: {HELP}")
    s.add_argument("--until", metavar="WHEN", help="only sessions last used before WHEN (a date: up to its end)")


def _host_option(s: argparse.ArgumentParser) -> None:
    s.add_argument("--host", action="append", metavar="HOST",
                   help="the sessions on this SSH host (again for more; `local` is this machine, `all` every host)")


def _hosts(s: argparse.ArgumentParser) -> None:
    s.add_argument("--refresh", action="store_true", help="ask every host now")
    s.add_argument("--fzf", action="store_true", help=argparse.SUPPRESS)
    s.add_argument("--fzf-redraw", action="store_true", help=argparse.SUPPRESS)


def _doctor(s: argparse.ArgumentParser) -> None:
    s.add_argument("--json", action="store_true", help="the report as one JSON object")


def _find(s: argparse.ArgumentParser) -> None:
    _list(s, optional_query=False)


def _id_and_shell(s: argparse.ArgumentParser) -> None:
    s.add_argument("id")
    s.add_argument("--shell", help="quote for bash, zsh or fish (default: detected)")


def _resume(s: argparse.ArgumentParser) -> None:
    _id_and_shell(s)
    s.add_argument("--json", action="store_true", help="print the plan as JSON")
    s.add_argument("--allow-permissive", action="store_true", help="carry a recorded loose approval mode")
    s.add_argument("--yes", "-y", action="store_true", help="do not ask about a branch change")
    # the shells' warm press: the key the picker's check said yes to, in hex (picker.same_row)
    s.add_argument("--checked", help=argparse.SUPPRESS)


def _build(s: argparse.ArgumentParser) -> None:
    s.add_argument("-v", "--verbose", action="store_true", help="report skipped sources")


def _init(s: argparse.ArgumentParser) -> None:
    s.add_argument("shell", nargs="?", choices=("bash", "zsh", "fish"))
    s.add_argument("--key", help="key to bind instead of Ctrl-O (e.g. '^X^A'; fish: \\cx\\ca)")
    s.add_argument("--no-bind", dest="bind", action="store_false", help="define sessidx-widget, bind nothing")


def _nothing(s: argparse.ArgumentParser) -> None:
    pass


def _lines(s: argparse.ArgumentParser) -> None:
    s.add_argument("--app")
    s.add_argument("--here", action="store_true")
    s.add_argument("--repo", action="store_true")
    s.add_argument("--content", metavar="QUERY")
    s.add_argument("--stream", action="store_true")
    # the fresh list behind the rows on screen: fzf and the preview come first (picker.fzf_command)
    s.add_argument("--background", action="store_true")


def _cycle(s: argparse.ArgumentParser) -> None:
    s.add_argument("what", choices=("app", "app-back", "scope", "mode", "match", "match-back", "index-start",
                                     "index-wait", "index-done"))
    s.add_argument("id", nargs="?")  # match, match-back: the session whose preview steps


def _check(s: argparse.ArgumentParser) -> None:
    s.add_argument("id")
    s.add_argument("--allow-permissive", action="store_true")


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"not a positive number: {text!r}")
    return int(text)


def seconds(text: str) -> float:
    """A wait in seconds, 0 to 3600 (`search --wait`; what `cli._plain_search` reads too)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 3600:  # NaN too
        raise argparse.ArgumentTypeError(f"not a number of seconds from 0 to 3600: {text!r}")
    return value


def _search(s: argparse.ArgumentParser) -> None:
    s.add_argument("query", nargs="*", help='words, all of which must have been said; "a phrase" in quotes')
    s.add_argument("--app", help="only this app (claude, codex, ...)")
    s.add_argument("--json", action="store_true", help="one JSON object per session, with snippet and score")
    s.add_argument("--limit", type=_positive, default=50, help="at most this many sessions (default 50)")
    s.add_argument("--wait", type=seconds, metavar="SECONDS",
                   help="how long to wait for another sessidx that is indexing, before searching what it has"
                        " indexed so far (default 2)")
    s.add_argument("--drop", action="store_true", help="delete the content index")
    s.add_argument("-v", "--verbose", action="store_true", help="say what was skipped or made again")
    _dates(s)
    s.add_argument("--refresh", dest="refresh_only", action="store_true", help=argparse.SUPPRESS)
    _host_option(s)


def _export(s: argparse.ArgumentParser) -> None:
    s.add_argument("id", nargs="?", help="the session: an id, app:id, @host/app:id, or a unique prefix")
    s.add_argument("--json", action="store_const", const="json", dest="format", help="JSON instead of Markdown")
    s.add_argument("--format", choices=("markdown", "json"), default="markdown")
    s.add_argument("-o", "--output", metavar="FILE", help="write it to FILE (default: stdout)")
    s.add_argument("--picker", action="store_true", help=argparse.SUPPRESS)  # Alt-E: a new file here, fzf's action


def _help(s: argparse.ArgumentParser) -> None:
    s.add_argument("topic", nargs="?", metavar="COMMAND", help="a command to explain")


# name: (help, arguments); no help keeps a command out of the listing (internal ones).
COMMANDS: dict[str, tuple[str | None, Callable[[argparse.ArgumentParser], None]]] = {
    "pick": ("the fzf picker (the default)", _pick),
    "list": ("every session, newest first", _list),
    "find": ("sessions matching QUERY", _find),
    "search": ("sessions by what was said in them", _search),
    "preview": ("metadata and resume plan of one session", _id_and_shell),
    "resume": ("plan a resume and print the command line", _resume),
    "build": ("refresh the index and time each app", _build),
    "init": ("print the shell snippet", _init),
    "hosts": ("the SSH hosts named and what each sent last", _hosts),
    "export": ("one session as Markdown or JSON, secrets masked", _export),
    "mcp": ("an MCP server over stdio for agents (pip install 'sessidx[mcp]')", _nothing),
    "doctor": ("why a session is missing: each app's home, CLI and data, the caches, the hosts", _doctor),
    "help": ("this help, or a command's", _help),
    "lines": (None, _lines),  # the picker's reload feed
    "cycle": (None, _cycle),  # Ctrl-A, Alt-A, Ctrl-S and Ctrl-F in the picker
    "copy": (None, _id_and_shell),  # Ctrl-Y in the picker
    "check": (None, _check),  # Enter and Alt-Enter in the picker
}


def parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    """Only the named command's parser is built when it is known: every argparse parser and
    argument costs start-up time, and `list` runs on a key press."""
    p = _Parser(prog="sessidx", description="Find and resume any coding-agent session.", formatter_class=_Formatter,
                epilog=EPILOG)
    p.add_argument("-V", "--version", action="version", version=f"sessidx {__version__}")
    # prog given: otherwise argparse builds a help formatter (and imports shutil) on every run
    sub = p.add_subparsers(dest="command", metavar="COMMAND", prog="sessidx", parser_class=_Subparser)
    wanted = [argv[0]] if argv and argv[0] in COMMANDS else list(COMMANDS)
    for name in wanted:
        helptext, add_arguments = COMMANDS[name]
        p.commands[name] = sub.add_parser(name, help=helptext) if helptext else sub.add_parser(name)
        add_arguments(p.commands[name])
    p.given = argv[0] if argv else None
    return p


EPILOG = ("In a shell: `eval \"$(sessidx init bash)\"` in ~/.bashrc, `eval \"$(sessidx init zsh)\"` in ~/.zshrc, "
          "or `sessidx init fish | source` in ~/.config/fish/config.fish binds Ctrl-O to the picker (another "
          "key: SESSIDX_KEY, or `sessidx init --key`) and lets `sessidx resume` cd your shell.")


PUBLIC = [name for name, (helptext, _) in COMMANDS.items() if helptext]


class _Loud(argparse.ArgumentParser):
    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        """argparse swallows a failed write of --help or --version; `sessidx help > /dev/full`
        must fail, as every other command does (cli.main says so in one line)."""
        if message:
            (file or sys.stderr).write(message)


class _Parser(_Loud):
    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.commands: dict[str, argparse.ArgumentParser] = {}
        self.given: str | None = None

    def error(self, message: str) -> NoReturn:
        """An unknown command names the commands a person uses (argparse would list the
        picker's internal ones too); an option a command does not take shows that command's
        usage, not the top level's (argparse leaves unknown options to the top parser)."""
        if message.startswith("unrecognized arguments") and self.given in self.commands:
            self.commands[self.given].error(message)
        if message.startswith("argument COMMAND: invalid choice"):
            given = message.split("'")[1] if "'" in message else "?"
            message = f"unknown command {given!r}: use one of {', '.join(PUBLIC)} (sessidx help)"
        super().error(message)


class _Subparser(_Loud):
    def __init__(self, **kwargs: object) -> None:
        super().__init__(formatter_class=_Formatter, **kwargs)  # type: ignore[arg-type]
