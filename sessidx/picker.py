"""The fzf picker: the cached list at once, a fresh one swapped in when ready (reload-sync).

This runs on a key press, before anything is drawn: it imports neither `dataclasses`,
`pathlib`, `importlib.util` nor `shlex` (which loads `re`), a fifth of the time to the first
screen when measured, nor `subprocess` (which loads `locale`, `re` and `threading`: 7 ms):
fzf is started with os.posix_spawnp.
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


def _run(cmd: list[str], env: dict[str, str], given: bytes) -> tuple[int, bytes]:
    """fzf's exit code and what it printed, `given` on its stdin; its screen is the terminal."""
    into_r, into_w = os.pipe()  # not inherited: only their copies on 0 and 1 are
    out_r, out_w = os.pipe()
    try:
        pid = os.posix_spawnp(cmd[0], cmd, env, file_actions=[(os.POSIX_SPAWN_DUP2, into_r, 0),
                                                               (os.POSIX_SPAWN_DUP2, out_w, 1)])
    except OSError as exc:
        for fd in (into_r, into_w, out_r, out_w):
            os.close(fd)
        raise SessidxError(f"cannot run fzf ({cmd[0]}): {exc}") from None
    os.close(into_r)
    os.close(out_w)
    try:
        rest = memoryview(given)
        try:
            while rest:
                rest = rest[os.write(into_w, rest):]
        except BrokenPipeError:  # fzf ended before reading it all
            pass
        finally:
            os.close(into_w)
        with open(out_r, "rb") as printed:
            out = printed.read()
        return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), out
    except KeyboardInterrupt:
        os.kill(pid, 9)  # SIGKILL (the `signal` module would load `enum`)
        os.waitpid(pid, 0)
        raise Cancelled() from None


def _sh_quote(word: str) -> str:
    """For sh, which runs fzf's child commands (shlex.quote would load `re` on a key press)."""
    return "'" + word.replace("'", "'\\''") + "'"


class Picked:
    def __init__(self, key: str, permissive: bool) -> None:
        self.key = key  # the session's `app:id`
        self.permissive = permissive  # Alt-Enter: the per-launch opt-in


def run_fzf(lines: list[str], query: str, fzf: str, extra_opts: str | None, shell: str,
            note: str | None = None, tmux: str | None = None, cold: bool = False, hosts: bool = False) -> Picked:
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
        (f"--bind=start:unbind(change)+reload({me} lines --stream)" if cold else "--bind=start:unbind(change)")
        # SSH hosts: asked in the background, never waited for; when all have answered or
        # timed out, the list is reloaded and the header names those that did not answer
        + (f"+bg-transform({me} hosts --refresh --fzf)" if hosts else ""),
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
    returncode, out = _run(cmd, env, ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))
    if returncode in (1, 130):  # 1: no match, 130: Esc or Ctrl-C
        raise Cancelled()
    if returncode != 0:
        raise SessidxError(f"fzf failed (exit {returncode})")
    rows = out.decode("utf-8", "surrogateescape").split("\n")
    if len(rows) < 2 or not rows[1]:
        raise Cancelled()
    return Picked(key=rows[1].split("\t", 1)[0], permissive=rows[0] == "alt-enter")
