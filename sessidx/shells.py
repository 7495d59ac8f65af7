"""The shell snippets (`shell/sessidx.{bash,zsh,fish}`) and which shell we are talking to."""

from __future__ import annotations

import os

from sessidx.errors import SessidxError

# The picker asks which shell this is on every key press: quoting (and its `re`) and file
# reading are imported only by the functions that print a snippet.
SHELLS = ("bash", "zsh", "fish")
SNIPPETS = os.path.join(os.path.dirname(os.path.realpath(__file__)), "shell")


def snippet(shell: str) -> str:
    if shell not in SHELLS:
        raise SessidxError(f"unsupported shell {shell!r}: use one of {', '.join(SHELLS)}")
    with open(os.path.join(SNIPPETS, f"sessidx.{shell}"), encoding="utf-8") as f:
        return f.read()


def init_script(shell: str, key: str | None, bind: bool) -> str:
    """The snippet itself; --key/--no-bind only prepend the variable the snippet reads."""
    from sessidx.quoting import quote

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
