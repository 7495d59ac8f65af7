"""Bounded, read-only readers for the agents' files: JSONL head/tail, small JSON, SQLite.

Measured on a real machine (40 Claude transcripts, median 168 MB): what a list needs sits
in the first lines (cwd and branch by line 2) and in the last 512 KiB (a title record in
40 of 40); no line among the first 80 was over 256 KiB. So the head is 80 lines, each capped
at 256 KiB (a longer line, such as a pasted image, is skipped without being held), and no
more than 32 MiB read in all; the tail is the last 512 KiB with its cut first piece dropped.
"""

from __future__ import annotations

import io
import os
import stat

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from io import BufferedReader
    from typing import Any

HEAD_LINES = 80
LINE_CAP = 256 * 1024
TAIL_BYTES = 512 * 1024
HEAD_BUDGET = 32 * 1024 * 1024  # every byte the head may read, skipped long lines included
SMALL_JSON_CAP = 4 * 1024 * 1024
_SKIP_CHUNK = 1024 * 1024
LONG_HEAD = 64 * 1024  # a head that took this much has long lines: it is read on LONG_HEAD_READ at a time
LONG_HEAD_READ = 256 * 1024
_BOM = b"\xef\xbb\xbf"
_TYPE_MARK = rb'"type": ?"([A-Za-z0-9_.-]+)"'

Record = dict[str, "Any"]


def open_regular(path: str | os.PathLike[str]) -> BufferedReader | None:
    """Open a regular file read-only, or None: FIFOs, devices and folders are not read.

    O_NONBLOCK keeps a FIFO swapped in between stat and open from hanging us; the fstat
    after the open is what decides.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):  # ValueError: a NUL in the path (a damaged record names it): no such file
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


def _json() -> Any:
    """The json module, imported on first use: a warm `list` parses no JSON at all."""
    import json

    return json


def parse_record(line: bytes | bytearray) -> Record | None:
    """One JSON object from one line, or None for anything else (junk, arrays, bad UTF-8)."""
    value = json_value(line)
    return value if isinstance(value, dict) else None


def json_value(data: bytes | bytearray | str) -> Any:
    """What `json.loads` makes of UTF-8 `data` (a BOM allowed), or None when it is not JSON
    (broken, nested too deep). It calls json's C scanner itself: the `json` package loads `re`
    and `enum`, 4 ms that a keystroke in the picker need not pay."""
    global _scan
    if _scan is None:
        try:
            from _json import make_scanner
        except ImportError:  # an interpreter without it
            from json import JSONDecoder
            from json.scanner import make_scanner as json_scanner

            _scan = json_scanner(JSONDecoder())  # type: ignore[arg-type]  # the scanner of either
        else:
            _scan = make_scanner(_Decoding())  # type: ignore[arg-type]  # it reads these attributes only
    try:
        if not isinstance(data, str):
            data = (data[3:] if data.startswith(_BOM) else data).decode("utf-8", "surrogatepass")
        text = data.strip(" \t\n\r")  # JSON's own white space, no other
        value, end = _scan(text, 0)
    # Broken JSON, none, or nested too deep. SystemError: the C scanner reports most errors as
    # json.decoder's JSONDecodeError, which it looks up among the loaded modules without
    # loading it (Python 3.11); with `json` not loaded it raises SystemError instead.
    except (ValueError, StopIteration, RecursionError, SystemError):
        return None
    return value if end == len(text) else None


class _Decoding:
    """The settings `json.JSONDecoder` hands its C scanner, as `json.loads` has them."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


_scan: Any = None


def _head_lines(fd: int, max_lines: int, line_cap: int, budget: int = HEAD_BUDGET) -> Iterator[bytes]:
    """Up to `max_lines` lines from the file's start; a line over the cap is skipped.
    No more than `budget` bytes are read in all, skipped ones included: a 2 GB line without a
    newline ends the head, it is not read to its end. Read 8 KiB at a time until the head
    turns out to hold long lines (tool outputs), then LONG_HEAD_READ at a time (measured: a
    head of 80 lines of 18 KB on average read 16% faster; a large buffer for every head costs
    a head of short lines 35 us a file)."""
    f, left, reads_long = _head_reader(fd, 0, io.DEFAULT_BUFFER_SIZE), budget, False
    for _ in range(max_lines):
        if not reads_long and budget - left > LONG_HEAD:
            f, reads_long = _head_reader(fd, f.tell(), LONG_HEAD_READ), True
        line = f.readline(min(line_cap + 1, left))
        left -= len(line)
        if not line:
            return
        if len(line) > line_cap and not line.endswith(b"\n"):
            # Over the cap: skip to the end of this line in bounded chunks, within the budget.
            while left > 0 and (chunk := f.readline(min(_SKIP_CHUNK, left))):
                left -= len(chunk)
                if chunk.endswith(b"\n"):
                    break
            else:
                return
            continue
        if left <= 0 and not line.endswith(b"\n"):
            return  # cut by the budget: not a whole line
        yield line


def _head_reader(fd: int, at: int, size: int) -> io.BufferedReader[io.FileIO]:
    """A reader of `fd` from `at`, `size` bytes a read, that leaves `fd` open when it goes."""
    f = io.BufferedReader(io.FileIO(fd, closefd=False), size)
    f.seek(at)
    return f


class Transcript:
    """Lazy, bounded access to both ends of one JSONL file; use as a context manager.

    `head()` parses the first lines in order and stops when the caller stops. `newest(types)`
    finds records of those types newest first: it reads the tail backwards in growing windows
    (64 KiB, doubling up to 512 KiB), finds `"type":"..."` markers with one regex pass per
    window, and parses only the lines that hold a wanted one; then it falls back to the head.
    Most of a transcript's bytes are attachments and API blobs no listing needs, so most
    lines are never parsed and often most of the tail is never read.
    """

    def __init__(self, fd: int, size: int, head_lines: int, line_cap: int, tail_bytes: int,
                 mtime_ns: int | None = None) -> None:
        self.size = size
        self.mtime_ms = None if mtime_ns is None else mtime_ns // 1_000_000  # as mtime_ms(path), from the open file
        self._fd = fd
        self.whole = size <= tail_bytes
        # One reused buffer per open transcript: a fresh 512 KiB allocation per file costs more
        # in page faults than the read. File offset `size - len(buf) + i` is at index i.
        self._buf = _POOL.pop() if _POOL and len(_POOL[-1]) == tail_bytes else bytearray(tail_bytes)
        self._base = size - tail_bytes  # file offset of buf[0]; negative for small files
        self._floor = max(0, -self._base)  # buf index of the earliest byte the tail may hold
        self._lo = tail_bytes  # buf index where the loaded window starts
        self._marks: list[tuple[int, bytes]] = []  # newest first
        # Each line of the tail parsed once, by the buf index it starts at: a title, a branch and
        # a model are looked for in turn, mostly in the same few records.
        self._parsed: dict[int, Record | None] = {}
        self._head_lines = head_lines
        self._grow(tail_bytes if self.whole else _FIRST_WINDOW)
        self._head_raw: list[bytes] = []
        self._head_parsed: dict[int, Record | None] = {}
        self._head_types: dict[int, set[bytes]] = {}  # the `"type"` marks each head line holds
        self._head_source: Iterator[bytes] | None = None
        if not self.whole:  # (the tail is read by pread: the head's reader alone moves the file's offset)
            self._head_source = _head_lines(fd, head_lines, line_cap)

    def __enter__(self) -> Transcript:
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self._fd)
        _POOL.append(self._buf)
        self._buf = bytearray()

    def _grow(self, want: int) -> bool:
        """Load `want` more bytes before the window (bounded by the tail); False if none are left."""
        if self._lo <= self._floor:
            return False
        new_lo = max(self._floor, self._lo - want)
        # pread: the head's reader keeps its own place in the same file
        got = os.preadv(self._fd, [memoryview(self._buf)[new_lo: self._lo]], self._base + new_lo)
        if got != self._lo - new_lo:
            raise OSError("the file shrank while being read")
        # Markers that start in the new bytes; a few bytes past the seam catch one cut by it.
        found = type_marks(self._buf, new_lo, min(self._lo + 64, len(self._buf)))
        fresh = [(at, name) for at, name in found if at < self._lo]
        self._marks.extend(reversed(fresh))
        self._lo = new_lo
        return True

    def _line_start(self, pos: int) -> int | None:
        """Where the line holding buf[pos] starts, loading more tail if needed; None if cut off."""
        while True:
            newline = self._buf.rfind(b"\n", self._lo, pos)
            if newline >= 0:
                return newline + 1
            if self._lo == self._floor:
                # The window reaches the file's start (a whole line) or the tail's limit (a cut one).
                return self._lo if self._base + self._lo <= 0 else None
            self._grow(len(self._buf) - self._lo)

    def _head_line(self, i: int) -> bytes | None:
        """The i-th line of the head (read lazily), or None past its end."""
        while i >= len(self._head_raw) and self._head_source is not None:
            try:
                self._head_raw.append(next(self._head_source))
            except (StopIteration, OSError):
                self._head_source = None
        return self._head_raw[i] if i < len(self._head_raw) else None

    def _head_marks(self, i: int) -> set[bytes]:
        """The names of the `"type"` marks in the i-th head line, found once: a title is looked for
        as four types in turn, most often in none of the lines (each a search of every line)."""
        if i not in self._head_types:
            line = self._head_raw[i]
            self._head_types[i] = {name for _, name in type_marks(line, 0, len(line))}
        return self._head_types[i]

    def _head_record(self, i: int) -> Record | None:
        if i not in self._head_parsed:
            self._head_parsed[i] = parse_record(self._head_raw[i])
        return self._head_parsed[i]

    def _record_at(self, start: int, end: int) -> Record | None:
        """The record of the tail's line buf[start:end], parsed on first use."""
        parsed = self._parsed
        if start in parsed:
            return parsed[start]
        record = parsed[start] = parse_record(self._buf[start:end])
        return record

    def head(self) -> Iterator[Record]:
        """Records of the first lines, oldest first; read only as far as the caller goes."""
        if self.whole:  # the tail holds the file: its lines, parsed once for both ends
            buf, start = self._buf, self._floor
            for _ in range(self._head_lines):
                end = buf.find(b"\n", start)
                if end < 0:
                    end = len(buf)
                if (record := self._record_at(start, end)) is not None:
                    yield record
                if end == len(buf):
                    return
                start = end + 1
            return
        i = 0
        while self._head_line(i) is not None:
            if (record := self._head_record(i)) is not None:
                yield record
            i += 1

    def newest(self, *types: str, having: str | None = None) -> Iterator[Record]:
        """Records whose `type` is one of `types`, newest first: the tail, then the head.

        A marker may also stand inside a nested object; the parsed record's own `type` decides.
        `having`: only lines holding this key are parsed (a tool result is a 50 KB `user`
        record without the `permissionMode` a caller may be after).
        """
        key = b'"' + having.encode() + b'"' if having else b""
        wanted = set(types)  # none: any record
        wanted_marks = {t.encode() for t in types}
        buf = self._buf
        end = len(buf)  # lines at or after `end` were handled already
        i = 0
        while True:
            if i == len(self._marks):
                if not self._grow(len(buf) - self._lo):  # double the window
                    break
                continue
            pos, name = self._marks[i]
            i += 1
            if pos >= end or (wanted_marks and name not in wanted_marks):
                continue
            line_start = self._line_start(pos)
            if line_start is None:
                break  # the cut first piece of the tail: nothing older is in it
            line_end = buf.find(b"\n", pos)
            if line_end < 0:
                line_end = len(buf)
            if key and buf.find(key, line_start, line_end) < 0:
                end = line_start
                continue
            record = self._record_at(line_start, line_end)
            if record is not None and (record.get("type") in wanted or not wanted):
                yield record
            end = line_start
        if self.whole:
            return
        self._head_line(len(self._head_raw) + HEAD_LINES)  # the rest of the head, still bounded
        for k in reversed(range(len(self._head_raw))):
            line = self._head_raw[k]
            if (not wanted_marks or not wanted_marks.isdisjoint(self._head_marks(k))) and key in line:
                record = self._head_record(k)
                if record is not None and (record.get("type") in wanted or not wanted):
                    yield record

    def all(self) -> list[Record]:
        """Every record of both ends, oldest first, each parsed once."""
        while self._grow(len(self._buf)):
            pass
        data = bytes(self._buf[self._floor:])
        lines = data.split(b"\n")
        if self._base + self._floor > 0:
            lines = lines[1:]  # the cut first piece
        tail = [r for line in lines if (r := parse_record(line))]
        return tail if self.whole else list(self.head()) + tail


_FIRST_WINDOW = 64 * 1024
_POOL: list[bytearray] = []
_MARKS: Any = None


def type_marks(data: bytes | bytearray, start: int, end: int) -> list[tuple[int, bytes]]:
    """(where, name) of each `"type":"name"` mark (_TYPE_MARK) in data[start:end], in order:
    in C where it was built (sessidx/_stamps.c), else by the regex, compiled on first use. The
    first press ever reads transcripts before its first row, and importing `re` costs it 4-8 ms."""
    from sessidx.compiled import compiled

    native = compiled("_stamps", "type_marks")
    if native is not None:
        return native(data, start, end)  # type: ignore[no-any-return]
    global _MARKS
    if _MARKS is None:
        import re

        _MARKS = re.compile(_TYPE_MARK)
    return [(m.start(), m.group(1)) for m in _MARKS.finditer(data, start, end)]


def open_transcript(
    path: str | os.PathLike[str],
    head_lines: int = HEAD_LINES,
    line_cap: int = LINE_CAP,
    tail_bytes: int = TAIL_BYTES,
) -> Transcript | None:
    """A Transcript over a regular file, or None if it cannot be read (see open_regular: one
    fstat decides, and a file the tail holds whole is read with no buffered reader at all)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            return None
        os.set_blocking(fd, True)
        return Transcript(fd, st.st_size, head_lines, line_cap, tail_bytes, st.st_mtime_ns)
    except OSError:
        os.close(fd)
        return None


def read_prefix(path: str | os.PathLike[str], size: int) -> bytes | None:
    """At most the first `size` bytes of a regular file; None if it cannot be read."""
    f = open_regular(path)
    if f is None:
        return None
    with f:
        try:
            return f.read(size)
        except OSError:
            return None


def read_small_json(path: str | os.PathLike[str], cap: int = SMALL_JSON_CAP) -> Any:
    """A small JSON document (settings, manifests); None if missing, too big or broken."""
    data = read_prefix(path, cap + 1)
    return None if data is None or len(data) > cap else _json_document(data)


def _json_document(data: bytes) -> Any:
    """The JSON value of a whole document (a BOM allowed), or None when it is not JSON."""
    if data.startswith(_BOM):
        data = data[3:]
    try:
        return _json().loads(data)
    except (ValueError, RecursionError):
        return None


def read_document(path: str | os.PathLike[str], keys: tuple[str, ...]) -> dict[str, Any] | None:
    """A JSON document holding a whole session (cn, auggie, Amp). Up to SMALL_JSON_CAP it is
    parsed; a larger one is never held whole: the top-level string `keys` are found in its first
    and last 256 KiB (where these apps write them), and the rest is left out. None if unreadable."""
    f = open_regular(path)
    if f is None:
        return None
    with f:
        try:
            size = os.fstat(f.fileno()).st_size
            if size <= SMALL_JSON_CAP:  # read once, whole
                doc = _json_document(f.read(SMALL_JSON_CAP + 1))
                return doc if isinstance(doc, dict) else None
            head = f.read(256 * 1024)
            f.seek(size - 256 * 1024)
            tail = f.read()
        except OSError:
            return None
    import re

    found: dict[str, Any] = {}
    for key in keys:
        pattern = re.compile(rb'"' + re.escape(key.encode()) + rb'"\s*:\s*("(?:[^"\\]|\\.)*")')
        matches = pattern.findall(head) or pattern.findall(tail)
        value = parse_record(b'{"v":' + matches[0] + b"}") if matches else None
        if value is not None:
            found[key] = value["v"]
    return found


def read_small_text(path: str | os.PathLike[str], cap: int = 64 * 1024) -> str | None:
    data = read_prefix(path, cap + 1)
    return None if data is None or len(data) > cap else data.decode("utf-8", "replace")


def mtime_ms(path: str | os.PathLike[str]) -> int | None:
    """A file's mtime in ms since the epoch (an agent's "last used" when it records none)."""
    try:
        return os.stat(path).st_mtime_ns // 1_000_000
    except (OSError, ValueError):
        return None


FileStamp = tuple[int, int, int, int]  # (size, mtime_ns, ctime_ns, inode)


def stamp(path: str | os.PathLike[str]) -> FileStamp | None:
    """(size, mtime_ns, ctime_ns, inode) of a regular file, or None: what the cache keys on.
    Size and mtime alone miss a rewrite in place at the same size whose mtime was put back
    (`touch -r`, `rsync -t`, a backup restored): that sets the ctime to now, and a file
    replaced by another has another inode."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def scan(folder: str | os.PathLike[str]) -> list[os.DirEntry[str]]:
    """Entries of a folder, in no particular order; [] if it is missing or unreadable."""
    try:
        with os.scandir(folder) as it:
            return list(it)
    except (OSError, ValueError):
        return []


def _native_listing() -> Callable[[str, str, str], tuple[list[tuple[str, FileStamp]], set[str]]] | None:
    """sessidx/_stamps.c's stamped_files, loaded by the first listing (a search and the kept
    rows' press import this module and list nothing); None where the package was built without it."""
    from sessidx.compiled import compiled  # remembers it: asked once per folder of a listing

    return compiled("_stamps", "stamped_files")  # type: ignore[no-any-return]


def stamped_files(
    folder: str, suffix: str, skip_prefix: str = ""
) -> tuple[list[tuple[str, FileStamp]], set[str]]:
    """(name, stamp) of the regular files named `*suffix` in `folder` (links followed), but
    not those named `skip_prefix*`, and the names of its real sub-folders. This runs over every
    transcript on every key press: in C where it was built (sessidx/_stamps.c), except while a
    freshness.Watch records what the listing looks at, which sees only Python's os calls."""
    from sessidx.freshness import watching  # here: the kept rows' press imports readers, never a listing

    native = _native_listing()
    if native is not None and not watching():
        try:
            return native(folder, suffix, skip_prefix)
        except ValueError:  # a NUL in the path: no such folder
            return [], set()
    return python_stamped_files(folder, suffix, skip_prefix)


def python_stamped_files(
    folder: str, suffix: str, skip_prefix: str = ""
) -> tuple[list[tuple[str, FileStamp]], set[str]]:
    """stamped_files in Python. The stats are relative to the open folder, cheaper than one
    path lookup each."""
    found: list[tuple[str, FileStamp]] = []
    folders: set[str] = set()
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return found, folders
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                name = entry.name
                if name.endswith(suffix):
                    if skip_prefix and name.startswith(skip_prefix):
                        continue
                    try:
                        st = entry.stat()
                    except OSError:
                        continue
                    if stat.S_ISREG(st.st_mode):
                        found.append((name, (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)))
                elif is_real_dir(entry):
                    folders.add(name)
    except OSError:
        pass
    finally:
        os.close(fd)
    return found, folders


def is_real_dir(entry: os.DirEntry[str]) -> bool:
    """A folder, not a link to one (following links could loop)."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def subdirs(folder: str | os.PathLike[str]) -> list[os.DirEntry[str]]:
    """Real sub-folders only: symlinked folders are not followed (no loops)."""
    return [entry for entry in scan(folder) if is_real_dir(entry)]


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


def iso_ms(value: Any) -> int | None:
    """Milliseconds since the epoch of an ISO 8601 time (`2026-11-29T22:34:28.609Z`), or None."""
    if not isinstance(value, str) or not value:
        return None
    from datetime import datetime, timezone

    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return int(parsed.timestamp() * 1000)


def joined_text(content: Any) -> str:
    """The text of a message's content: a string, or the `text` of each part of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def is_wrapper(said: str) -> bool:
    """Text the CLI put around or instead of a prompt (`<command-name>`, `<environment_context>`,
    `<session_context>`): not what the person typed, so never a title."""
    return said.lstrip().startswith("<")


def git_common_dir(folder: str) -> str | None:
    """The repository `folder` belongs to, the same for all its worktrees: git's common
    folder (`.git` of the main worktree), found by reading `.git` files (no git process).
    None outside git."""
    here = folder
    while True:
        dot_git = os.path.join(here, ".git")
        if os.path.isdir(dot_git):
            return os.path.realpath(dot_git)
        if os.path.isfile(dot_git):  # a worktree or submodule: `gitdir: PATH`
            pointer = read_small_text(dot_git, 4096) or ""
            if not pointer.startswith("gitdir: "):
                return None
            git_dir = os.path.join(here, pointer[8:].strip())
            common = (read_small_text(os.path.join(git_dir, "commondir"), 4096) or "").strip()
            return os.path.realpath(os.path.join(git_dir, common) if common else git_dir)
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def git_branch(folder: str) -> str | None:
    """The branch checked out in `folder`, read from git's own HEAD file (no git process: the
    picker asks this of every folder on each open). None outside git or on a detached HEAD."""
    here = folder
    while True:
        dot_git = os.path.join(here, ".git")
        if os.path.isdir(dot_git):
            git_dir = dot_git
            break
        if os.path.isfile(dot_git):  # a worktree or submodule: `gitdir: PATH`
            pointer = read_small_text(dot_git, 4096) or ""
            if not pointer.startswith("gitdir: "):
                return None
            git_dir = os.path.join(here, pointer[8:].strip())
            break
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
    head = (read_small_text(os.path.join(git_dir, "HEAD"), 4096) or "").strip()
    return (head[16:] or None) if head.startswith("ref: refs/heads/") else None


def text(value: Any) -> str | None:
    """A non-empty string, or None for anything else (wrong types are common in old data)."""
    return value if isinstance(value, str) and value else None
