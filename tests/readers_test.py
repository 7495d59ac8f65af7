"""Properties of the bounded readers: any cut point, junk, over-long lines, never a raise."""

from __future__ import annotations

import json
import os
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sessidx.readers import Transcript, open_regular, open_transcript, parse_record

settings.register_profile("ci", max_examples=60, deadline=None,
                          suppress_health_check=[HealthCheck.function_scoped_fixture])
settings.register_profile("fuzz", max_examples=5000, deadline=None,
                          suppress_health_check=[HealthCheck.function_scoped_fixture])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

LABELS = st.text(alphabet="abcXYZ é🚀'\"$", min_size=0, max_size=12)
TYPES = ["user", "assistant", "ai-title", "custom-title"]
RECORDS = st.lists(st.fixed_dictionaries({"type": st.sampled_from(TYPES),
                                          "n": st.integers(0, 10**6), "text": LABELS}), min_size=1, max_size=40)
SEPARATORS = st.sampled_from([(",", ":"), (", ", ": ")])  # compact as the CLIs write, or spaced
JUNK = st.one_of(
    st.binary(max_size=60).filter(lambda b: b"\n" not in b),
    st.sampled_from([b"[1,2]", b"42", b"null", b'{"type":', b"\xff\xfe\x00", b"\x00" * 9, b'"str"']),
)


def write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    return path


def transcript_of(tmp: Path, records: list[dict], seps: tuple[str, str], tail: int) -> Transcript:
    """The records written one per line, opened with a 3-line head and a `tail`-byte tail."""
    data = b"".join(json.dumps(r, separators=seps).encode() + b"\n" for r in records)
    t = open_transcript(write(tmp, data), head_lines=3, tail_bytes=tail)
    assert t is not None
    return t


def read_head_tail(path: Path, **kw: int) -> Transcript | None:
    return open_transcript(path, **kw)


@given(records=RECORDS, tail=st.integers(16, 4096), seps=SEPARATORS)
@example(records=[{"type": "user", "n": 0, "text": ""}] * 2, tail=33, seps=(",", ":"))  # window starts on a newline
def test_tail_at_any_cut_is_a_suffix_of_the_full_parse(tmp_path_factory, records, tail, seps):
    t = transcript_of(tmp_path_factory.mktemp("cut"), records, seps, tail)
    with t:
        got = t.all()
        if t.whole:
            assert got == records
        else:
            n = len(list(t.head()))  # up to 3 lines
            head, tail_part = got[:n], got[n:]
            assert head == records[:3]
            assert tail_part == records[len(records) - len(tail_part):]  # the cut first piece is dropped


@given(records=RECORDS, tail=st.integers(16, 4096), seps=SEPARATORS, wanted=st.sets(st.sampled_from(TYPES)))
def test_newest_finds_every_wanted_record_newest_first(tmp_path_factory, records, tail, seps, wanted):
    """The backwards marker search yields what a full parse would: the tail reversed, then the head.
    No types at all means records of any type."""
    t = transcript_of(tmp_path_factory.mktemp("newest"), records, seps, tail)
    with t:
        everything = t.all()
        got = list(t.newest(*wanted))
        if t.whole:
            expected = [r for r in reversed(everything) if not wanted or r["type"] in wanted]
        else:
            n = len(list(t.head()))
            head, tail_part = everything[:n], everything[n:]
            expected = [r for r in reversed(tail_part) if not wanted or r["type"] in wanted]
            expected += [r for r in reversed(head) if not wanted or r["type"] in wanted]
        assert got == expected
        if wanted and t.whole:
            newest = [r for r in records if not wanted or r["type"] in wanted]
            assert (got[0] if got else None) == (newest[-1] if newest else None)  # the newest title wins


@given(records=RECORDS, junk=st.lists(JUNK, max_size=10), seed=st.randoms())
@example(records=[{"type": "user", "n": 1, "text": ""}], junk=[b"\xef\xbb\xbf{}"], seed=None)
def test_junk_lines_are_skipped_never_raised(tmp_path_factory, records, junk, seed):
    tmp = tmp_path_factory.mktemp("junk")
    lines = [json.dumps(r).encode() for r in records] + list(junk)
    if seed is not None:
        seed.shuffle(lines)
    ht = read_head_tail(write(tmp, b"\n".join(lines)), tail_bytes=1 << 20)
    assert ht is not None
    good = [r for r in ht.all() if "n" in r and r in records]
    assert sorted(r["n"] for r in good) == sorted(r["n"] for r in records)


def test_over_long_head_line_is_skipped_without_being_held(tmp_path):
    """A 20 MB line inside the head: skipped, the lines around it kept, memory stays bounded."""
    big = b'{"type":"image","data":"' + b"A" * (20 * 1024 * 1024) + b'"}\n'
    first, after = b'{"type":"user","n":1}\n', b'{"type":"user","n":2}\n'
    filler = (b'{"type":"filler","pad":"' + b"p" * 2000 + b'"}\n') * 300
    path = write(tmp_path, first + big + after + filler)
    import tracemalloc

    tracemalloc.start()
    ht = read_head_tail(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert ht is not None and [r.get("n") for r in list(ht.head())[:2]] == [1, 2]
    assert peak < 4 * 1024 * 1024


def test_tail_inside_one_huge_line_yields_nothing(tmp_path):
    path = write(tmp_path, b'{"type":"user","n":1}\n{"x":"' + b"B" * (3 * 1024 * 1024) + b'"}')
    ht = read_head_tail(path)
    assert ht is not None and ht.all() == [{"type": "user", "n": 1}]


def test_crlf_bom_and_no_final_newline(tmp_path):
    path = write(tmp_path, b'\xef\xbb\xbf{"n":1}\r\n{"n":2}\r\n{"n":3}')
    ht = read_head_tail(path)
    assert ht is not None and [r["n"] for r in ht.all()] == [1, 2, 3]


def test_non_regular_files_are_not_opened(tmp_path):
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    assert open_regular(fifo) is None  # no hang: O_NONBLOCK, then fstat says FIFO
    assert open_regular(tmp_path) is None
    assert open_regular("/dev/zero") is None
    link = tmp_path / "zero.jsonl"
    link.symlink_to("/dev/zero")
    assert read_head_tail(link) is None


@given(st.binary(max_size=200))
def test_parse_record_never_raises(data):
    result = parse_record(data)
    assert result is None or isinstance(result, dict)


def test_deeply_nested_line_is_skipped():
    assert parse_record(b"[" * 100000 + b"]" * 100000) is None


@given(lengths=st.lists(st.sampled_from([0, 1, 80, 5_000, 40_000, 70_000, 200_000, 262_143, 262_144, 300_000]),
                        min_size=1, max_size=30), last_newline=st.booleans(), cap=st.sampled_from([70_000, 262_144]))
@example(lengths=[70_000, 1, 70_000], last_newline=False, cap=262_144)  # the switch to long reads inside a line
def test_the_heads_lines_are_the_files_lines_within_the_cap(tmp_path_factory, lengths, last_newline, cap):
    """Read 8 KiB at a time, then LONG_HEAD_READ at a time once the head passed LONG_HEAD: every
    line within the cap in order, each once, the ones over it left out, whatever the lengths."""
    from sessidx.readers import _head_lines

    lines = [str(i % 10).encode() * n for i, n in enumerate(lengths)]
    data = b"\n".join(lines) + (b"\n" if last_newline else b"")
    path = write(tmp_path_factory.mktemp("head"), data)
    ends = [b"\n"] * (len(lines) - 1) + [b"\n" if last_newline else b""]
    if not lines[-1] and not last_newline:  # the file ends with its last newline: no line after it
        lines, ends = lines[:-1], ends[:-1]
    fd = os.open(path, os.O_RDONLY)
    try:
        got = list(_head_lines(fd, 25, cap))
    finally:
        os.close(fd)
    assert got == [line + end for line, end in zip(lines[:25], ends[:25], strict=True) if len(line) <= cap]


def test_head_and_tail_reads_interleave(tmp_path):
    """Reading more head after the tail grew must continue where the head stood."""
    records = [{"type": "user" if i % 7 else "assistant", "i": i, "pad": "x" * 3000} for i in range(400)]
    path = write(tmp_path, b"".join(json.dumps(r).encode() + b"\n" for r in records))
    t = open_transcript(path)
    assert t is not None and not t.whole
    with t:
        head = t.head()
        assert next(head)["i"] == 0
        assert [r["i"] for r in t.newest("assistant")][:2] == [399 - 399 % 7, 399 - 399 % 7 - 7]
        assert next(head)["i"] == 1  # the head goes on from its own place
        assert [r["i"] for r in t.head()] == list(range(80))


FLAGGED = st.lists(st.fixed_dictionaries({"type": st.sampled_from(TYPES), "n": st.integers(0, 99)},
                                         optional={"permissionMode": st.sampled_from(["plan", "auto"])}),
                   min_size=1, max_size=30)


@given(records=FLAGGED, tail=st.integers(16, 2048), seps=SEPARATORS, wanted=st.sets(st.sampled_from(TYPES)))
def test_newest_having_a_key_is_the_filtered_newest(tmp_path_factory, records, tail, seps, wanted):
    t = transcript_of(tmp_path_factory.mktemp("having"), records, seps, tail)
    with t:
        everything = list(t.newest(*wanted))
        having = list(t.newest(*wanted, having="permissionMode"))
    assert having == [r for r in everything if "permissionMode" in r]


def bytes_read() -> int:
    with open("/proc/self/io") as f:
        return int(next(line for line in f if line.startswith("rchar:")).split()[1])


def test_a_2gb_line_without_a_newline_is_not_read_to_its_end(tmp_path):
    """Once read end to end by the head (2,149 MB in 524,337 reads)."""
    from sessidx.apps.claude import parse_transcript
    from sessidx.readers import HEAD_BUDGET

    folder = tmp_path / "-w"
    folder.mkdir()
    path = folder / "huge.jsonl"
    with open(path, "wb") as f:
        f.write(b'{"type":"user","cwd":"/w","message":{"content":"first prompt"}}\n{"type":"image","data":"')
        f.truncate(2 * 1024**3)  # sparse: costs no disk, reads as zeros
    before = bytes_read()
    session = parse_transcript(str(path), "-w", "")
    spent = bytes_read() - before
    assert session is not None and session.title == "first prompt" and session.cwd == "/w"
    assert spent < HEAD_BUDGET + 2 * 1024 * 1024, f"{spent >> 20} MiB read"


def test_a_path_holding_a_nul_opens_as_no_file(tmp_path):
    """A damaged record can name a path with a NUL in it: no such file, not a ValueError (found
    by refusals_test's generated sessions, through an app's plan)."""
    assert open_regular("\x00") is None and open_regular(str(tmp_path / "a\x00b")) is None
