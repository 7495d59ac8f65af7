"""tool_output.raw_gist in C (sessidx/_words.c's read_output and holds_raw: each output string
read in one pass over the line's bytes, only the lines kept unescaped) gives what the Python
one gives (python_raw_gist: the line decoded, each string unescaped whole by json's scanstring,
then gist), on long records written every way JSON allows: each character as it is or as an
escape, surrogates, control characters, marks split by escapes, bytes that are not UTF-8,
strings stored twice or held in another, cut short or badly escaped. Both of C's loops (sixteen
bytes at a time, and one) are held to it.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sessidx import tool_output
from sessidx.tool_output import LINE, MOST_LINES, MOST_LOOKS, WHOLE, python_raw_gist, raw_gist


def test_the_c_reading_is_what_runs():
    assert tool_output.native_read() is not None  # built (CI's machine has a compiler): C was compared


def both_ways(line: bytes) -> str:
    """raw_gist of `line` in C, with read_output's loop over sixteen bytes at a time (where the
    CPU has SSSE3) and with its loop over one, each equal to python_raw_gist's."""
    from sessidx import _words

    padded = b"before\n" + line + b"\nafter"  # as records_from hands a line over: inside its buffer
    wanted = python_raw_gist(padded, 7, 7 + len(line))
    was = _words.read_in_blocks(True)
    try:
        for in_blocks in (True, False):
            _words.read_in_blocks(in_blocks)
            assert raw_gist(padded, 7, 7 + len(line)) == wanted, in_blocks
    finally:
        _words.read_in_blocks(was)
    return wanted


def escaped(text: str, rng: random.Random, often: float) -> str:
    """`text` as a JSON string's inside, each character written as it is or as an escape (of
    either hex case), `often` of them escaped where they need not be."""
    out = []
    for c in text:
        code = ord(c)
        upper = rng.random() < 0.5
        def u(n: int) -> str:
            return f"\\u{n:04X}" if upper else f"\\u{n:04x}"
        if c == '"':
            out.append(u(code) if rng.random() < often else '\\"')
        elif c == "\\":
            out.append(u(code) if rng.random() < often else "\\\\")
        elif c == "\n":
            out.append(u(code) if rng.random() < often else "\\n")
        elif code < 0x20:
            short = {"\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f"}.get(c)
            out.append(rng.choice([x for x in (short, u(code), c) if x]))  # c as it is: strict=False takes it
        elif 0xD800 <= code < 0xE000:
            out.append(u(code))  # a lone surrogate: only as an escape
        elif code > 0xFFFF and rng.random() < often:
            code -= 0x10000
            out.append(u(0xD800 + (code >> 10)) + u(0xDC00 + (code & 0x3FF)))
        elif c == "/" and rng.random() < often:
            out.append("\\/")
        elif rng.random() < often and code <= 0xFFFF:
            out.append(u(code))
        else:
            out.append(c)
    return "".join(out)


# What long outputs say: marks of every kind and case, next to what escapes write (quotes,
# backslashes, a backslash before an `n`, tabs), beyond ASCII (the Kelvin sign, whose lower case
# is `k`; `İ`, whose lower case is longer), surrogates, control characters, lines past LINE.
_PIECES = st.sampled_from([
    "error", "Error: boom", "ERROR", "FAILED", "fail", "Traceback (most recent call last):", 'File "a.py", line 3',
    'file "', "src/pool.rs:12", "x.PY:9", "exit code 2", "Exited With 1", "non-zero", "killed", "\u212aILLED",
    "\u212a", "not found", "timed out", "segmentation", "abort", "panic", "err!", "denied", "refused", ".c:", ".cpp:",
    " ", "ok", "the", "e", "r", "\\n", "\\", '"', "\\\"", "\t", "/", "é", "日本語", "😀", "İ", "\ud800", "\udc00x",
    "\ud83d", "\ude00", "\x00", "\x1b[31m", "\x7f", "\u2028", "ú", "il", "00fail", "n", "u00", "x" * 150, "y" * 260,
])
_LINES = st.lists(_PIECES, max_size=8).map("".join)


@st.composite
def outputs(draw: st.DrawFn) -> str:
    """A long output: its lines drawn, some of them said again and again (more lines holding
    one mark than MOST_LOOKS, more distinct error lines than MOST_LINES), and numbered lines
    around them to pass WHOLE."""
    lines = draw(st.lists(_LINES, min_size=1, max_size=30))
    repeats = draw(st.sampled_from([1, 1, 2, 5, MOST_LOOKS // 20 + 1]))
    numbered = draw(st.sampled_from([0, 10, 60, 200]))
    errors = draw(st.sampled_from([0, 0, MOST_LINES + 3, MOST_LOOKS + 20]))  # distinct error lines
    said = [*(f"step {i} ok" for i in range(numbered)), *lines * repeats,
            *(f"error {i}" for i in range(errors)), *lines[:3]]
    text = "\n".join(said)
    width = draw(st.integers(0, 300))
    while len(text) <= WHOLE:
        text += f"\nfiller {len(text)} " + "w" * width
    if draw(st.integers(0, 9)) == 0:  # now and then a short one
        text = text[:draw(st.integers(0, len(text)))]
    return text


_KEYS = st.sampled_from(["content", "text", "output", "stdout", "stderr", "detailedContent", "input", "type"])


@st.composite
def records(draw: st.DrawFn) -> bytes:
    """A long record: output strings under output keys and others, each written its own way;
    one stored twice, one held in another (written alike or not), and now and then bytes that
    are not UTF-8, a bad escape, or the line cut short in its last string."""
    rng = random.Random(draw(st.integers(0, 2**32)))  # one draw: hypothesis's randoms draw for each call
    texts = draw(st.lists(outputs(), min_size=1, max_size=3))
    if draw(st.booleans()):  # one held in another
        inner = draw(st.sampled_from(texts))
        texts.append(draw(st.sampled_from(["", "x", "error: "])) + inner + draw(st.sampled_from(["", "\n", "y"])))
    raws = [escaped(text, rng, draw(st.sampled_from([0.0, 0.0, 0.02, 0.3]))) for text in texts]
    if draw(st.booleans()):  # stored twice, as Claude does
        raws.append(draw(st.sampled_from(raws)))
    if draw(st.integers(0, 5)) == 0:  # a bad escape
        n = draw(st.integers(0, len(raws) - 1))
        raws[n] = raws[n][:50] + draw(st.sampled_from(["\\x", "\\u12g4", "\\ud800\\u12"])) + raws[n][50:]
    fields = [(draw(_KEYS), raw) for raw in draw(st.permutations(raws))]
    line = "{" + ",".join(f'"{key}":{draw(st.sampled_from(["", " "]))}"{raw}"' for key, raw in fields) + "}"
    data = line.encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 5)) == 0:  # bytes that are not UTF-8 (Python reads them as U+FFFD)
        at = draw(st.integers(len(data) // 4, len(data)))  # most often inside an output
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\xe2\x84", b"\xc0\xaf", b"\xed\xa0\x80"])) + data[at:]
    if draw(st.integers(0, 5)) == 0:  # cut short
        data = data[:draw(st.integers(len(data) // 2, len(data)))]
    return data


@settings(max_examples=500, deadline=None)
@given(records())
def test_a_long_record_reads_the_same_in_c_as_in_python(line):
    both_ways(line)


@pytest.mark.parametrize("text", [
    # `\\n` is a backslash and an `n`, no line break; marks next to and inside escapes
    "\\n" * 3000 + "error here\\nnot found\\\\not found",
    "a\\" * 2500 + "\nFAILED: \\n error\n" + "b\\n" * 900,
    # an escape's letters are no mark: \u00fa then `il` is `úil`, not `fail`; the `n` of \n is no `not`
    "\u00fail\nx\u00fail\n" * 800 + "\not found\n" + "ok\n" * 300,
    # the Kelvin sign is `k` in lower case, as it is and escaped
    "\u212aILLED by the OOM killer\n" * 500 + "\u212a\u212a killed\n" * 300,
    'File "a.py", line 3\n' * 300 + 'file \\"\n' * 300,
    # more lines holding one mark than MOST_LOOKS, more distinct error lines than MOST_LINES
    "\n".join(f"error {i}" for i in range(MOST_LOOKS + 50)) + "\nFAILED at the end\nsrc/x.rs:1 here",
    # lines past LINE, and the same line said again past LINE
    ("e" * (LINE + 50) + " error\n") * 30 + ("error " + "z" * 3 * LINE + "\n") * 10 + "w" * 5000,
    # surrogate pairs, lone surrogates, wide characters at the edges of the head and the tail
    "😀" * 2047 + "\ud83d" + "\n" + "日本語 error\n" * 400 + "\ude00" + "é" * 2049,
])
@pytest.mark.parametrize("often", [0.0, 0.5])
def test_tricky_outputs_read_the_same_in_c_as_in_python(text, often):
    rng = random.Random(7)
    raw = escaped(text, rng, often)
    line = f'{{"type":"user","content":"{raw}","stdout": "{raw}"}}'.encode("utf-8", "surrogatepass")
    assert both_ways(line)


def test_the_json_writers_lines_read_the_same():
    """Lines as json.dumps writes them, with and without ensure_ascii (Codex's and Claude's
    writers differ in that), an output stored twice and one held in another."""
    log = "\n".join(f"tests/test_{i}.py::test_case PASSED é {i}" for i in range(300))
    error = "E   KeyError: 'gizmo_count' 😀"
    for ascii_only in (True, False):
        for fields in ({"content": log + error, "stdout": log + error},
                       {"content": log, "toolUseResult": {"stdout": log + "\n" + error}},
                       {"output": error + log, "text": log[:100]}):
            line = json.dumps(fields, ensure_ascii=ascii_only).encode()
            assert "KeyError" in both_ways(line)


_TEXTS = st.text(st.sampled_from("ab\n\"\\/é😀\u212a\t\x01"), max_size=30)


@settings(max_examples=500, deadline=None)
@given(_TEXTS, _TEXTS, _TEXTS, st.integers(0, 2**32), st.sampled_from([0.0, 0.0, 0.1, 0.6]))
@example("a\\", "nb", "", 0, 0.0).via("an escaped backslash before it: there, not inside an escape")
@example("\\", "\\n", "", 0, 0.0).via("a backslash, then what it would escape")
@example("\n", "n", "", 0, 0.0).via("the n of a \\n is not an n")
@example("é", "00e9", "", 0, 0.6).via("an escape's digits are no text")
def test_holds_raw_tells_what_the_texts_tell(before, inner, after, seed, often):
    """holds_raw, from two strings' bytes: whether one's text is in the other's, exactly as
    `in` says of their texts, or None (then the texts are compared)."""
    from json.decoder import scanstring  # type: ignore[attr-defined]

    from sessidx import _words

    rng = random.Random(seed)
    outer_raw, inner_raw = escaped(before + inner + after, rng, often), escaped(inner, rng, often)
    line = f'{{"a":"{outer_raw}","b":"{inner_raw}"}}'.encode("utf-8", "surrogatepass")
    read = {}
    for key in ("a", "b"):
        opening = line.index(f'"{key}":"'.encode()) + 5
        after_at, chars, shape, _ = _words.read_output(line, opening, len(line), tool_output._MARKS,
                                                       len(tool_output.ERROR_MARKS), tool_output._NUMBERS)
        text = scanstring(line[opening - 1:after_at].decode(), 1, False)[0]
        assert chars == len(text)
        read[key] = (opening, after_at - 1, shape, text)
    (a_open, a_close, a_shape, a_text), (b_open, b_close, b_shape, b_text) = read["a"], read["b"]
    for outer, inner_one in (((a_open, a_close, a_shape), (b_open, b_close, b_shape)),
                             ((b_open, b_close, b_shape), (a_open, a_close, a_shape))):
        held = _words.holds_raw(line, *outer, *inner_one)
        texts = {a_open: a_text, b_open: b_text}
        assert held is None or held == (texts[inner_one[0]] in texts[outer[0]])
        if often == 0.0 and not any(c in before + inner + after for c in "\t\x01"):
            assert held is not None  # written alike, as JSON's writers do: told from the bytes


_TOKENS = ["\\n", "\\\\", '\\"', "\\t", "\\/", "\\u00e9", "\\u00E9", "\\u000a", "\\ud83d\\ude00", "\\ud800", "\\udc00",
           "\\ud800\\u0041", "é", "😀", "\t", "\x7f", "\u212a", "error", "\\u0065rror", 'file \\"']


@pytest.mark.parametrize("token", _TOKENS)
def test_every_escape_at_every_place_of_a_block_is_read_as_scanstring_reads_it(token):
    """Each way a character is written, after 0 to 40 bytes (so at every place of a block of
    sixteen and across two) and after runs of escaped backslashes: the same text, length and
    end as scanstring's, in both of read_output's loops."""
    from json.decoder import scanstring  # type: ignore[attr-defined]

    from sessidx import _words

    was = _words.read_in_blocks(True)
    try:
        for before in range(41):
            for backslashes in (0, 1, 3):
                raw = "a" * before + "\\\\" * backslashes + token * 2 + "b" * (before % 7) + token
                decoded = '{"content":"' + raw + '","x":1}'
                line = decoded.encode()
                text, end = scanstring(decoded, 12, False)
                wanted = (text, len(decoded[:end].encode()), len(text))  # the end in bytes
                for in_blocks in (True, False):
                    _words.read_in_blocks(in_blocks)
                    after, chars, _, said = _words.read_output(line, 12, len(line), tool_output._MARKS,
                                                               len(tool_output.ERROR_MARKS), tool_output._NUMBERS)
                    assert (said, after, chars) == wanted, (before, backslashes, in_blocks)
    finally:
        _words.read_in_blocks(was)
