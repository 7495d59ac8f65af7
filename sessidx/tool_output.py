"""What is indexed of a tool's output: the parts people search for, never the whole of a long one.

People look a session up by the error it hit, far more than by anything else: an exception's
name, an error line of a test log, an exit status, the file it named. A short output is
indexed whole; of a long one, its first and last lines and the lines that read as an error or
a traceback frame from anywhere in it, each line and their number bounded. An output in a
record too long to parse (a transcript line over conversation.SKIP_OVER) is read from the raw
JSON bytes: each output string whole, unescaped just enough to be read as lines.
"""

from __future__ import annotations

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
    lowered = text.lower()
    head = text[:WHOLE // 2].split("\n")[:EDGE_LINES]
    tail = text[-WHOLE // 2:].split("\n")[-EDGE_LINES:]
    edges = {line[:LINE] for line in (*head, *tail)}
    errors = [line for line in _lines(text, lowered, ERROR_MARKS) if line not in edges]
    if len(errors) > MOST_LINES:
        errors = errors[:MOST_LINES // 2] + errors[-(MOST_LINES - MOST_LINES // 2):]
    places = [line for line in _lines(text, lowered, PLACE_MARKS) if line not in edges and line not in errors]
    places = places[:MOST_PLACES]
    return "\n".join(line[:LINE] for line in (*head, *errors, *places, *tail))


def _lines(text: str, lowered: str, marks: tuple[str, ...]) -> list[str]:
    """The distinct lines of `text` holding one of `marks`, in their order, each cut at LINE."""
    starts: set[int] = set()
    for mark in marks:
        at = lowered.find(mark)
        looks = 0
        while at >= 0 and looks < MOST_LOOKS:
            starts.add(text.rfind("\n", 0, at) + 1)
            end = text.find("\n", at)
            at = lowered.find(mark, end) if end >= 0 else -1
            looks += 1
    found = dict.fromkeys(text[start:end if (end := text.find("\n", start, start + LINE)) >= 0 else start + LINE]
                          for start in sorted(starts))
    found.pop("", None)
    return list(found)


# Where a tool output's string starts in the CLIs' records: Claude's tool_result `content` (a
# string, or blocks of `text`) and its `toolUseResult` (`stdout`, `stderr`), Codex's `output`,
# Copilot's `content` and `detailedContent`.
_STARTS = tuple(f'"{key}":{space}"' for key in ("content", "text", "output", "stdout", "stderr", "detailedContent")
                for space in ("", " "))


def raw_gist(buf: bytes, start: int, end: int) -> str:
    """The gist of the tool outputs in the raw JSON line `buf[start:end]`, too long to be parsed
    whole: each output string read whole (by the C scanner of JSON strings alone), one stored
    twice (Claude keeps an output in its message and in `toolUseResult`) counted once."""
    try:
        from _json import scanstring  # the `json` package would load `re` and `enum`
    except ImportError:  # a Python without its C accelerator
        from json.decoder import py_scanstring as scanstring  # type: ignore[attr-defined,no-redef]

    line = buf[start:end].decode("utf-8", "replace")
    texts: list[str] = []
    for opening in sorted(at + len(key) for key in _STARTS for at in _all(line, key)):
        try:
            text = scanstring(line, opening, False)[0]
        except ValueError:  # a string cut short or badly escaped: the rest are read
            continue
        if not any(text in other for other in texts):
            texts = [other for other in texts if other not in text] + [text]
    return "\n".join(gist(text) for text in texts)


def _all(line: str, key: str) -> list[int]:
    out = []
    at = line.find(key)
    while at >= 0:
        out.append(at)
        at = line.find(key, at + len(key))
    return out
