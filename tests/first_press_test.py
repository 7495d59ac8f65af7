"""The first press ever: rows streamed before the cache is written, and fzf's preview waiting
for that index instead of building a second one beside it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest
from homes import ClaudeSession

from sessidx import commands, index, local
from sessidx.apps import APPS
from sessidx.config import current_env


def streamed(home, count: int, first: int | None = None,
             writes: list[str] | None = None) -> tuple[list[tuple[int, bool, bool]], int]:
    """picker_stream over `count` sessions: each call of its rows_done (the rows out by then,
    whether more are to come, whether the cache was written), and the rows written in all
    (each write into `writes` too)."""
    for i in range(count):
        ClaudeSession(cwd=f"/w/{i}", custom_title=f"Title {i}").write(home)
    env = current_env()
    lines: list[str] = [] if writes is None else writes
    seen_at_done: list[tuple[int, bool, bool]] = []

    def rows(written: list[str]) -> int:
        return sum(line.count("\n") + 1 for line in written) - 1  # the column names' line

    def rows_done(more: bool) -> None:
        path = index.cache_path(env)
        seen_at_done.append((rows(lines), more, bool(path and os.path.exists(path))))

    assert commands.picker_stream(env, lines.append, 120, rows_done, first) == 0
    assert os.path.exists(index.cache_path(env) or "")  # written after, every session in it
    assert len(index.load(env).sessions) == count
    return seen_at_done, rows(lines)


def test_the_rows_are_all_out_before_the_cache_is_written(home):
    assert streamed(home, 30) == ([(30, False, False)], 30)  # every row out, none to come, no cache yet


def test_the_first_press_ends_its_rows_after_the_top_of_the_screen(home):
    """fzf draws the rows of an input that has ended at once; the rest come by the reload that
    its load event runs, from the index this press goes on to write."""
    first = commands.FIRST_ROWS
    assert streamed(home, 30, first) == ([(first, True, False)], first)  # once, and nothing after


def test_the_first_press_writes_its_column_names_with_its_first_rows(home):
    """One write, the rows and then the input's end: a line of its own before them kept fzf's
    loop asleep while its input lasted (10 ms a turn), when the rows came."""
    writes: list[str] = []
    streamed(home, 30, commands.FIRST_ROWS, writes)
    assert len(writes) == 1
    assert writes[0].split("\n")[0].split() == streamed_header() and writes[0].count("\n") == commands.FIRST_ROWS


def test_a_stream_of_every_row_writes_its_column_names_first(home):
    writes: list[str] = []
    streamed(home, 3, None, writes)
    assert writes[0].split() == streamed_header() and len(writes) > 1  # alone, then the rows as they are read


def streamed_header() -> list[str]:
    from sessidx import render

    return render.picker_lines([], width=120, widths=render.STREAM_WIDTHS)[0].split()


def test_a_first_press_whose_rows_fit_the_top_of_the_screen_says_none_are_to_come(home):
    """Then fzf's load event reloads nothing: the rows on its input are every row."""
    assert streamed(home, 5, commands.FIRST_ROWS) == ([(5, False, False)], 5)


def test_the_newest_row_goes_out_alone_before_the_next_sources_are_read(home):
    paths = [ClaudeSession(cwd=f"/w/{i}", custom_title=f"Title {i}").write(home) for i in range(30)]
    for i, path in enumerate(paths):  # Title 29 the newest
        os.utime(path, ns=(10**18 + i * 10**9, 10**18 + i * 10**9))
    batches: list[list[str]] = []
    index.build(current_env(), APPS.values(), on_batch=lambda batch, last: batches.append([s.title for s in batch]))
    assert batches[0] == ["Title 29"]  # one source read, and out: fzf draws it while the rest are read
    assert batches[1] == [f"Title {i}" for i in range(28, 17, -1)]  # then the top of the screen
    assert sum(map(len, batches)) == 30


@pytest.fixture
def first_press(home):
    """A first press in progress: its marker names a live process (a sleeper standing in for
    the streaming child)."""
    session = ClaudeSession(cwd=str(home), custom_title="The newest one")
    session.write(home)
    env = current_env()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    marker = index.mark_first_press(env)
    assert marker is not None
    with open(marker, "w") as f:
        f.write(str(sleeper.pid))
    yield env, session, marker, sleeper
    sleeper.kill()
    sleeper.wait()


def test_the_preview_during_a_first_press_waits_for_its_index(first_press, monkeypatch):
    env, session, marker, sleeper = first_press

    def finish_first_press() -> None:
        time.sleep(0.3)
        index.build(env, APPS.values())  # the first press's cache write
        os.unlink(marker)

    def no_second_build(*args, **kwargs):
        raise AssertionError("the preview built the index beside the first press")

    monkeypatch.setattr(local, "listing", no_second_build)
    finisher = threading.Thread(target=finish_first_press)
    finisher.start()
    out: list[str] = []
    try:
        assert commands.preview(env, out.append, f"claude:{session.session_id}", "bash") == 0
        marker_left_when_answered = os.path.exists(marker)
    finally:
        finisher.join()
    assert not marker_left_when_answered  # it answered once the first press had ended, not before
    assert "The newest one" in "\n".join(out)


def test_a_first_press_that_died_is_not_waited_for(first_press):
    env, _session, marker, sleeper = first_press
    sleeper.kill()
    sleeper.wait()
    started = time.monotonic()
    assert index.wait_for_first_press(env) is False
    assert time.monotonic() - started < 1
    os.unlink(marker)
    assert index.wait_for_first_press(env) is False  # no first press at all


def test_the_whole_list_after_the_first_rows_is_that_presss_index(first_press, monkeypatch):
    """The first press's load event reloads the list (`lines`): it lists from the index that
    press is writing, once written, as it is (no second look at every file a moment after the
    first), and builds none beside it."""
    env, session, marker, sleeper = first_press
    listed_while_marked: list[tuple[bool, bool]] = []
    real_load = commands.load

    def load(*args, **kwargs):
        listed_while_marked.append((os.path.exists(marker), kwargs.get("refresh", True)))
        return real_load(*args, **kwargs)

    def finish_first_press() -> None:
        index.build(env, APPS.values())  # the first press's cache write
        os.unlink(marker)

    monkeypatch.setattr(commands, "load", load)
    finisher = threading.Timer(0.2, finish_first_press)
    finisher.start()
    out: list[str] = []
    try:
        assert commands.picker_feed(env, out.append) == 0
    finally:
        finisher.join()
    assert listed_while_marked == [(False, False)]
    assert "The newest one" in "\n".join(out)


def test_the_first_press_ever_ends_fzfs_input_at_the_top_of_the_screen(home, tmp_path, monkeypatch):
    """Through `pick`, on a machine whose cache folder is not made yet (a first press ever's):
    fzf's input ends after the newest FIRST_ROWS rows, the cut file says more are to come while
    fzf runs, and it is gone once fzf is."""
    from sessidx import picker
    from sessidx.errors import Cancelled

    for i in range(30):
        ClaudeSession(cwd=f"/w/{i}", custom_title=f"Title {i}").write(home)
    assert not (tmp_path / "cache").exists()
    monkeypatch.setattr(picker, "has_tty", lambda: True)
    monkeypatch.setattr(picker, "terminal_size", lambda: (120, 35))
    seen = {}

    def fake_fzf(lines, query, fzf, opts, shell, note=None, tmux=None, cold=False, size=None, hosts=False,
                 state=None, cut=None):
        with os.fdopen(lines, "rb") as given:  # to its end: the child closes it at the cut
            seen.update(rows=given.read().decode().splitlines()[1:], cut=cut, cut_there=bool(cut and os.path.exists(cut)))
        raise Cancelled()

    monkeypatch.setattr(picker, "run_fzf", fake_fzf)
    with pytest.raises(Cancelled):
        commands.pick(current_env(), print, None, "bash")
    assert len(seen["rows"]) == commands.FIRST_ROWS
    assert seen["cut_there"], seen["cut"]
    assert not os.path.exists(seen["cut"])
    index.wait_for_first_press(current_env())  # the child goes on to index every session
    assert len(index.load(current_env()).sessions) == 30


def test_a_cut_file_left_by_a_killed_picker_goes_with_the_next_list(home):
    """The picker removes its cut file when fzf ends; one killed first leaves it, and the next
    list's bookkeeping (picker.note_loaded, which forgets the gone fzfs' words) removes it."""
    from sessidx import picker

    env = current_env()
    folder = picker.state_folder(env)
    assert folder is not None
    os.makedirs(folder, exist_ok=True)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    left, live = (os.path.join(folder, f"{picker.CUT_FILE}{pid}") for pid in (gone.pid, os.getpid()))
    for path in (left, live):
        open(path, "w").close()
    picker.note_loaded(env, "")
    assert not os.path.exists(left)
    assert os.path.exists(live)  # a picker still running keeps its own
