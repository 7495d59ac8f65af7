"""What is indexed of a tool's output: the parts people search for, never the whole of a long one.

People look a session up by the error it hit, far more than by anything else: an exception's
name, an error line of a test log, an exit status, the file it named. A short output is
indexed whole; of a long one, its first and last lines and the lines that read as an error or
a traceback frame from anywhere in it, each line and their number bounded. An output in a
record too long to parse (a transcript line over conversation.SKIP_OVER) is read from the raw
JSON bytes: in C, each output string in one pass over its bytes, of which only the lines kept
are unescaped; in Python, each string unescaped whole.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

WHOLE = 4096  # an output this short is indexed whole
LINE = 200  # what is kept of one line
EDGE_LINES = 6  # first and last lines kept (Codex heads an output with 4 of its own)
MOST_LINES = 24  # distinct error lines kept, wherever they are: the first half and the last half
MOST_PLACES = 6  # distinct lines kept that only name a file's place (`src/pool.rs:12`), first ones first
MOST_LOOKS = 400  # places of one mark looked at (an output of ten thousand `error`s is not read line by line)
# Lower case: each is looked for with str.find in the lowered text, in C, not by a regex.
ERROR_MARKS = ("error", "err!", "exception", "traceback", "fail", "fatal", "panic", "exit code", "exited with",
               "exit status", "non-zero", "killed", "denied", "not found", "refused", "timed out", "segmentation",
               "abort", 'file "')
PLACE_MARKS = (".py:", ".js:", ".ts:", ".go:", ".rs:", ".java:", ".rb:", ".c:", ".cpp:")


def gist(text: str) -> str:
    """The searchable part of one tool output: whole when short; else its first and last lines,
    its distinct error lines (error words, exception names, exit statuses) from anywhere in it,
    bounded by how many are kept, not by where they stand, and a few lines naming a file's place."""
    if len(text) <= WHOLE:
        return text
    head = text[:WHOLE // 2].split("\n")[:EDGE_LINES]
    tail = text[-WHOLE // 2:].split("\n")[-EDGE_LINES:]
    edges = {line[:LINE] for line in (*head, *tail)}
    error_lines, place_lines = _marked(text)
    errors = [line for line in error_lines if line not in edges]
    if len(errors) > MOST_LINES:
        errors = errors[:MOST_LINES // 2] + errors[-(MOST_LINES - MOST_LINES // 2):]
    places = [line for line in place_lines if line not in edges and line not in errors]
    places = places[:MOST_PLACES]
    return "\n".join(line[:LINE] for line in (*head, *errors, *places, *tail))


def _marked(text: str) -> tuple[list[str], list[str]]:
    """The distinct lines of `text` holding an error mark, and those holding a place mark, each
    in their order and cut at LINE; of one mark, the first MOST_LOOKS lines holding it (in lower
    case). In C where the package was built with it (sessidx/_words.c: one pass over the text
    as it is), else python_marked."""
    if (native := native_marked()) is not None:
        error_starts, place_starts = native(text, _MARKS, len(ERROR_MARKS), MOST_LOOKS)
        return _cut(text, error_starts), _cut(text, place_starts)
    lowered = text.lower()
    if len(lowered) != len(text):  # a character whose lower case is longer (`İ`): places would shift
        lowered = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return python_marked(text, lowered)


def native_marked() -> Callable[[str, tuple[str, ...], int, int], tuple[list[int], list[int]]] | None:
    """sessidx/_words.c's `marked`, loaded by the first long output (a search, which imports this
    module for its snippets, never loads it); None where the package was built without it."""
    from sessidx.compiled import compiled

    return compiled("_words", "marked")  # type: ignore[no-any-return]


def python_marked(text: str, lowered: str) -> tuple[list[str], list[str]]:
    """_marked in Python, over the text and its lower case."""
    finder = _finder(_MARKS)
    errors: set[int] = set()
    places: set[int] = set()
    if finder is not None:  # every mark in one pass (Aho-Corasick, in Rust): the same lines
        looks = [0] * len(_MARKS)
        last = [-1] * len(_MARKS)
        for mark, at, _ in finder.find_matches_as_indexes(lowered, overlapping=True):
            start = text.rfind("\n", 0, at) + 1
            if last[mark] != start and looks[mark] < MOST_LOOKS:
                (errors if mark < len(ERROR_MARKS) else places).add(start)
                looks[mark] += 1
            last[mark] = start
    else:
        for i, mark in enumerate(_MARKS):
            starts = errors if i < len(ERROR_MARKS) else places
            at = lowered.find(mark)
            looks_at = 0
            while at >= 0 and looks_at < MOST_LOOKS:
                starts.add(text.rfind("\n", 0, at) + 1)
                end = text.find("\n", at)
                at = lowered.find(mark, end) if end >= 0 else -1
                looks_at += 1
    return _cut(text, errors), _cut(text, places)


def _cut(text: str, starts: set[int] | list[int]) -> list[str]:
    found = dict.fromkeys(text[start:end if (end := text.find("\n", start, start + LINE)) >= 0 else start + LINE]
                          for start in sorted(starts))
    found.pop("", None)
    return list(found)


_MARKS = ERROR_MARKS + PLACE_MARKS


_FINDERS: dict[tuple[str, ...], Any] = {}


def _finder(marks: tuple[str, ...]) -> Any:
    """An automaton finding every one of `marks` in one pass over a text (ahocorasick-rs):
    one str.find per mark reads a long output once per mark, 28 times (measured: 1.3 s of the
    2.0 s that reading 500 sessions' 62 MB of long outputs took; 0.42 s this way). None where
    it is not installed: then str.find, mark by mark."""
    if marks not in _FINDERS:
        try:
            from ahocorasick_rs import AhoCorasick
        except ImportError:
            _FINDERS[marks] = None
        else:
            _FINDERS[marks] = AhoCorasick(list(marks))
    return _FINDERS[marks]


# Where a tool output's string starts in the CLIs' records: Claude's tool_result `content` (a
# string, or blocks of `text`) and its `toolUseResult` (`stdout`, `stderr`), Codex's `output`,
# Copilot's `content` and `detailedContent`.
_QUOTED_KEYS = tuple(f'"{key}' for key in ("content", "text", "output", "stdout", "stderr", "detailedContent"))
_RAW_QUOTED_KEYS = tuple(key.encode() for key in _QUOTED_KEYS)


def raw_gist(buf: bytes, start: int, end: int) -> str:
    """The gist of the tool outputs in the raw JSON line `buf[start:end]`, too long to be parsed
    whole: each output string read once, one stored twice (Claude keeps an output in its message
    and in `toolUseResult`) counted once, one held in another dropped. In C where the package
    was built with it (sessidx/_words.c's read_output, on the bytes as they are), else
    python_raw_gist."""
    read = native_read()
    if read is None:
        return python_raw_gist(buf, start, end)
    outputs: list[_Output] = []
    spans: list[tuple[int, int]] = []  # each string read, as the line has it: a second copy is known unread
    view = memoryview(buf)
    at = buf.find(b'":', start, end)
    while at >= 0:
        after = at + 2
        if (opening := _raw_opening(buf, start, end, at)) >= 0:
            if (seen := next((a - o for o, a in spans if buf.startswith(view[o:a], opening, end)), None)) is not None:
                after = opening + seen
            elif (one := read(buf, opening, end, _MARKS, len(ERROR_MARKS), _NUMBERS)) is not None:
                after, chars, shape, said = one  # None: cut short or badly escaped
                spans.append((opening, after))
                output = _Output(buf, opening, after - 1, chars, shape, said)
                if not any(other.holds(output) for other in outputs):
                    outputs = [other for other in outputs if not output.holds(other)] + [output]
        at = buf.find(b'":', after, end)  # not inside a string read: its quotes are escaped there
    return "\n".join(output.gist for output in outputs)


def native_read() -> Callable[..., tuple[int, int, int, str | None] | None] | None:
    """sessidx/_words.c's `read_output` (loaded as native_marked is); None where the package was
    built without it."""
    from sessidx.compiled import compiled

    return compiled("_words", "read_output")  # type: ignore[no-any-return]


# tool_output's bounds, as read_output takes them (gist's head and tail: text[:WHOLE // 2], text[-WHOLE // 2:])
_NUMBERS = (WHOLE, WHOLE // 2, -(-WHOLE // 2), LINE, EDGE_LINES, MOST_LINES, MOST_PLACES, MOST_LOOKS)


class _Output:
    """One output string read by read_output: where its bytes are in the line, its length once
    unescaped, its shape (how it writes its characters), its gist, and its text where known (a
    short one's, or one read whole to be compared)."""

    __slots__ = ("buf", "opening", "close", "chars", "shape", "text", "gist")

    def __init__(self, buf: bytes, opening: int, close: int, chars: int, shape: int, said: str | None) -> None:
        self.buf, self.opening, self.close, self.shape = buf, opening, close, shape
        self.text = said if 0 <= chars <= WHOLE else None
        if chars < 0:  # bytes that are not UTF-8: read as the decoded line has them, in Python
            self.text = self.whole_text()
            chars, said = len(self.text), gist(self.text)
        self.chars = chars
        self.gist: str = said  # type: ignore[assignment]

    def holds(self, inner: _Output) -> bool:
        """Whether `inner`'s text is in this one's: told from their bytes where their shapes
        agree (sessidx/_words.c's holds_raw), else by their texts, read whole."""
        if inner.chars > self.chars:
            return False
        if self.text is None or inner.text is None:
            from sessidx.compiled import compiled

            held = compiled("_words", "holds_raw")(self.buf, self.opening, self.close, self.shape, inner.opening,
                                                    inner.close, inner.shape)
            if held is not None:
                return bool(held)
        return inner.whole_text() in self.whole_text()

    def whole_text(self) -> str:
        if self.text is None:
            line = self.buf[self.opening - 1:self.close + 1].decode("utf-8", "replace")  # between ASCII quotes
            self.text = _scanned(line, 1)[0]  # type: ignore[index]  # good: read_output read it
        return self.text


def _raw_opening(buf: bytes, start: int, end: int, at: int) -> int:
    """_opening in the line's bytes `buf[start:end]`."""
    if buf.endswith(_RAW_QUOTED_KEYS, start, at):
        if buf.startswith(b'"', at + 2, end):
            return at + 3
        if buf.startswith(b' "', at + 2, end):
            return at + 4
    return -1


def python_raw_gist(buf: bytes, start: int, end: int) -> str:
    """raw_gist in Python: the line decoded, each output string unescaped whole (by the C
    scanner of JSON strings alone) and its gist taken."""
    line = buf[start:end].decode("utf-8", "replace")
    texts: list[str] = []
    raws: list[str] = []  # each string read, as the line has it: a second copy is known unread
    at = line.find('":')
    while at >= 0:
        after = at + 2
        if (opening := _opening(line, at)) >= 0:
            if (raw := next((r for r in raws if line.startswith(r, opening)), None)) is not None:
                after = opening + len(raw)
            elif (read := _scanned(line, opening)) is not None:  # None: cut short or badly escaped
                text, after = read
                raws.append(line[opening:after])
                if not any(text in other for other in texts):
                    texts = [other for other in texts if other not in text] + [text]
        at = line.find('":', after)  # not inside a string read: its quotes are escaped there
    return "\n".join(gist(text) for text in texts)


def _scanned(line: str, at: int) -> tuple[str, int] | None:
    """json's scanstring(line, at, strict=False): the JSON string starting at `at`, unescaped,
    and where it ends; None for one cut short or badly escaped (the rest are read). From
    json.decoder, not _json: _json builds its errors from json.decoder's, and where that is not
    loaded yet it raises SystemError instead (an indexing process has loaded it by then,
    through readers; this no longer depends on that)."""
    from json.decoder import scanstring  # type: ignore[attr-defined]  # the C one where Python has it

    try:
        return scanstring(line, at, False)  # type: ignore[no-any-return]
    except ValueError:
        return None


def _opening(line: str, at: int) -> int:
    """Where the string after one of _QUOTED_KEYS starts, when the `":` at `at` ends one
    (`"content":"`, `"stdout": "`); else -1. Looked for at each `":` outside the strings read
    (one pass, in C; a long record holds a few), not by a pass over the line per key."""
    if line.endswith(_QUOTED_KEYS, 0, at):
        if line.startswith('"', at + 2):
            return at + 3
        if line.startswith(' "', at + 2):
            return at + 4
    return -1
