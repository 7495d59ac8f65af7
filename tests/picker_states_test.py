"""The picker's states tell the truth (issue 18, point 4), in real bash and fzf in tmux: a note
leaves once what it announces has happened, content mode never shows title rows under its own
header, Esc leaves from any state."""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

import pytest
from bighome import make_many_sessions
from homes import ClaudeSession

from tests.conftest import require
from tests.tmux import Tmux

NOTE = "indexing your sessions for the first time"
WORDS = ["kettle", "harbour", "lantern", "meadow", "copper", "violet", "granite", "saddle"]


def bash_in_tmux(home: Path, tmp: Path, width: int = 120, height: int = 35) -> Tmux:
    rc = tmp / "bashrc"
    rc.write_text("PS1='$ '\nPROMPT_COMMAND=\nHISTFILE=\neval \"$(sessidx init bash)\"\n")
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp), "TERM": "xterm-256color",
           "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "SESSIDX_HOME": str(home), "XDG_CACHE_HOME": str(tmp / "cache"),
           "XDG_CONFIG_HOME": str(tmp / "config")}
    tmux = Tmux(f"bash --noprofile --rcfile {rc} -i", env, cwd=tmp, width=width, height=height)
    tmux.prepare()
    return tmux


def screens_until(tmux: Tmux, check, what: str, timeout: float = 30) -> list[str]:  # noqa: ANN001
    """Every screen seen (polled as fast as tmux answers) until `check` holds for one."""
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen.append(tmux.screen())
        if check(seen[-1]):
            return seen
    raise AssertionError(f"timed out waiting for {what}\n>>>>\n{seen[-1] if seen else ''}\n<<<<")


@pytest.mark.shell
def test_the_first_press_note_leaves_once_every_row_is_in(home, tmp_path):
    """The note says the sessions are being indexed; once the last row is in (`N/N`), it goes at
    once, not on some later event: after the newest rows, which end fzf's input, and the whole
    list reloaded after them. The file that said the input ended early goes with the picker."""
    require("tmux")
    count = 600
    make_many_sessions(home, count)
    tmux = bash_in_tmux(home, tmp_path)
    try:
        tmux.send("C-o")
        tmux.until(lambda s: "session>" in s and NOTE in s, "the frame and its note")
        tmux.until(lambda s: f"{count}/{count}" in s, "every row in", timeout=60)
        tmux.until(lambda s: NOTE not in s, "the note gone once the rows are in", timeout=1.0)
        tmux.send("Escape")
        tmux.until(lambda s: "session>" not in s and "$" in s, "back at the prompt")
        assert not list((tmp_path / "cache").rglob("picker-cut-*"))
    finally:
        tmux.kill()


@pytest.mark.shell
def test_content_mode_never_shows_title_rows_while_its_first_index_is_built(home, tmp_path):
    """Ctrl-F on a home never indexed for content: from the moment the prompt says `content>`,
    no title row is on screen (an empty list while the index is built, with its progress), and
    once the index is done its notes go. Esc then leaves."""
    require("tmux")
    rng = random.Random(3)
    for i in range(160):
        said = " ".join(rng.choice(WORDS) + str(rng.randrange(1000)) for _ in range(60))
        ClaudeSession(cwd=f"/w/p{i}", prompt=f"plain words {said}", custom_title=f"TITLEROW {i}",
                      turns=30).write(home)
    tmux = bash_in_tmux(home, tmp_path)
    try:
        tmux.send("C-o")
        tmux.until(lambda s: "TITLEROW" in s and NOTE not in s, "the title rows")
        tmux.send("C-f")
        seen = screens_until(tmux, lambda s: "content>" in s and "what was said:" in s and "indexing" not in s,
                             "the content index built", timeout=120)
        in_content_mode = [s for s in seen if "content>" in s]
        assert in_content_mode, seen[-1]
        assert any("indexing" in s for s in in_content_mode), "the build's progress was never shown"
        shown_titles = [s for s in in_content_mode if "TITLEROW" in s]
        assert not shown_titles, shown_titles[0]
        time.sleep(1.5)  # nothing comes back after the notes went
        assert "indexing" not in tmux.screen() and "TITLEROW" not in tmux.screen()
        tmux.send("Escape")
        tmux.until(lambda s: "content>" not in s and "$" in s, "back at the prompt from content mode")
    finally:
        tmux.kill()


def matches(screen: str) -> int | None:
    """fzf's count at the end of the prompt line (`session> q   1/6`)."""
    for line in screen.splitlines():
        if "> " in line and "/" in line:
            last = line.split()[-1]
            done, _, total = last.partition("/")
            if done.isdigit() and total.isdigit():
                return int(done)
    return None


@pytest.fixture
def three_sessions(home: Path) -> Path:
    """A fresh and a 10-day-old Claude session, both saying `kettle`, and a 3-day-old Codex thread."""
    from homes import CodexThread, write_codex_home

    now = time.time()
    ClaudeSession(cwd="/w/fresh", prompt="Fresh claude work on the kettle").write(home)
    ClaudeSession(cwd="/w/old", prompt="Old claude work on the kettle", mtime=now - 10 * 86400).write(home)
    write_codex_home(home, [CodexThread(cwd="/w/cx", title="A codex thread", updated_ms=int((now - 3 * 86400) * 1000))])
    return home


@pytest.mark.shell
def test_app_and_since_words_filter_the_titles(three_sessions, tmp_path):
    require("tmux")
    tmux = bash_in_tmux(three_sessions, tmp_path)
    try:
        tmux.send("C-o")
        tmux.until(lambda s: "Fresh claude" in s and "Old claude" in s and "A codex thread" in s, "all three")
        tmux.type("app:codex")
        tmux.until(lambda s: "A codex thread" in s and "claude work" not in s and matches(s) == 1, "Codex only")
        tmux.send("C-u")
        tmux.until(lambda s: "Fresh claude" in s and "Old claude" in s and matches(s) == 3, "all again")
        tmux.type("since:5d")
        tmux.until(lambda s: "Fresh claude" in s and "A codex thread" in s and "Old claude" not in s
                   and matches(s) == 2, "the last five days")
        tmux.type(" work")  # the rest of the query is fzf's search, as before
        tmux.until(lambda s: "Fresh claude" in s and "A codex thread" not in s and matches(s) == 1,
                   "the last five days, matching `work`")
        tmux.send("C-u")
        tmux.type("app:cl since:2026-01-01")  # the start of a name; a date
        tmux.until(lambda s: "Fresh claude" in s and "Old claude" in s and "A codex thread" not in s
                   and matches(s) == 2, "Claude since a date")
        tmux.send("Escape")
        tmux.until(lambda s: "session>" not in s, "back at the prompt")
    finally:
        tmux.kill()


@pytest.mark.shell
def test_app_and_since_words_filter_what_was_said(three_sessions, tmp_path):
    require("tmux")
    tmux = bash_in_tmux(three_sessions, tmp_path)
    try:
        tmux.send("C-o")
        tmux.until(lambda s: "Fresh claude" in s and "A codex thread" in s, "the titles")
        tmux.send("C-f")
        tmux.until(lambda s: "content>" in s and "what was said:" in s and "indexing" not in s, "content mode")
        tmux.type("kettle")
        tmux.until(lambda s: matches(s) == 2 and "Old claude" in s, "both sessions that said it")
        tmux.type(" since:5d")
        tmux.until(lambda s: matches(s) == 1 and "Fresh claude" in s and "Old claude" not in s, "the recent one")
        tmux.send("C-u")
        tmux.type("kettle app:codex")
        tmux.until(lambda s: matches(s) == 0, "no Codex session said it")
        tmux.send("C-f")  # back to titles: the app word still filters (1 row), fzf searches the rest (`kettle`)
        tmux.until(lambda s: "session> kettle app:codex" in s and "0/1" in s, "titles, Codex, no title says kettle")
        tmux.send("C-u")  # the query emptied: every title again
        tmux.until(lambda s: "A codex thread" in s and "Old claude" in s and matches(s) == 3, "every title")
        tmux.send("Escape")
        tmux.until(lambda s: "session>" not in s, "back at the prompt")
    finally:
        tmux.kill()


@pytest.mark.shell
@pytest.mark.parametrize("when", ["while the fresh list loads", "once it is in"])
def test_a_query_and_enter_typed_at_once_resume_the_session_the_query_picks(home, tmp_path, stub_bin, when):
    """A query and Enter typed at once after Ctrl-O (issue 18, point 4): the session resumed is
    the one the query picks, once its rows are in or while they are still coming in (the first
    run's rows stream in, the wanted one last: Enter finds no row then, and is held until the
    list is in; see the test below). Never another session: what is resumed is the row fzf
    accepts, planned again by resume."""
    from tests.shell_test import Shell
    from tests.stubs import recorded, write_stub

    require("tmux")
    write_stub(stub_bin, "claude")
    wanted = ClaudeSession(cwd=str(tmp_path / "wanted"), prompt="Quokka habitat survey")
    (tmp_path / "wanted").mkdir()
    wanted.write(home)
    for i in range(300):  # a fresh list that takes a moment, the newest of them on top
        (tmp_path / f"other{i}").mkdir()
        ClaudeSession(cwd=str(tmp_path / f"other{i}"), prompt=f"Unrelated chore {i}").write(home)
    from tests.conftest import run_cli

    run_cli("build", env={"SESSIDX_HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache")})
    sh = Shell("bash", tmp_path, home, stub_bin)
    try:
        sh.tmux.prepare()
        sh.tmux.send("C-o")
        sh.tmux.until(lambda s: "session>" in s, "the picker")
        if when == "once it is in":
            sh.until_fresh_list()
        sh.tmux.type("quokka")
        sh.tmux.send("Enter")
        sh.tmux.until_file(stub_bin / "claude.argv", "the stub claude")
        argv, cwd = recorded(stub_bin, "claude")
        assert argv[0] == f"--resume={wanted.session_id}" and cwd == str(tmp_path / "wanted")
    finally:
        sh.tmux.kill()


PICKER_ON_A_PIPE = """\
import os, sys
from sessidx import picker
from sessidx.errors import Cancelled
fifo, out = sys.argv[1:]
try:
    got = picker.run_fzf(os.open(fifo, os.O_RDONLY), "", picker.fzf_binary(None), "--list-border", "bash",
                         cold=True, size=(120, 30))
    said = f"{got.key} {got.permissive}"
except Cancelled:
    said = "cancelled"
with open(out, "w") as f:
    f.write(said)
"""


def picker_rows(home: Path, tmp: Path, stub_bin: Path) -> list[str]:
    from tests.conftest import run_cli

    return run_cli("lines", env=picker_env(home, tmp, stub_bin), check=True).stdout.splitlines(keepends=True)


def picker_env(home: Path, tmp: Path, stub_bin: Path) -> dict[str, str]:
    return {"SESSIDX_HOME": str(home), "XDG_CACHE_HOME": str(tmp / "cache"), "HOME": str(tmp),
            "PATH": f"{stub_bin}:{Path(sys.executable).parent}:/usr/bin:/bin", "TERM": "xterm-256color",
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


def picker_on_a_pipe(home: Path, tmp: Path, stub_bin: Path) -> tuple[Tmux, int, Path]:
    """The first run's picker (rows streamed into fzf, a list border to show its label) in tmux,
    reading its rows from a pipe the test writes; what it picks is written to the returned path."""
    fifo, out, script = tmp / "rows", tmp / "picked", tmp / "picker.py"
    os.mkfifo(fifo)
    script.write_text(PICKER_ON_A_PIPE)
    tmux = Tmux(f"{sys.executable} {script} {fifo} {out}", picker_env(home, tmp, stub_bin), cwd=tmp,
                width=120, height=30)
    return tmux, os.open(fifo, os.O_WRONLY), out  # the open waits for fzf's end of the pipe


@pytest.mark.shell
def test_enter_after_a_move_resumes_the_row_moved_to(home, tmp_path, stub_bin):
    """Enter is checked once fzf has matched the query again (picker.hold): that search leaves the
    cursor where the user put it."""
    from tests.stubs import write_stub

    require("tmux")
    write_stub(stub_bin, "claude")
    for i in range(3):
        (tmp_path / f"f{i}").mkdir()
        ClaudeSession(cwd=str(tmp_path / f"f{i}"), prompt=f"Chore number {i}").write(home)
    rows = picker_rows(home, tmp_path, stub_bin)
    tmux, rows_in, out = picker_on_a_pipe(home, tmp_path, stub_bin)
    try:
        os.write(rows_in, "".join(rows).encode())
        os.close(rows_in)
        tmux.type("chore")
        tmux.until(lambda s: "3/3" in s, "every row, matched")
        second = next(word for word in ("Chore number 0", "Chore number 1", "Chore number 2") if word in rows[2])
        tmux.send("Down")
        tmux.until(lambda s: any("▌" in line and second in line for line in s.splitlines()), "the cursor moved down")
        tmux.send("Enter")
        tmux.until_file(out, "the picked session")
        assert out.read_text() == f"{rows[2].rstrip().rsplit(chr(9), 1)[-1]} False"
    finally:
        tmux.kill()


@pytest.mark.shell
@pytest.mark.parametrize("keys", [("Enter",), ("M-Enter",), ("Enter", "forgotten")])
def test_a_key_pressed_before_its_row_came_in_is_held_until_the_list_is_in(home, tmp_path, stub_bin, keys):
    """The first run streams its rows into fzf; a query and Enter (or Alt-Enter) typed before the
    row it picks has come in find no row. The key is held (in the list label: drawn here, with a
    list border, so the test can see it) and the row the query picks is checked once it is in. A
    keystroke after the key forgets it: then nothing runs at the end of the list, and
    Enter works as always. Driven by hand: the rows go through a pipe the test holds open."""
    from tests.stubs import write_stub

    require("tmux")
    write_stub(stub_bin, "claude")
    for i in range(3):
        (tmp_path / f"other{i}").mkdir()
        ClaudeSession(cwd=str(tmp_path / f"other{i}"), prompt=f"Unrelated chore {i}").write(home)
    wanted = ClaudeSession(cwd=str(tmp_path / "wanted"), prompt="Quokka habitat survey")
    (tmp_path / "wanted").mkdir()
    wanted.write(home)
    rows = picker_rows(home, tmp_path, stub_bin)
    held = [row for row in rows if "Quokka" in row]
    assert len(held) == 1, rows
    tmux, rows_in, out = picker_on_a_pipe(home, tmp_path, stub_bin)
    try:
        os.write(rows_in, "".join(row for row in rows if row not in held).encode())
        tmux.until(lambda s: "session>" in s and "3/3" in s, "the rows but the wanted one")
        tmux.type("quokka")
        tmux.until(lambda s: "0/3" in s, "the query, matching nothing yet")
        tmux.send(keys[0])
        label = "alt-enter" if keys[0] == "M-Enter" else "enter"
        tmux.until(lambda s: f"─{label}─" in s, "the key held in the list label")
        if "forgotten" in keys:
            tmux.send("BSpace")
            tmux.type("a")
            tmux.until(lambda s: f"─{label}─" not in s, "the held key forgotten")
        os.write(rows_in, "".join(held).encode())
        os.close(rows_in)
        rows_in = -1
        if "forgotten" in keys:
            tmux.until(lambda s: "quokka" in s and "1/4" in s, "the whole list in, the row matched")
            time.sleep(1.0)  # what a held key would have run by now
            assert not out.exists(), out.read_text()
            tmux.send("Enter")
        tmux.until_file(out, "the picked session")
        assert out.read_text() == f"claude:{wanted.session_id} {keys[0] == 'M-Enter'}"
    finally:
        if rows_in >= 0:
            os.close(rows_in)
        tmux.kill()


SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def spins(screen: str) -> bool:
    prompt = next((line for line in screen.splitlines() if "> " in line), "")
    return any(c in prompt for c in SPINNER)


@pytest.mark.shell
@pytest.mark.parametrize("query", ["", "kettle"])
def test_content_mode_stops_spinning_once_its_index_is_built(home, tmp_path, query):
    """Ctrl-F builds the content index in the background; once it is done the query is searched
    again and fzf's spinner stops (issue 29, point 4: with an empty query it spun for good, as a
    reload asked for from a bg-transform's answer is never run). An empty query says what to
    type; a query typed while the index is built finds its sessions."""
    require("tmux")
    rng = random.Random(5)
    for i in range(120):
        said = " ".join(rng.choice(WORDS) + str(rng.randrange(1000)) for _ in range(60))
        ClaudeSession(cwd=f"/w/p{i}", prompt=f"plain words {said}", turns=30).write(home)
    tmux = bash_in_tmux(home, tmp_path)
    try:
        tmux.send("C-o")
        tmux.until(lambda s: "plain words" in s and NOTE not in s, "the title rows")
        tmux.send("C-f")
        tmux.until(lambda s: "content>" in s, "content mode")
        if query:
            tmux.type(query)
        done = (lambda s: "type a word that was said" in s) if not query else (lambda s: (matches(s) or 0) > 0)
        tmux.until(lambda s: "indexing" not in s and done(s) and not spins(s), "the index built, nothing spinning",
                   timeout=120)
        tmux.send("Escape")
        tmux.until(lambda s: "content>" not in s, "back at the prompt")
    finally:
        tmux.kill()


@pytest.mark.shell
def test_question_mark_is_help_on_an_empty_query_and_a_character_in_one(three_sessions, tmp_path):
    """`?` on an empty query shows the keys and the query words, each with an example; typed
    into a query it is a `?` like any other (issue 29, point 6). An `app:` word that starts no
    app's name says so."""
    require("tmux")
    tmux = bash_in_tmux(three_sessions, tmp_path)
    try:
        tmux.send("C-o")
        tmux.until(lambda s: "Fresh claude" in s and matches(s) == 3, "all three")
        tmux.type("?")
        tmux.until(lambda s: "in the query:" in s and "app:NAME" in s and "since:1d" in s, "the help")
        assert "session> ?" not in tmux.screen()
        tmux.type("kettle?")
        tmux.until(lambda s: "session> kettle?" in s and matches(s) == 0, "a ? typed into the query")
        tmux.send("C-u")
        tmux.type("app:zzz")
        tmux.until(lambda s: "no app's name starts with zzz" in s and matches(s) == 0, "the unknown app named")
        tmux.send("Escape")
        tmux.until(lambda s: "session>" not in s, "back at the prompt")
    finally:
        tmux.kill()
