"""The warm key press in real bash, zsh and fish (tmux): no Python before fzf.

The snippet starts fzf itself with the argv the last `sessidx pick` in this shell and terminal
size wrote down (picker.keep_launch), over the kept rows with this folder's first, and runs
`sessidx resume` after Enter; whenever the kept launch does not fit, `sessidx pick` does it all.
Which one started fzf is told by fzf's parent process: a wrapper named by SESSIDX_FZF records
it, and what fzf was given to read.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from homes import ClaudeSession

from sessidx.picker import fzf_binary
from sessidx.quoting import quote
from tests.conftest import require, run_cli
from tests.shell_test import HOSTILE_DIR, SHELLS, Shell, matches, session_in
from tests.stubs import recorded, write_stub

pytestmark = pytest.mark.shell


def export(shell: str, name: str, value: str) -> str:
    return f"set -gx {name} {quote(value, shell)}" if shell == "fish" else f"export {name}={quote(value, shell)}"


class Warm(Shell):
    def __init__(self, name: str, tmp: Path, home: Path, stub_bin: Path) -> None:
        self.log = tmp / "fzf-log"
        self.log.mkdir()
        wrapper = stub_bin / "wrapped-fzf"
        # fzf's parent's name, then fzf itself over a copy of what it reads
        wrapper.write_text(f"#!/bin/sh\ncat /proc/$PPID/comm >> {self.log}/parents\n"
                           f"tee {self.log}/input-$$ | {fzf_binary(None)} \"$@\"\n")
        wrapper.chmod(0o755)
        super().__init__(name, tmp, home, stub_bin, export(name, "SESSIDX_FZF", str(wrapper)))

    def parents(self) -> list[str]:
        path = self.log / "parents"
        return path.read_text().split() if path.exists() else []

    def last_input(self) -> list[str]:
        newest = max(self.log.glob("input-*"), key=lambda p: p.stat().st_mtime_ns)
        return newest.read_text().splitlines()

    def launch_argv(self) -> list[str]:
        """The argv the kept launch for this shell names (after its format's fixed fields)."""
        (launch,) = (self.tmp / "cache" / "sessidx").glob(f"picker-launch-{self.name}-120x35")
        fields = launch.read_bytes().split(b"\0")[:-1]
        skip = 4 + int(fields[2]) + int(fields[3])
        return [f.decode("utf-8", "surrogateescape") for f in fields[skip:]]

    def press_and_leave(self) -> str:
        """One press, until the fresh list is in; then Esc. The name of fzf's parent."""
        before = len(self.parents())
        self.tmux.prepare()
        self.tmux.send("C-o")
        self.tmux.until(lambda s: len(self.parents()) > before, "fzf started (its parent recorded)")
        self.until_fresh_list()
        self.tmux.send("Escape")
        self.tmux.until(lambda s: "session>" not in s, "the picker to close")
        return self.parents()[-1]

    def until_size(self, columns: int, lines: int) -> None:
        """The shell has taken in a new terminal size (its COLUMNS and LINES name the kept launch)."""
        for attempt in range(20):
            if self.ask('echo "$COLUMNS $LINES" > {out}', f"size{attempt}").split() == [str(columns), str(lines)]:
                return
        raise AssertionError(f"the shell never saw the terminal at {columns}x{lines}")

    def until_warm(self) -> list[str]:
        """Presses until the shell itself started fzf (the first ones are Python's)."""
        seen = [self.press_and_leave()]
        while seen[-1] != self.name and len(seen) < 5:
            seen.append(self.press_and_leave())
        return seen


@pytest.fixture(params=SHELLS)
def warm(request, tmp_path, home, stub_bin) -> Iterator[Warm]:
    require("tmux")
    require(request.param)
    write_stub(stub_bin, "claude")
    sh = Warm(request.param, tmp_path, home, stub_bin)
    yield sh
    sh.tmux.kill()


def test_the_warm_press_starts_fzf_from_the_shell_and_resumes_the_row_shown(warm, home, tmp_path):
    hostile = tmp_path / "work" / HOSTILE_DIR
    picked = session_in(hostile, home, prompt="Fix the flaky payment test", mode="plan")
    here = tmp_path / "here it's $(touch pwned3)"
    session_in(here, home, prompt="Older session in this folder", mtime=time.time() - 50 * 3600)
    session_in(tmp_path / "work" / "other", home, prompt="Unrelated newer session")
    warm.run(f"cd {quote(str(here), warm.name)}")
    seen = warm.until_warm()
    assert seen[0] != warm.name and seen[-1] == warm.name, seen  # Python first, then the shell alone
    rows = warm.last_input()
    assert "title" in rows[0] and "Older session in this folder" in rows[1], rows[:3]  # this folder first
    assert "\t" in rows[1] and rows[1].rsplit("\t", 1)[1].startswith("claude:")  # no folder field left

    # Enter on the fast path: the session of the row shown, in its hostile folder
    warm.tmux.prepare()
    warm.tmux.send("C-o")
    warm.tmux.until(lambda s: "session>" in s and "Fix the flaky" in s, "the picker")
    warm.tmux.type("flaky payment")
    warm.tmux.until(lambda s: matches(s) == 1, "one match")
    warm.tmux.send("Enter")
    warm.tmux.until_file(warm.stubs / "claude.argv", "the stub claude")
    assert warm.parents()[-1] == warm.name
    argv, cwd = recorded(warm.stubs, "claude")
    assert argv[:1] == [f"--resume={picked.session_id}"] and argv[-2:] == ["--permission-mode", "plan"]
    assert cwd == str(hostile)
    assert warm.pwd() == str(hostile)
    assert not list(tmp_path.rglob("pwned*"))


def test_the_first_screen_holds_the_newest_rows_and_the_fresh_list_the_rest(warm, home, tmp_path):
    """fzf is given FIRST_SCREEN_ROWS rows to draw at once (this folder's first, when it has
    any); the fresh list that follows holds every session."""
    from bighome import make_many_sessions

    from sessidx.picker import FIRST_SCREEN_ROWS

    count = FIRST_SCREEN_ROWS + 40
    make_many_sessions(home, count - 1)
    here = tmp_path / "here"
    session_in(here, home, prompt="The oldest session, in this folder", mtime=time.time() - 900 * 86400)
    assert warm.until_warm()[-1] == warm.name
    rows = warm.last_input()
    assert len(rows) == 1 + FIRST_SCREEN_ROWS and "The oldest session" not in "\n".join(rows)
    warm.tmux.send("C-o")
    warm.tmux.until(lambda s: matches(s) == count, "every session, once the fresh list is in", timeout=60)
    warm.tmux.send("Escape")
    warm.tmux.until(lambda s: "session>" not in s, "the picker to close")

    warm.run(f"cd {quote(str(here), warm.name)}")
    warm.press_and_leave()
    rows = warm.last_input()
    assert len(rows) == 1 + FIRST_SCREEN_ROWS and "The oldest session" in rows[1], rows[:2]


def test_the_warm_press_refuses_carries_and_leaves_as_the_python_one(warm, home, tmp_path):
    loose = session_in(tmp_path / "p", home, prompt="Loose mode session", mode="bypassPermissions")
    session_in(tmp_path / "gone", home, prompt="Session whose folder was deleted")
    (tmp_path / "gone").rmdir()
    assert warm.until_warm()[-1] == warm.name
    # Enter on a refused row: the reason in the header, the picker stays; Esc: a clean prompt
    warm.pick("folder was deleted")
    warm.tmux.until(lambda s: "cannot resume: folder no longer exists" in s, "the refusal")
    warm.tmux.send("Escape")
    # fzf's screen is cleared a moment before the prompt is drawn again
    screen = warm.tmux.until(lambda s: "session>" not in s and s.rstrip().endswith("$"), "the prompt back")
    assert warm.parents()[-1] == warm.name and recorded(warm.stubs, "claude") is None
    assert "Traceback" not in screen
    # Alt-Enter carries the recorded loose mode
    warm.pick("Loose mode", key="M-Enter")
    warm.tmux.until_file(warm.stubs / "claude.argv", "the stub claude")
    argv, _ = recorded(warm.stubs, "claude")
    assert warm.parents()[-1] == warm.name
    assert argv[-2:] == ["--permission-mode", "bypassPermissions"] and f"--resume={loose.session_id}" in argv


def test_the_warm_press_resumes_nothing_when_fzf_accepted_another_row_than_the_checked_one(warm, home, tmp_path):
    """fzf's current row may change between Enter's check and its accept (a list swapped in at
    that instant): the shell passes the checked key to `resume --checked`, which refuses. Here
    fzf's answer is altered to name another checked key."""
    session_in(tmp_path / "p", home, prompt="Some session to resume")
    assert warm.until_warm()[-1] == warm.name
    wrapper = warm.stubs / "wrapped-fzf"
    wrapper.write_text(wrapper.read_text().replace('"$@"\n', '"$@" | sed \'2s/.*/6f74686572/\'\n'))
    warm.pick("Some session")
    warm.tmux.until(lambda s: "the list changed as the key was pressed, so nothing was resumed" in s, "the refusal")
    assert warm.parents()[-1] == warm.name and recorded(warm.stubs, "claude") is None, (warm.parents(), warm.tmux.screen())


def test_python_does_it_all_when_the_kept_launch_does_not_fit(warm, home, tmp_path):
    session_in(tmp_path / "p", home, prompt="Some session")
    assert warm.until_warm()[-1] == warm.name
    # another terminal size: nothing kept for it; Python starts fzf and keeps it for the next press
    warm.tmux._tmux("resize-window", "-t", "t", "-x", "120", "-y", "35")
    warm.until_size(120, 35)
    assert warm.press_and_leave() != warm.name
    assert warm.press_and_leave() == warm.name
    # a variable the launch depends on changed
    warm.run(export(warm.name, "SESSIDX_FZF_OPTS", "--no-mouse"))
    assert warm.press_and_leave() != warm.name
    assert warm.press_and_leave() == warm.name
    assert "--no-mouse" in warm.launch_argv()
    # the kept launch of another format: not read
    for launch in (tmp_path / "cache" / "sessidx").glob("picker-launch-*"):
        launch.write_bytes(launch.read_bytes().replace(b"sessidx-launch-2", b"sessidx-launch-0", 1))
    assert warm.press_and_leave() != warm.name
    # no kept rows at all: Python's full path, which works as before
    for rows in (tmp_path / "cache" / "sessidx").glob("picker-*.rows"):
        rows.unlink()
    assert warm.press_and_leave() != warm.name


def _kept_launch(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch, **env: str) -> list[str] | None:
    """What keep_launch writes for bash at 120×35 after a feed kept the rows (fields)."""
    from sessidx import picker
    from sessidx.config import current_env
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    ClaudeSession(cwd=str(tmp_path)).write(home)
    assert run_cli("lines").returncode == 0  # the feed keeps the rows
    picker.keep_launch(current_env(), "bash", (120, 35))
    launch = tmp_path / "cache" / "sessidx" / "picker-launch-bash-120x35"
    if not launch.exists():
        return None
    return [f.decode() for f in launch.read_bytes().split(b"\0")[:-1]]


def test_the_kept_launch_records_the_popup_and_what_it_depends_on(tmp_path, home, monkeypatch):
    fields = _kept_launch(tmp_path, home, monkeypatch, SESSIDX_TMUX="1", TMUX="/tmp/tmux-1/default,1,0",
                          SESSIDX_FZF_OPTS="--no-mouse --height='40%'")
    assert fields is not None and fields[0] == "sessidx-launch-2"
    stamp = fields[4:4 + int(fields[2])]
    assert "SESSIDX_TMUX=1" in stamp and "TMUX=/tmp/tmux-1/default,1,0" in stamp
    assert f"SESSIDX_HOME={home}" in stamp and "SESSIDX_FZF_OPTS=--no-mouse --height='40%'" in stamp
    argv = fields[4 + int(fields[2]) + int(fields[3]):]
    assert argv[0] == fzf_binary(None) and "--tmux=center,90%,80%" in argv
    assert argv[-2:] == ["--no-mouse", "--height=40%"]  # split as Python splits them, last


def test_no_launch_is_kept_in_a_folder_others_can_write(tmp_path, home, monkeypatch):
    (tmp_path / "cache" / "sessidx").mkdir(parents=True)
    (tmp_path / "cache" / "sessidx").chmod(0o777)
    assert _kept_launch(tmp_path, home, monkeypatch) is None


@pytest.mark.shell
@pytest.mark.parametrize("change", ["the fresh list", "Ctrl-A", "Ctrl-S", "an app: word", "content mode"])
def test_enter_resumes_the_row_shown_whatever_list_fzf_holds(home, tmp_path, stub_bin, change):
    """The key is each row's own last field (picker.KEY_AFTER_TAB), so Enter resumes the row
    fzf holds whichever list put it there: the kept rows, the fresh list that replaces them
    (reload-sync), the app filter (Ctrl-A), the scope (Ctrl-S: this folder), a query's
    `app:` word (a reload per keystroke) and content mode (a reload of content hits). Host
    rows: ssh_test's Enter on a host row, in both modes. Each time the row wanted is not the
    first of the kept list, so a key taken from the row's position in another list would
    resume another session."""
    require("tmux")
    write_stub(stub_bin, "claude")
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    wanted = ClaudeSession(cwd=str(here), prompt="Quokka habitat survey")
    wanted.write(home)
    for i in range(12):  # newer rows above it, in this folder and elsewhere
        ClaudeSession(cwd=str(here if i % 3 == 0 else elsewhere), prompt=f"Unrelated chore {i}").write(home)
    # the index of the shell's own homes (XDG_DATA_HOME is one: opencode's, Crush's, ...)
    run_cli("build", env={"SESSIDX_HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache"),
                          "XDG_DATA_HOME": str(tmp_path / "data")})
    sh = Shell("bash", tmp_path, home, stub_bin)
    try:
        sh.run(f"cd {quote(str(here), 'bash')}")
        # the first press (from the index) keeps the rows and, once it is left, the launch
        sh.tmux.prepare()
        sh.tmux.send("C-o")
        sh.tmux.until(lambda s: "session>" in s and "Unrelated chore 11" in s, "the picker")
        sh.until_fresh_list()
        sh.tmux.send("Escape")
        sh.tmux.until(lambda s: "session>" not in s, "back at the prompt")
        # the second is the warm one, from the shell, over the 13 kept rows; a session made
        # since makes the fresh list that replaces them one longer, so it shows when it is in
        ClaudeSession(cwd=str(elsewhere), prompt="Unrelated chore 12").write(home)
        sh.tmux.prepare()  # the prompt is back: the first press's sessidx has ended
        assert list(sh.cache.rglob("picker-launch-bash-*"))
        sh.tmux.send("C-o")
        sh.tmux.until(lambda s: "session>" in s and matches(s) == 14, "the fresh list in (14 rows)")
        if change == "Ctrl-A":
            sh.tmux.send("C-a")
            sh.tmux.until(lambda s: "claude@" in s or "claude>" in s, "only claude's sessions")
        elif change == "Ctrl-S":
            sh.tmux.send("C-s")
            sh.tmux.until(lambda s: "Unrelated chore 10" not in s and "Unrelated chore 9" in s, "this folder only")
        elif change == "content mode":
            sh.tmux.send("C-f")
            sh.tmux.until(lambda s: "content>" in s and "indexing" not in s, "content mode", timeout=60)
        sh.tmux.type("app:claude quokka" if change == "an app: word" else "quokka")
        sh.tmux.until(lambda s: matches(s) == 1 and "Unrelated" not in s, "the one row")
        sh.tmux.send("Enter")
        sh.tmux.until_file(stub_bin / "claude.argv", "the stub claude")
        argv, cwd = recorded(stub_bin, "claude")
        assert argv[0] == f"--resume={wanted.session_id}" and cwd == str(here)
    finally:
        sh.tmux.kill()
