"""The picker as a person meets it (issue 18): the rows' marks for every refusal, and the layout
at 80×24, 120×35 and 200×50 over the real homes in fixtures/realdata, in real bash and fzf."""

from __future__ import annotations

import re
import sys
import tarfile
from pathlib import Path

import pytest
from homes import ClaudeSession

from sessidx.render import WIDE
from tests.conftest import REALDATA, require, run_cli
from tests.tmux import Tmux

ANSI = re.compile(r"\x1b\[[0-9;]*m")
REAL_APPS = ["claude", "codex", "gemini", "copilot", "cline", "qwen", "droid", "kimi", "vibe", "opencode", "cn",
             "auggie", "crush", "goose", "amp"]


def rows_of(home: Path, pwd: str = "/") -> dict[str, str]:
    """`sessidx lines` (the picker's fresh list) over `home`: key -> the row, colours off."""
    out = run_cli("lines", env={"SESSIDX_HOME": str(home), "FZF_COLUMNS": "200", "PWD": pwd}).stdout
    return {line.rsplit("\t", 1)[1]: ANSI.sub("", line.rsplit("\t", 1)[0]) for line in out.splitlines()[1:]}


@pytest.mark.parametrize(("app", "mark"), [
    ("gemini", "✗ cleanup deletes"),  # session cleanup on by default would delete the resumed session
    ("codex", "✗ rollout moved"),  # the home was moved: Codex looks only at the recorded rollout path
    ("copilot", "✗ loose mode"),  # allow-all/yolo restored with no flag to turn it off
    ("droid", "✗ loose mode"),
    ("kimi", "✗ loose mode"),
    ("vibe", "✗ loose mode"),
    ("claude", "✗ folder gone"),  # recorded on another machine: its folders are not here
])
def test_every_refusal_is_marked_in_its_row(realdata, app, mark):
    rows = rows_of(realdata(f"{app}-home"))
    marked = [row for key, row in rows.items() if key.startswith(f"{app}:") and mark in row]
    assert marked, rows
    for row in marked:  # the mark stands just before the title, which still shows
        assert re.search(re.escape(mark) + r" \S", row)


def test_an_archived_session_is_marked(home):
    from sessidx.config import current_env
    from sessidx.model import Session
    from sessidx.refusals import row_marks

    archived = Session("codex", "0190c6a1-0000-7000-8000-000000000001", "/", None, "Old thread", 1, archived=True)
    assert row_marks(current_env(), [archived]) == {archived.key: "✗ archived"}


def test_a_resumable_session_carries_no_mark(home, tmp_path):
    folder = tmp_path / "here"
    folder.mkdir()
    ok = ClaudeSession(cwd=str(folder), prompt="A session that resumes")
    gone = ClaudeSession(cwd=str(tmp_path / "gone"), prompt="A session whose folder is gone")
    for s in (ok, gone):
        s.write(home)
    rows = rows_of(home)
    assert "✗" not in rows[f"claude:{ok.session_id}"] and "⎇" not in rows[f"claude:{ok.session_id}"]
    assert "✗ folder gone A session whose folder is gone" in rows[f"claude:{gone.session_id}"]


def test_refused_rows_sort_below_resumable_ones_of_the_same_age(home, tmp_path):
    (tmp_path / "here").mkdir()
    first = ClaudeSession(cwd=str(tmp_path / "gone"), prompt="Refused, written first")
    first.write(home)
    second = ClaudeSession(cwd=str(tmp_path / "here"), prompt="Resumable, written second")
    second.write(home)
    keys = list(rows_of(home))
    assert keys.index(f"claude:{second.session_id}") < keys.index(f"claude:{first.session_id}")


@pytest.fixture(scope="module")
def every_real_home(tmp_path_factory) -> Path:
    """The real homes of every app, in one home, as a new user's machine would hold them."""
    home = tmp_path_factory.mktemp("every")
    for app in REAL_APPS:
        with tarfile.open(REALDATA / f"{app}-home.tar.gz") as tar:
            tar.extractall(home, filter="data")
    return home


def picker_screen(home: Path, tmp: Path, width: int, height: int, keys: tuple[str, ...] = ()) -> str:
    rc = tmp / "bashrc"
    rc.write_text("PS1='$ '\nPROMPT_COMMAND=\nHISTFILE=\neval \"$(sessidx init bash)\"\n")
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp), "TERM": "xterm-256color",
           "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "SESSIDX_HOME": str(home), "XDG_CACHE_HOME": str(tmp / "cache")}
    run_cli("build", env={"SESSIDX_HOME": str(home), "XDG_CACHE_HOME": str(tmp / "cache")})
    tmux = Tmux(f"bash --noprofile --rcfile {rc} -i", env, cwd=tmp, width=width, height=height)
    try:
        tmux.prepare()
        tmux.send("C-o")
        # the fresh list with its marks is in once a mark shows
        preview = height >= 30 or width >= WIDE
        screen = tmux.until(lambda s: "session>" in s and "✗" in s and (not preview or "resume" in s.split("\n", 3)[-1]
                                                                          and "title     " in s),
                            "the picker with its marks")
        if keys:  # a key for the list as it stays: the fresh list in (no spinner, nothing on its way),
            # or its reload resets the preview (once in CI: `?`'s keys replaced by the session's preview)
            screen = tmux.until(lambda s: not any(ch in s.split("\n", 1)[0] for ch in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
                                and not tmux.fzf_busy(), "the fresh list in")
        for key in keys:
            tmux.send(key)
            screen = tmux.until(lambda s: "Ctrl-A / Alt-A" in s, "every key")
        tmux.send("Escape")
        return screen
    finally:
        tmux.kill()


@pytest.mark.shell
@pytest.mark.parametrize(("width", "height", "least_rows"), [(80, 24, 8), (120, 35, 12), (200, 50, 20)])
def test_the_layout_serves_the_choice(every_real_home, tmp_path, width, height, least_rows):
    require("tmux")
    from sessidx.render import list_width

    screen = picker_screen(every_real_home, tmp_path, width, height)
    lines = screen.splitlines()
    # the keys that matter, whole, and the one that shows every key
    assert "Enter resume · Ctrl-F what was said · Esc cancel · ? keys" in screen
    rows = [line for line in lines if re.match(r"^[▌ ] (" + "|".join(REAL_APPS) + r")\s", line)]
    assert len(rows) >= least_rows, screen
    header = next(line for line in lines if re.match(r"^\s+app\s+age\s+folder", line))
    folder_at, branch_at, title_at = (header.index(word) for word in ("folder", "branch", "title"))
    title_width = list_width(width) - title_at
    assert title_width > branch_at - folder_at and title_width > title_at - branch_at, screen
    if height >= 30 or width >= WIDE:  # the preview shows: its verdict line is whole, no counter over it
        verdict = next(line for line in lines if "will not resume:" in line or "Enter runs:" in line)
        assert not re.search(r"\d+/\d+\s*│*$", verdict), verdict
    else:
        assert "will not resume:" not in screen  # hidden on a short terminal, Ctrl-/ shows it


@pytest.mark.shell
def test_question_mark_shows_every_key(every_real_home, tmp_path):
    require("tmux")
    screen = picker_screen(every_real_home, tmp_path, 120, 35, keys=("?",))
    for key in ("Alt-Enter", "Ctrl-Y", "Ctrl-A / Alt-A", "Ctrl-S", "Ctrl-/"):
        assert key in screen


def test_the_kept_first_screen_is_this_folders_rows_then_the_newest(tmp_path, monkeypatch):
    from sessidx import picker
    from sessidx.config import current_env

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(picker, "FIRST_SCREEN_ROWS", 3)
    env = current_env()
    lines = ["columns", *(f"row {i}\tclaude:{i}" for i in range(6))]
    cwds = ["/a", "/b", "/a", "/b", "/here", "/here"]
    picker.save_rows(env, 80, lines, cwds, [])
    path = picker.rows_file(env, 80)
    assert path is not None
    with open(path + ".first", encoding="utf-8") as f:
        assert f.read().splitlines() == lines[:4]
    first = picker.first_rows(env, 80, "/here")
    assert first is not None and first.decode().splitlines() == ["columns", lines[5], lines[6], lines[1]]


@pytest.mark.parametrize("snippet", ["sessidx.bash", "sessidx.zsh", "sessidx.fish"])
def test_the_snippets_awk_puts_this_folder_first_within_the_first_screen(tmp_path, snippet):
    import subprocess

    from sessidx.picker import FIRST_SCREEN_ROWS

    text = (Path(__file__).parent.parent / "shell" / snippet).read_text()
    program = re.search(r"__sessidx_here_first[= ]'(BEGIN.*?)'", text, re.S)
    assert program is not None
    awk = program.group(1)
    assert f"most = {FIRST_SCREEN_ROWS} " in awk  # the same number as the Python side's
    (tmp_path / "folders").write_text("/a\n/b\n/here\n/a\n/here\n/b\n")
    (tmp_path / "rows").write_text("columns\n" + "".join(f"row {i}\n" for i in range(6)))
    done = subprocess.run(["awk", awk.replace(f"most = {FIRST_SCREEN_ROWS} ", "most = 3 "), str(tmp_path / "folders"),
                           str(tmp_path / "rows")], capture_output=True, text=True, check=True,
                          env={"__SESSIDX_HERE": "/here", "PATH": "/usr/bin:/bin"})
    assert done.stdout.splitlines() == ["columns", "row 2", "row 4", "row 0"]
    (tmp_path / "folders").write_text("/here\n/a\n/here\n/here\n/here\n/b\n")  # more of this folder's than fit
    done = subprocess.run(["awk", awk.replace(f"most = {FIRST_SCREEN_ROWS} ", "most = 3 "), str(tmp_path / "folders"),
                           str(tmp_path / "rows")], capture_output=True, text=True, check=True,
                          env={"__SESSIDX_HERE": "/here", "PATH": "/usr/bin:/bin"})
    assert done.stdout.splitlines() == ["columns", "row 0", "row 2", "row 3"]  # as first_rows cuts them
