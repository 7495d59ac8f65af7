"""readers.stamped_files: the C listing (sessidx/_stamps.c) and the Python loop give the same
answer on every kind of entry a transcript folder can hold, and the C one is what runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessidx import freshness, readers
from sessidx.config import Env


def built() -> object:
    from sessidx import _stamps  # built by `pip install` wherever a C compiler is (CI's machine has one)

    return _stamps.stamped_files


def both(folder: str | Path, suffix: str = ".jsonl", skip: str = "agent-") -> tuple[object, object]:
    found, folders = built()(str(folder), suffix, skip)  # type: ignore[operator]
    py_found, py_folders = readers.python_stamped_files(str(folder), suffix, skip)
    return (sorted(found), folders), (sorted(py_found), py_folders)


def test_every_kind_of_entry_the_same_both_ways(tmp_path):
    tmp_path = tmp_path / "folder"
    tmp_path.mkdir()
    (tmp_path / "a.jsonl").write_text("{}\n")
    (tmp_path / "agent-1.jsonl").write_text("{}\n")  # a sub-agent's: skipped
    (tmp_path / "notes.txt").write_text("")
    (tmp_path / "x.jsonl").mkdir()  # a folder with the suffix: neither a file nor a folder listed
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "a.jsonl")  # links to files are followed
    (tmp_path / "dangling.jsonl").symlink_to(tmp_path / "gone")
    (tmp_path / "linked-dir").symlink_to(tmp_path / "sub")  # not a real folder
    os.mkfifo(tmp_path / "fifo.jsonl")
    latin = os.fsencode(tmp_path) + b"/caf\xe9.jsonl"  # not UTF-8: a surrogate-escaped name
    with open(latin, "wb") as f:
        f.write(b"{}\n")
    (tmp_path / "it's $(rm -rf ~).jsonl").write_text("{}\n")
    native_answer, python_answer = both(tmp_path)
    assert native_answer == python_answer
    names = [name for name, _ in native_answer[0]]
    assert sorted(names) == sorted(["a.jsonl", "link.jsonl", "caf\udce9.jsonl", "it's $(rm -rf ~).jsonl"])
    assert native_answer[1] == {"sub"}
    st_a = os.stat(tmp_path / "a.jsonl")
    assert dict(native_answer[0])["a.jsonl"] == (st_a.st_size, st_a.st_mtime_ns, st_a.st_ctime_ns, st_a.st_ino)


def test_no_skip_prefix_skips_nothing(tmp_path):
    (tmp_path / "agent-1.jsonl").write_text("")
    native_answer, python_answer = both(tmp_path, skip="")
    assert native_answer == python_answer and [n for n, _ in native_answer[0]] == ["agent-1.jsonl"]
    assert readers.stamped_files(str(tmp_path), ".jsonl")[0][0][0] == "agent-1.jsonl"


@pytest.mark.parametrize("folder", ["/no/such/folder", "/etc/hostname", "bad\0path", ""])
def test_what_is_no_folder_gives_nothing_both_ways(folder):
    assert readers.stamped_files(folder, ".jsonl", "agent-") == ([], set())
    assert readers.python_stamped_files(folder, ".jsonl", "agent-") == ([], set())


NAMES = st.text(alphabet="ab.-_jsonlé'$ ", min_size=1, max_size=12).filter(lambda n: n not in (".", "..") and "/" not in n)


@settings(max_examples=40, deadline=None)
@given(files=st.lists(NAMES, max_size=12, unique=True), folders=st.lists(NAMES, max_size=4, unique=True),
       suffix=st.sampled_from([".jsonl", ".json", "l", "x"]), skip=st.sampled_from(["", "a", "agent-"]))
def test_generated_folders_the_same_both_ways(tmp_path_factory, files, folders, suffix, skip):
    root = tmp_path_factory.mktemp("gen")
    for name in folders:
        (root / name).mkdir()
    for name in files:
        if name not in folders:
            (root / name).write_text(name)
    native_answer, python_answer = both(root, suffix, skip)
    assert native_answer == python_answer


def test_a_key_press_lists_with_the_c_loop_and_a_watch_with_os_calls(tmp_path, monkeypatch):
    (tmp_path / "a.jsonl").write_text("")
    calls: list[str] = []
    real_scandir = os.scandir
    monkeypatch.setattr(os, "scandir", lambda path: calls.append("os.scandir") or real_scandir(path))
    readers.stamped_files(str(tmp_path), ".jsonl")
    assert calls == []  # the C loop: no os call
    with freshness.Watch(Env(str(tmp_path), {})):
        readers.stamped_files(str(tmp_path), ".jsonl")
    assert calls == ["os.scandir"]  # what a Watch records goes through os


def test_the_python_loop_is_what_runs_without_the_build(tmp_path, monkeypatch):
    (tmp_path / "a.jsonl").write_text("")
    monkeypatch.setattr(readers, "_native_listing", lambda: None)
    calls: list[str] = []
    real_scandir = os.scandir
    monkeypatch.setattr(os, "scandir", lambda path: calls.append("os.scandir") or real_scandir(path))
    found, _ = readers.stamped_files(str(tmp_path), ".jsonl")
    assert [name for name, _ in found] == ["a.jsonl"] and calls == ["os.scandir"]


# --- readers.type_marks: the `"type":"..."` marks of a transcript's tail -----------------------

MARK_PIECES = [b'"type":"user"', b'"type": "assistant"', b'"type":', b'"type": ', b'"type":"', b'"', b'x', b"\\",
               b" ", b'"type":"a"b"', b'"type":"user', b"_.-", b"\n", b'{"a":1}', b'"typ', b'e":"q"', "é".encode(),
               b'"type":""', b'"type":  "two"', b'"type":"x y"']


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(MARK_PIECES), max_size=30), st.integers(-3, 300), st.integers(-3, 300))
def test_type_marks_in_c_are_the_regexs(pieces, start, end):
    import re

    from sessidx import _stamps

    data = bytearray(b"".join(pieces))
    pattern = re.compile(readers._TYPE_MARK)
    want = [(m.start(), m.group(1)) for m in pattern.finditer(data, start, end)]
    assert _stamps.type_marks(data, start, end) == want


def test_type_marks_without_the_c_part_use_the_regex(monkeypatch):
    from sessidx import compiled

    data = b'{"type":"user","x":{"type": "tool_use"}}\n{"type":"a b"}\n{"type":"summary"}'
    with_c = readers.type_marks(data, 0, len(data))
    monkeypatch.setitem(compiled._loaded, ("_stamps", "type_marks"), None)
    assert readers.type_marks(data, 0, len(data)) == with_c == [(1, b"user"), (20, b"tool_use"), (57, b"summary")]
