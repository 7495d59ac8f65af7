"""The one expected-error type and the exit codes, named in one place."""

from __future__ import annotations


class ExitCode:
    """Exit statuses. Plain ints, not an IntEnum: `enum` costs start-up time on every key press."""

    OK = 0
    ERROR = 1  # an expected failure, explained on stderr
    USAGE = 2  # argparse's own code
    CANCELLED = 130  # 128 + SIGINT: Esc / Ctrl-C in the picker


class SessidxError(Exception):
    """A failure the user can act on: printed as one line on stderr, exit 1."""


class Cancelled(Exception):
    """The person backed out (Esc, Ctrl-C, "n"): exit 130 without a word."""


def cannot_write(exc: OSError) -> str:
    """The one line for output that could not be written (`> /dev/full`, an I/O error)."""
    return f"cannot write the output ({exc.strerror or exc})"
