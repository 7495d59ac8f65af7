"""The fzf picker: the cached list at once, a fresh one swapped in when ready (reload-sync).

This runs on a key press, before anything is drawn: it imports neither `dataclasses`,
`pathlib`, `importlib.util` nor `shlex` (which loads `re`), a fifth of the time to the first
screen when measured; `subprocess` only once fzf is about to start.
"""

from __future__ import annotations

import os
import sys

from sessidx.errors import Cancelled, SessidxError
from sessidx.render import WIDE, prompt_of

HEADER = ("Enter resume · Alt-Enter with the recorded mode · Ctrl-Y copy · Ctrl-A app · Ctrl-S this folder · "
          "Ctrl-F what was said · Esc cancel")
CONTENT_HEADER = ("What was said: every word, \"a phrase\" · Enter resume · Ctrl-A app · Ctrl-S this folder · "
                  "Ctrl-F titles · Esc cancel")


def fzf_binary(override: str | None) -> str:
    """`SESSIDX_FZF`, else the fzf that iterfzf ships (found without importing it), else PATH."""
    if override:
        return override
    for folder in sys.path:  # where `import iterfzf` would look, without importing it
        bundled = os.path.join(folder or ".", "iterfzf", "fzf")
        if os.access(bundled, os.X_OK) and os.path.isfile(bundled):
            return bundled
    import shutil

    found = shutil.which("fzf")
    if found is None:
        raise SessidxError("could not find fzf: reinstall sessidx (iterfzf ships it) or set SESSIDX_FZF")
    return found


def self_command() -> str:
    """How fzf's child commands (preview, reload, copy) call back into this sessidx: the
    installed launcher beside this interpreter, whose fast path imports less than `python -m
    sessidx` does (measured: `lines` 20 ms against 31 ms); `-m` where there is no launcher."""
    launcher = os.path.join(os.path.dirname(sys.executable), "sessidx")
    try:
        with open(launcher, "rb") as f:
            ours = os.access(launcher, os.X_OK) and b"sessidx.cli" in f.read(256)
    except OSError:
        ours = False
    return _sh_quote(launcher) if ours else f"{_sh_quote(sys.executable)} -m sessidx"


def _sh_quote(word: str) -> str:
    """For sh, which runs fzf's child commands (shlex.quote would load `re` on a key press)."""
    return "'" + word.replace("'", "'\\''") + "'"


class Picked:
    def __init__(self, key: str, permissive: bool) -> None:
        self.key = key  # the session's `app:id`
        self.permissive = permissive  # Alt-Enter: the per-launch opt-in


def run_fzf(lines: list[str], query: str, fzf: str, extra_opts: str | None, shell: str,
            note: str | None = None, tmux: str | None = None, cold: bool = False) -> Picked:
    me = self_command()
    cmd = [
        fzf,
        "--ansi",
        "--delimiter=\t",
        "--with-nth=2..",
        "--gutter= ",
        # sorted by fzf's score, so an exact or word match ranks above a scattered one; equal
        # scores keep the input order: this folder's sessions, then newest first
        "--tiebreak=index",
        "--no-hscroll",  # a match far right never scrolls the app, age and folder away
        "--header-lines=1",  # the column names, the first input line
        "--layout=reverse",
        "--height=80%",
        "--min-height=15",
        "--border=top",
        f"--prompt={prompt_of(False, None, False)}",
        f"--header={HEADER}" + (f"\n{note}" if note else ""),
        f"--query={query}",
        f"--preview={me} preview --shell {shell} {{1}}",
        # Rounded corners do not draw right on every terminal.
        # fzf's threshold is the preview's own width: 45% of WIDE columns
        f"--preview-window=right,45%,sharp,wrap,<{WIDE * 45 // 100}(down,55%,sharp,wrap)",
        # Enter and Alt-Enter accept only a session that can be resumed; otherwise the reason
        # takes the header and the picker stays. print(KEY) tells the two keys apart. With
        # nothing matching there is no {1}, fzf runs no check, and Enter does nothing: Esc leaves.
        f"--bind=enter:transform({me} check {{1}})",
        f"--bind=alt-enter:transform({me} check --allow-permissive {{1}})",
        f"--bind=ctrl-y:transform({me} copy --shell {shell} {{1}})",
        f"--bind=ctrl-a:transform({me} cycle app)",
        f"--bind=ctrl-s:transform({me} cycle scope)",
        # Content mode (Ctrl-F): fzf's search off, each keystroke asks the content index.
        f"--bind=ctrl-f:transform({me} cycle mode)",
        f"--bind=change:reload:{me} lines --content {{q}}",
        # The fresh list: after the cached rows are drawn (a start-time reload-sync held the
        # first screen back until it was done), once, since its own end is a load event too.
        # With no cached rows (a first run) there is nothing to draw first: the rows stream in
        # as each app is read (reload, not reload-sync: fzf shows them as they arrive).
        f"--bind=start:unbind(change)+reload({me} lines --stream)" if cold else "--bind=start:unbind(change)",
        *([] if cold else [f"--bind=load:reload-sync({me} lines)+unbind(load)"]),
    ]
    if tmux:
        cmd.append(f"--tmux={'center,90%,80%' if tmux == '1' else tmux}")  # fzf's own popup, tmux 3.3+
    if extra_opts:
        import shlex

        try:
            cmd += shlex.split(extra_opts)
        except ValueError as exc:  # "No closing quotation", "No escaped character"
            raise SessidxError(f"SESSIDX_FZF_OPTS is not a list of shell words ({exc}): {extra_opts}") from None
    # fzf runs preview and reload through $SHELL; sh keeps that POSIX whatever the login shell.
    env = {**os.environ, "SHELL": "/bin/sh"}
    import subprocess

    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    except OSError as exc:
        raise SessidxError(f"cannot run fzf ({fzf}): {exc}") from None
    assert proc.stdin is not None and proc.stdout is not None
    try:
        try:
            proc.stdin.write(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))
            proc.stdin.close()
        except BrokenPipeError:
            pass
        out = proc.stdout.read()
        proc.wait()
    except KeyboardInterrupt:
        proc.kill()
        raise Cancelled() from None
    if proc.returncode in (1, 130):  # 1: no match, 130: Esc or Ctrl-C
        raise Cancelled()
    if proc.returncode != 0:
        raise SessidxError(f"fzf failed (exit {proc.returncode})")
    rows = out.decode("utf-8", "surrogateescape").split("\n")
    if len(rows) < 2 or not rows[1]:
        raise Cancelled()
    return Picked(key=rows[1].split("\t", 1)[0], permissive=rows[0] == "alt-enter")
