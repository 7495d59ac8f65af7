"""What was said in one session, read from its transcript with bounded reads: the records
after an offset (the content index), one record (a search hit), the last few exchanges (the
preview). Imported on every preview, so it loads no `sqlite3`.
"""

from __future__ import annotations

import os

from sessidx.model import Session
from sessidx.readers import json_value, open_regular
from sessidx.redact import mask
from sessidx.tool_output import raw_gist

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any

LINE_CAP = 4 * 1024 * 1024  # a record longer than this is a payload (an image, a file dump), not talk
CHUNK = 1024 * 1024
TAIL = 512 * 1024  # what the preview reads of a transcript's end
# Where a long line must show its marker: every CLI writes a record's type or role before its
# content, so a tool output or a blob of a few MB is skipped after a look at its first bytes.
MARKER_WINDOW = 2048
SKIP_OVER = 16 * 1024  # a line this long holding one of an app's `said_skip` markers is a tool's output
FINGERPRINT = 64  # what records_from keeps of the bytes before where it ended (the index checks appends with it)


def records_from(path: str, start: int, markers: tuple[bytes, ...],
                 skip: tuple[bytes, ...] = ()) -> Iterator[tuple[int, Any]]:
    """(byte offset, record) for each complete line from `start` holding one of `markers`, then
    (-end, the FINGERPRINT bytes before end, or None when fewer were read) with the end of
    the last complete line. Lines over LINE_CAP are skipped
    without being held, and long ones showing a `skip` marker (a tool's output) are not parsed:
    a ToolGist of their head and tail stands for the record; a last line without its newline
    (being written) is left for next time."""
    f = open_regular(path)
    if f is None:
        yield -start, None
        return
    with f:
        f.seek(start)
        pos = start  # offset of buf[0]
        buf = b""
        before = b""  # the last bytes before pos
        skipping = False
        while True:
            chunk = f.read(CHUNK)
            if not chunk:
                break
            buf += chunk
            begin = 0
            while (nl := buf.find(b"\n", begin)) >= 0:
                # a line is copied out only to be parsed: most bytes are in lines that are not
                window = min(nl, begin + MARKER_WINDOW)
                if not skipping and nl - begin <= LINE_CAP and _holds_any(buf, begin, window, markers):
                    if skip and nl - begin > SKIP_OVER and _holds_any(buf, begin, window, skip):
                        yield pos + begin, ToolGist(raw_gist(buf, begin, nl))  # not parsed: its head and tail
                    elif (record := json_value(buf[begin:nl])) is not None:  # None: a broken line, the rest is read
                        yield pos + begin, record
                skipping = False
                begin = nl + 1
            if begin:
                before = (before + buf[max(0, begin - FINGERPRINT):begin])[-FINGERPRINT:]
            pos += begin
            buf = buf[begin:]
            if len(buf) > LINE_CAP:  # the rest of this line is skipped, never held
                before = buf[-FINGERPRINT:]
                pos += len(buf)
                buf = b""
                skipping = True
    yield -pos, before if len(before) == min(pos, FINGERPRINT) else None


class ToolGist(str):
    """What records_from yields for a tool output's record too long to parse: its gist."""


def _holds_any(buf: bytes, start: int, end: int, markers: tuple[bytes, ...]) -> bool:
    for marker in markers:  # noqa: SIM110 - a loop, not any(): called for every line of every transcript
        if buf.find(marker, start, end) >= 0:
            return True
    return False


def transcript_of(app: Any, session: Session) -> str | None:
    """The session's transcript where the listing found it: the app's `transcript(session)`
    when it has one (Codex: its rollout found by id in a home moved or restored), else its path."""
    find = getattr(app, "transcript", None)
    return find(session) if find is not None else session.path


def by_records(app: Any, path: str | None) -> bool:
    """Whether this app's session at `path` is a JSONL transcript read record by record (its
    `said`), rather than a document or store read whole (its `conversation`)."""
    return hasattr(app, "said") and bool(path and path.endswith(".jsonl"))


def messages_from(app: Any, path: str, start: int,
                  window: int | None = None) -> tuple[list[tuple[int, str, str]], int, bytes | None]:
    """(byte offset of its record, role, text) of each message after `start`, where the last
    complete line ends, and the FINGERPRINT bytes before that end (None: not known); with
    `window`, only of records starting within `window` bytes, and where the next one starts
    (a transcript that grew by a gigabyte is read a window at a time)."""
    said: list[tuple[int, str, str]] = []
    end = start
    fingerprint = None
    for pos, record in records_from(path, start, app.said_markers, getattr(app, "said_skip", ())):
        if pos < 0:
            end = -pos
            fingerprint = record
        elif window is not None and pos >= start + window:
            return said, pos, None  # the reader and its file are closed as it goes
        elif isinstance(record, ToolGist):
            said.append((pos, "tool", str(record)))
        else:
            said += [(pos, role, text) for role, text in safe_said(app, record)]
    return said, end, fingerprint


def safe_said(app: Any, record: Any) -> list[tuple[str, str]]:
    if not isinstance(record, dict):
        return []
    try:
        return [(r, t) for r, t in app.said(record) if isinstance(t, str)]
    except Exception:  # an odd record must not stop the rest of the transcript
        return []


GLANCE = 8192  # what is read of a record to tell whether it holds a search's words
LONG_LOOK = 4 * 1024 * 1024  # what is read in all of long records when no glance held a word


def lines_holding(path: str, places: Sequence[int], words: list[bytes], keep: int = 3) -> list[bytes]:
    """Of the JSONL records starting at `places`, the whole lines of the `keep` that hold the
    most of `words` (lower case), best first. Each is glanced at (its first GLANCE bytes);
    only when no glance holds a word are the long ones read on, LONG_LOOK bytes in all.
    A line over LINE_CAP is left out."""
    f = open_regular(path)
    if f is None:
        return []
    lines = []
    with f:
        def holding(line: bytes) -> int:
            return sum(map(line.lower().__contains__, words))

        try:
            glances = [_glance(f, pos) for pos in places]
            holds = [holding(line) for line, _ in glances]
            budget = LONG_LOOK
            for i, (line, whole) in enumerate(glances):
                if any(holds) or budget <= 0:
                    break
                if not whole:  # the word may be further on: this record's rest
                    glances[i] = _rest(f, places[i], line, min(budget, LINE_CAP + 1))
                    holds[i] = holding(glances[i][0])
                    budget -= len(glances[i][0])
            for i in sorted(range(len(places)), key=lambda i: -holds[i])[:keep]:
                line, whole = glances[i] if glances[i][1] else _rest(f, places[i], glances[i][0], LINE_CAP + 1)
                if whole:
                    lines.append(line)
        except (OSError, ValueError):  # a read error, or an offset past a file that shrank meanwhile
            return lines
    return lines


def _glance(f: Any, pos: int) -> tuple[bytes, bool]:
    """The first GLANCE bytes of the line at `pos`, and whether that is all of it."""
    glance = os.pread(f.fileno(), GLANCE, pos)
    end = glance.find(b"\n")
    return (glance[:end], True) if end >= 0 else (glance, False)


def _rest(f: Any, pos: int, start: bytes, most: int) -> tuple[bytes, bool]:
    """The line at `pos` whose first bytes are `start`, read on to `most` bytes in all, and
    whether that is all of it."""
    f.seek(pos + len(start))
    line = start + f.readline(max(0, most - len(start)))
    return (line[:-1], True) if line.endswith(b"\n") else (line, False)


def recent(session: Session, app: Any, exchanges: int = 3) -> list[tuple[str, str]]:
    """The last `exchanges` user prompts of a session, each with what followed it, in order,
    secrets masked."""
    said: list[tuple[str, str]] = []
    path = transcript_of(app, session) or ""
    if by_records(app, path):
        try:
            size = os.stat(path).st_size
        except OSError:
            return []
        said = [(role, text) for _, role, text in messages_from(app, path, _line_after(path, max(0, size - TAIL)))[0]]
    elif hasattr(app, "conversation") and _small(path):
        try:
            said = list(app.conversation(session))
        except Exception:  # a broken document: no conversation shown, the plan still is
            return []
    prompts = [i for i, (role, _) in enumerate(said) if role == "user"]
    shown = said[prompts[-exchanges]:] if len(prompts) >= exchanges else said
    return [(role, mask(text)) for role, text in shown]  # as shown in the preview: no secret


PREVIEW_STORE_CAP = 8 * 1024 * 1024  # a document or database read whole (a database copied) on a key press


def _small(path: str) -> bool:
    """A store small enough to read on every arrow key (the preview); the content index reads
    bigger ones once per refresh."""
    try:
        return os.stat(path).st_size <= PREVIEW_STORE_CAP
    except OSError:
        return False


def _line_after(path: str, offset: int) -> int:
    """The start of the first whole line at or after `offset`."""
    if offset == 0:
        return 0
    f = open_regular(path)
    if f is None:
        return offset
    with f:
        f.seek(offset - 1)
        f.readline(CHUNK)
        return f.tell()
