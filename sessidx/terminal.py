"""The person at the terminal: one-key questions and the clipboard, through /dev/tty."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess


def ask_yes_no(question: str) -> bool:
    """Ask on the terminal and read one key; anything but y/Y (or no terminal) is no."""
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return False
    import termios

    try:
        from sessidx.render import clean

        os.write(fd, f"{clean(question)} [y/N] ".encode("utf-8", "replace"))
        try:
            saved = termios.tcgetattr(fd)
        except termios.error:
            saved = None
        try:
            if saved is not None:
                mode = termios.tcgetattr(fd)
                mode[3] &= ~(termios.ICANON | termios.ECHO)
                mode[6][termios.VMIN], mode[6][termios.VTIME] = 1, 0
                termios.tcsetattr(fd, termios.TCSANOW, mode)
            key = os.read(fd, 1)
        finally:
            if saved is not None:
                termios.tcsetattr(fd, termios.TCSANOW, saved)
        yes = key in (b"y", b"Y")
        os.write(fd, b"yes\r\n" if yes else b"no\r\n")
        return yes
    except OSError:
        return False
    finally:
        os.close(fd)


def copy(text: str) -> str:
    """Copy to the clipboard: a clipboard tool when present, and OSC 52 to the terminal."""
    for tool in (["wl-copy"], ["xclip", "-selection", "clipboard"], ["pbcopy"]):
        if shutil.which(tool[0]):
            try:
                subprocess.run(tool, input=text.encode(), timeout=5, check=True)
                return tool[0]
            except (OSError, subprocess.SubprocessError):
                continue
    try:
        with open("/dev/tty", "wb", buffering=0) as tty:
            tty.write(b"\x1b]52;c;" + base64.b64encode(text.encode("utf-8", "surrogateescape")) + b"\x07")
        return "OSC 52"
    except OSError:
        return "nothing (no clipboard tool and no terminal)"
