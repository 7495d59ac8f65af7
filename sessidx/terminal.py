"""The person at the terminal: one-key questions and the clipboard, through /dev/tty."""

from __future__ import annotations

import base64
import contextlib
import os
import shutil
import subprocess
import termios

from sessidx.render import clean


def ask_yes_no(question: str) -> bool:
    """Ask on the terminal and read the answer line; `y` or `yes` (any case) is yes, anything
    else, no terminal, or Ctrl-D is no. A whole line is read, with the terminal's own editing
    and echo, so a typed `yes` does not leave `es` behind for the shell or the agent. Keys
    typed before the question are discarded. Ctrl-C raises KeyboardInterrupt (exit 130)."""
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return False
    saved = None
    try:
        with contextlib.suppress(termios.error):
            saved = termios.tcgetattr(fd)
            # A widget runs while the line editor holds the terminal raw: ask for lines, echo
            # and Ctrl-C as at a plain prompt, and drop what was typed before the question.
            mode = termios.tcgetattr(fd)
            mode[0] |= termios.ICRNL
            mode[1] |= termios.OPOST | termios.ONLCR
            mode[3] |= termios.ICANON | termios.ECHO | termios.ECHOE | termios.ISIG
            termios.tcsetattr(fd, termios.TCSAFLUSH, mode)
        os.write(fd, f"{clean(question)} [y/N] ".encode("utf-8", "replace"))
        answer = b""
        while not answer.endswith(b"\n") and len(answer) < 256:
            chunk = os.read(fd, 256)
            if not chunk:  # Ctrl-D at the start of the line
                os.write(fd, b"\r\n")
                break
            answer += chunk
        return answer.strip().lower() in (b"y", b"yes")
    except OSError:
        return False
    finally:
        if saved is not None:
            with contextlib.suppress(termios.error):
                termios.tcsetattr(fd, termios.TCSANOW, saved)
        os.close(fd)


def copy(text: str) -> str:
    """Copy to the clipboard; returns how. Inside tmux, its buffer (`load-buffer -w` also sets
    the outer terminal's clipboard where tmux may): tmux ignores an app's own OSC 52 by
    default. Else a clipboard tool when present, else OSC 52 to the terminal."""
    tools = [["wl-copy"], ["xclip", "-selection", "clipboard"], ["pbcopy"]]
    if os.environ.get("TMUX"):
        tools.insert(0, ["tmux", "load-buffer", "-w", "-"])
    for tool in tools:
        if shutil.which(tool[0]):
            try:
                subprocess.run(tool, input=text.encode("utf-8", "surrogateescape"), timeout=5, check=True,
                               capture_output=True)
                return "tmux buffer" if tool[0] == "tmux" else tool[0]
            except (OSError, subprocess.SubprocessError):
                continue
    try:
        with open("/dev/tty", "wb", buffering=0) as tty:
            tty.write(b"\x1b]52;c;" + base64.b64encode(text.encode("utf-8", "surrogateescape")) + b"\x07")
        return "OSC 52"
    except OSError:
        return "nothing (no clipboard tool and no terminal)"
