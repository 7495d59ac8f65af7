"""The shell snippets (`shell/sessidx.{bash,zsh,fish}`) and which shell we are talking to."""

from __future__ import annotations

import os
from pathlib import Path

from sessidx.errors import SessidxError
from sessidx.quoting import SHELLS, quote

SNIPPETS = Path(__file__).resolve().parent / "shell"


def snippet(shell: str) -> str:
    if shell not in SHELLS:
        raise SessidxError(f"unsupported shell {shell!r}: use one of {', '.join(SHELLS)}")
    return (SNIPPETS / f"sessidx.{shell}").read_text("utf-8")


def init_script(shell: str, key: str | None, bind: bool) -> str:
    """The snippet itself; --key/--no-bind only prepend the variable the snippet reads."""
    prefix = ""
    if not bind:
        key = ""
    if key is not None:
        assign = "set -g SESSIDX_KEY " if shell == "fish" else "SESSIDX_KEY="
        prefix = f"{assign}{quote(key, shell)}\n"
    return prefix + snippet(shell)


def detect_shell(given: str | None, environ: dict[str, str]) -> str:
    """--shell, then SESSIDX_SHELL (set by the snippets), then the parent process, then $SHELL."""
    for name in (given, environ.get("SESSIDX_SHELL")):
        if name:
            if name not in SHELLS:
                raise SessidxError(f"unsupported shell {name!r}: use one of {', '.join(SHELLS)}")
            return name
    try:
        import shellingham

        name = shellingham.detect_shell()[0]
        if name in SHELLS:
            return str(name)
    except Exception:  # shellingham raises its own ShellDetectionFailure, or fails on odd /proc
        pass
    name = os.path.basename(environ.get("SHELL", ""))
    return name if name in SHELLS else "bash"
