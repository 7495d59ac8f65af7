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
import re
import stat
from collections.abc import Iterator
from typing import IO, Any

HEAD_LINES = 80
LINE_CAP = 256 * 1024
TAIL_BYTES = 512 * 1024
SMALL_JSON_CAP = 4 * 1024 * 1024
_SKIP_CHUNK = 1024 * 1024
_BOM = b"\xef\xbb\xbf"
_TYPE_MARK = re.compile(rb'"type": ?"([A-Za-z0-9_-]+)"')

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


class Transcript:
    """Lazy, bounded access to both ends of one JSONL file; use as a context manager.

    `head()` parses the first lines in order and stops when the caller stops. `newest(types)`
    finds records of those types newest first by searching the tail's bytes backwards for
    their `"type":"..."` marker and parsing only the lines that hold one, then falls back to
    the head. Most of a transcript's bytes are attachments and API blobs no listing needs,
    so most lines are never parsed.
    """

    def __init__(self, f: IO[bytes], size: int, head_lines: int, line_cap: int, tail_bytes: int) -> None:
        self.size = size
        self._f = f
        self._line_cap = line_cap
        self.whole = size <= tail_bytes
        start = 0 if self.whole else size - tail_bytes
        f.seek(start)
        tail = f.read(tail_bytes)
        if start > 0:
            cut = tail.find(b"\n")
            tail = tail[cut + 1:] if cut >= 0 else b""  # the first piece is the end of a longer line
        self._tail = tail
        self._marks: list[tuple[int, bytes]] | None = None
        self._head: list[Record] = []
        self._head_source: Iterator[bytes] | None = None
        if self.whole:
            self._head_source = iter(tail.split(b"\n")[:head_lines])
        else:
            f.seek(0)
            self._head_source = _head_lines(f, head_lines, line_cap)

    def __enter__(self) -> Transcript:
        return self

    def __exit__(self, *exc: object) -> None:
        self._f.close()

    def head(self) -> Iterator[Record]:
        """Records of the first lines, oldest first; read only as far as the caller goes."""
        i = 0
        while True:
            if i < len(self._head):  # by index: several iterations may share the one file read
                yield self._head[i]
                i += 1
                continue
            if self._head_source is None:
                return
            try:
                line = next(self._head_source)
            except (StopIteration, OSError):
                self._head_source = None
                return
            if (record := parse_record(line)) is not None:
                self._head.append(record)

    def _type_marks(self) -> list[tuple[int, bytes]]:
        """Where `"type":"X"` stands in the tail, once per file (one regex pass over 512 KiB)."""
        if self._marks is None:
            self._marks = [(m.start(), m.group(1)) for m in _TYPE_MARK.finditer(self._tail)]
        return self._marks

    def newest(self, *types: str) -> Iterator[Record]:
        """Records whose `type` is one of `types`, newest first: the tail, then the head.

        A marker may also stand inside a nested object; the parsed record's own `type` decides.
        """
        wanted = set(types)
        wanted_marks = {t.encode() for t in types}
        buf = self._tail
        end = len(buf)
        for pos, name in reversed(self._type_marks()):
            if pos >= end or name not in wanted_marks:
                continue
            line_start = buf.rfind(b"\n", 0, pos) + 1
            line_end = buf.find(b"\n", pos)
            record = parse_record(buf[line_start: line_end if line_end >= 0 else len(buf)])
            if record is not None and record.get("type") in wanted:
                yield record
            end = line_start
        if not self.whole:
            yield from (r for r in reversed(list(self.head())) if r.get("type") in wanted)

    def all(self) -> list[Record]:
        """Every record of both ends, oldest first, each parsed once."""
        tail = [r for line in self._tail.split(b"\n") if (r := parse_record(line))]
        return tail if self.whole else list(self.head()) + tail


def open_transcript(
    path: str | os.PathLike[str],
    head_lines: int = HEAD_LINES,
    line_cap: int = LINE_CAP,
    tail_bytes: int = TAIL_BYTES,
) -> Transcript | None:
    """A Transcript over a regular file, or None if it cannot be read."""
    f = open_regular(path)
    if f is None:
        return None
    try:
        return Transcript(f, os.fstat(f.fileno()).st_size, head_lines, line_cap, tail_bytes)
    except OSError:
        f.close()
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
