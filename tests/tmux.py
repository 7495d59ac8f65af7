"""A thin wrapper over the tmux CLI, in the style of fzf's test/lib: send keys, read the screen, poll."""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path

DEFAULT_TIMEOUT = 15.0


class Tmux:
    def __init__(self, command: str, env: dict[str, str], cwd: Path, width: int = 160, height: int = 45) -> None:
        self.socket = f"sessidx-test-{uuid.uuid4().hex[:8]}"
        self.env = env
        self._tmux("new-session", "-d", "-x", str(width), "-y", str(height), "-s", "t", "-c", str(cwd),
                   "env", "-i", *[f"{k}={v}" for k, v in env.items()], "sh", "-c", command)

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", *args],
                              capture_output=True, text=True, timeout=20)
        return done.stdout

    def send(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "t", *keys)

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "t", "-l", text)

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-J", "-t", "t")

    def processes(self, columns: str = "pid,ppid,stat,etime,wchan:20,args") -> str:
        """What runs on the pane's terminal (for a failure's message: a key typed that never
        showed was read by someone, or nobody was reading); `ps -o`'s columns."""
        tty = self._tmux("display-message", "-p", "-t", "t", "#{pane_tty}").strip()
        if not tty:
            return "(no pane)"
        try:
            done = subprocess.run(["ps", "-ww", "-t", tty.removeprefix("/dev/"), "-o", columns],
                                  capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.SubprocessError) as exc:  # no procps on this machine
            return f"(no process list: {exc})"
        return done.stdout or done.stderr

    def fzf_busy(self) -> bool:
        """Whether fzf on the pane runs a child: a list's feed, a transform, a preview. A key
        pressed before such a list lands acts on the list it replaces: a new list is a new focus,
        and fzf runs the preview again for it."""
        rows = [line.split(None, 3) for line in self.processes("pid=,ppid=,stat=,args=").splitlines()]
        rows = [row for row in rows if len(row) == 4]
        fzf = {pid for pid, _, _, args in rows if args.split(" ", 1)[0].endswith("fzf")}
        return any(ppid in fzf and not stat.startswith("Z") for _, ppid, stat, _ in rows)

    def until(self, check: Callable[[str], bool], what: str, timeout: float = DEFAULT_TIMEOUT) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if check(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}\n>>>>\n{screen}\n<<<<\n{self.processes()}")
            time.sleep(0.05)

    def until_file(self, path: Path, what: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while not (path.exists() and path.stat().st_size > 0):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what} ({path})\n>>>>\n{self.screen()}\n<<<<")
            time.sleep(0.05)

    def prepare(self, marker: str = "ready") -> None:
        """Handshake (fzf's `prepare`): the line editor is live once a typed marker shows."""
        for attempt in range(5):
            self.send("C-u")
            text = f"{marker}{attempt}"
            self.type(text)
            try:
                self.until(lambda s, t=text: t in s, "the prompt", timeout=4)
                self.send("C-u")
                return
            except AssertionError:
                continue
        raise AssertionError(f"the shell never showed a prompt\n>>>>\n{self.screen()}\n<<<<\n{self.processes()}")

    def kill(self) -> None:
        self._tmux("kill-server")
