"""What is indexed of a tool's output: the parts people search for, never the whole of a long one.

People look a session up by the error it hit, far more than by anything else: an exception's
name, an error line of a test log, an exit status, the file it named. A short output is
indexed whole; of a long one, its first and last lines and every line that reads as an error
or a traceback frame, each line and the whole bounded. An output too long to parse at all (a
transcript line over conversation.SKIP_OVER) is looked at in its raw JSON bytes: the head and
the tail of the line, unescaped just enough to be read as lines.
"""

from __future__ import annotations

WHOLE = 4096  # an output this short is indexed whole
LINE = 200  # what is kept of one line
EDGE_LINES = 6  # first and last lines kept (Codex heads an output with 4 of its own)
MOST_LINES = 20  # error lines kept, first ones first
HEAD = TAIL = 4096  # raw bytes looked at, at the start and at the end of a line too long to parse
# Lower case: each is looked for with str.find in the lowered text, in C, not by a regex.
ERROR_MARKS = ("error", "err!", "exception", "traceback", "fail", "fatal", "panic", "exit code", "exited with",
               "exit status", "killed", "denied", "not found", "refused", "timed out", "segmentation", "abort",
               'file "')


def gist(text: str) -> str:
    """The searchable part of one tool output."""
    if len(text) <= WHOLE:
        return text
    lowered = text.lower()
    starts: set[int] = set()
    for mark in ERROR_MARKS:
        at = lowered.find(mark)
        while at >= 0 and len(starts) < MOST_LINES:
            line_start = text.rfind("\n", 0, at) + 1
            starts.add(line_start)
            end = text.find("\n", at)
            at = lowered.find(mark, end) if end >= 0 else -1
    head = text[:WHOLE // 2].split("\n")[:EDGE_LINES]
    tail = text[-WHOLE // 2:].split("\n")[-EDGE_LINES:]
    errors = []
    for start in sorted(starts):
        end = text.find("\n", start, start + LINE)
        errors.append(text[start:end if end >= 0 else start + LINE])
    return "\n".join(line[:LINE] for line in (*head, *errors, *tail))


# Where a tool output's string starts in the CLIs' records: Claude's tool_result `content` (and
# `stdout`), Codex's `output`.
_STARTS = (b'"content":"', b'"content": "', b'"output":"', b'"output": "', b'"stdout":"', b'"stdout": "')


def raw_gist(buf: bytes, start: int, end: int) -> str:
    """The gist of the tool output in the raw JSON line `buf[start:end]`, too long to be parsed:
    its string's first HEAD and last TAIL bytes, and the error lines within them."""
    head = buf[start:min(end, start + HEAD)]
    opening = max((head.rfind(s) + len(s) if head.rfind(s) >= 0 else -1) for s in _STARTS)
    head = head[opening:] if opening >= 0 else b""
    tail = buf[max(start + HEAD, end - TAIL):end]
    closing = _closing_quote(tail)
    tail = tail[:closing] if closing >= 0 else b""
    text = _unescape(head) + "\n" + _unescape(tail)
    return gist(text) if len(text) > WHOLE else text


def _closing_quote(raw: bytes) -> int:
    """Where a JSON string that `raw` is the inside of ends: its first unescaped quote."""
    at = raw.find(b'"')
    while at >= 0:
        backslashes = 0
        while at - backslashes > 0 and raw[at - backslashes - 1] == 0x5C:
            backslashes += 1
        if backslashes % 2 == 0:
            return at
        at = raw.find(b'"', at + 1)
    return -1


def _unescape(raw: bytes) -> str:
    """A piece of a JSON string's inside, its common escapes undone (\\uXXXX is left: a word cut
    in half at the piece's edge is worth less than the time a full decoder takes)."""
    return (raw.replace(b"\\\\", b"\x00").replace(b"\\n", b"\n").replace(b"\\t", b"\t").replace(b'\\"', b'"')
            .replace(b"\\r", b"").replace(b"\x00", b"\\").decode("utf-8", "replace"))
