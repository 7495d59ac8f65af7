"""`list` runs on every key press: it must not import what only planning or parsing needs.

This is the start-up budget in a form that cannot flake: which modules a warm `list` loads.
(`make bench` measures the time.)"""

from __future__ import annotations

import subprocess
import sys

from homes import ClaudeSession

HEAVY = {"json", "hashlib", "sqlite3", "_sqlite3", "subprocess", "dataclasses", "typing", "pathlib", "zlib", "tempfile",
         "shutil", "datetime", "inspect", "importlib.util", "shlex", "termios", "argparse", "re", "enum",
         "functools", "collections", "types"}

# Run the way bin/sessidx runs, so only what sessidx itself imports is counted.
PROBE = """
import io, sys
from sessidx.cli import main
sys.stdout = io.StringIO()
main(sys.argv[1:])
sys.stdout = sys.__stdout__
print(" ".join(sorted(set(sys.modules))))
"""


def loaded_by(*args: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_warm_list_imports_nothing_heavy(home, tmp_path):
    for i in range(3):
        ClaudeSession(cwd=f"/w/{i}").write(home)
    assert loaded_by("build")  # the cache is warm now
    assert loaded_by("list") & HEAVY == set()
    assert loaded_by("lines") & HEAVY == set()


def test_the_guard_can_fail(home):
    """`list --json` needs json: the probe sees it, so the assertion above is not vacuous."""
    ClaudeSession(cwd="/w").write(home)
    assert "json" in loaded_by("list", "--json")


def test_the_launcher_imports_nothing_heavy_either(home):
    """bin/sessidx, the installed command: `-X importtime` lists every module it loads."""
    ClaudeSession(cwd="/w").write(home)
    assert loaded_by("build")  # the cache is warm now
    from tests.conftest import ROOT

    done = subprocess.run([sys.executable, "-X", "importtime", str(ROOT / "bin" / "sessidx"), "list"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.count("\n") == 1
    loaded = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "sessidx.commands" in loaded  # the probe sees sessidx's own imports
    assert loaded & HEAVY == set()


def test_a_content_keystroke_loads_neither_json_nor_re(home):
    """Each keystroke in content mode starts `lines --content`: it parses its hits' records with
    `_json`'s scanner and finds secrets without a regex, and loads `_sqlite3` without the
    functools and collections it imports (sessidx/csqlite.py: 2.5 ms). (zlib comes with
    PyStemmer's C module, for near answers' word forms.)"""
    ClaudeSession(cwd="/w", prompt="Fix the flaky login test").write(home)
    assert loaded_by("search", "--refresh") is not None
    loaded = loaded_by("lines", "--content", "flaky login")
    assert "sessidx.content.query" in loaded and "sessidx.content.reading" not in loaded
    assert loaded & HEAVY - {"zlib", "_sqlite3"} == set()


def press_key(env: dict[str, str]) -> set[str]:
    """The modules `sessidx pick` loaded, on a terminal of its own, up to fzf and back from its Esc."""
    import os
    import pty

    probe = PROBE.replace("main(sys.argv[1:])", "exit_code = main(sys.argv[1:])")  # Esc: not an error
    pid, terminal = pty.fork()  # a terminal of its own: the picker draws only on one
    if pid == 0:
        os.execve(sys.executable, [sys.executable, "-c", probe, "pick"], env)
    shown = b""
    while True:
        try:
            data = os.read(terminal, 65536)
        except OSError:
            break
        if not data:
            break
        shown += data
    os.waitpid(pid, 0)
    return set(shown.decode().split())


def test_the_next_key_press_draws_the_kept_rows_loading_no_index(home, tmp_path):
    """Issue 18: the first screen is the rows the last list drew, kept for this width: no
    index, no app module, no row built before fzf starts."""
    import os

    ClaudeSession(cwd="/w").write(home)
    assert loaded_by("build")
    fzf = tmp_path / "fzf"
    fzf.write_text(f"#!/bin/sh\ncat > {tmp_path}/given\nexit 130\n")
    fzf.chmod(0o755)
    env = {**os.environ, "SESSIDX_SHELL": "bash", "SESSIDX_FZF": str(fzf)}
    first = press_key(env)
    assert "sessidx.index" in first  # no rows kept yet: the index drew them, and kept them
    again = press_key(env)
    assert "sessidx.picker" in again and again & (HEAVY | {"sessidx.index", "sessidx.apps", "sessidx.commands"}) == set()
    assert "/w" in (tmp_path / "given").read_text()


def test_the_key_press_starts_fzf_loading_nothing_heavy(home, tmp_path):
    """`sessidx pick`, as the widgets run it (on a terminal, SESSIDX_SHELL set), up to fzf
    and back from its Esc: fzf is started without `subprocess` (which loads `re` and `locale`)."""
    import os

    ClaudeSession(cwd="/w").write(home)
    assert loaded_by("build")
    fzf = tmp_path / "fzf"
    fzf.write_text("#!/bin/sh\ncat > /dev/null\nexit 130\n")  # reads the rows, then Esc
    fzf.chmod(0o755)
    env = {**os.environ, "SESSIDX_SHELL": "bash", "SESSIDX_FZF": str(fzf)}
    loaded = press_key(env)
    assert "sessidx.picker" in loaded and loaded & HEAVY == set(), sorted(loaded)


# Never on a hot path, whatever it reads: argparse and what argparse brings, and the costly
# helpers a plain module may use. (`preview` and `check` read a transcript and plan a resume:
# json, re and subprocess are theirs.)
NEVER_HOT = {"typing", "dataclasses", "argparse", "gettext", "pathlib", "sqlite3", "_sqlite3", "inspect", "tempfile",
             "hashlib", "importlib.util", "sessidx.argv"}


def test_a_move_and_enter_load_neither_argparse_nor_typing(home):
    """`preview` runs on every move in the picker, `check` on Enter and Alt-Enter: both skip
    argparse (cli._parse), and neither loads the content index or a host's code."""
    ClaudeSession(cwd="/w", session_id="0b4ad1b6-9f27-4cb1-8a6e-7d7a0f3c1e55").write(home)
    assert loaded_by("build")
    key = "claude:0b4ad1b6-9f27-4cb1-8a6e-7d7a0f3c1e55"
    for args in (["preview", "--shell", "bash", key], ["check", key], ["check", "--allow-permissive", key]):
        loaded = loaded_by(*args)
        assert "sessidx.resume" in loaded and loaded & NEVER_HOT == set(), (args, sorted(loaded & NEVER_HOT))
        assert not {m for m in loaded if m.startswith(("sessidx.content", "sessidx.remote"))}, args


def test_a_move_loads_the_one_app_it_shows_and_nothing_heavy(home, tmp_path, monkeypatch):
    """Issue 18: fzf runs `preview` on every arrow key. It loads the app module its key names
    and no other (not `commands`, which loads all of them), and neither json, re, shutil nor
    subprocess, with every check of the plan made: the CLI on PATH and its help learnt, the
    folder a repository on another branch than the recorded one."""
    import os

    from tests.stubs import write_stub

    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "feature", str(repo)], check=True)
    (tmp_path / "bin").mkdir()
    write_stub(tmp_path / "bin", "claude")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    key = "claude:0b4ad1b6-9f27-4cb1-8a6e-7d7a0f3c1e55"
    ClaudeSession(cwd=str(repo), session_id=key.split(":")[1]).write(home)
    assert loaded_by("build")
    assert loaded_by("check", key)  # Enter waits for the CLI's help: learnt from here on
    loaded = loaded_by("preview", "--shell", "bash", key)
    assert {m for m in loaded if m.startswith("sessidx.apps.")} == {"sessidx.apps.base", "sessidx.apps.claude"}
    assert "sessidx.commands" not in loaded and loaded & (HEAVY | {"shutil"}) == set(), sorted(loaded & HEAVY)
    shown = subprocess.run([sys.executable, "-m", "sessidx", "preview", "--shell", "bash", key], capture_output=True,
                           text=True, timeout=60).stdout
    assert "now feature: differs" in shown and f"claude --resume={key.split(':')[1]}" in shown, shown


def test_a_search_with_nothing_changed_loads_no_listing(home):
    """`sessidx search WORDS` when nothing changed since the last complete refresh answers from
    the content index (content/kept.py): no argparse, no `commands`, no app module but the
    hit's own (its snippet), no json or re, no functools (sessidx/csqlite.py)."""
    ClaudeSession(cwd="/w", prompt="Fix the flaky login test").write(home)
    assert loaded_by("search", "--refresh") is not None
    loaded = loaded_by("search", "--limit", "10", "flaky", "login")
    assert "sessidx.content.kept" in loaded and "sessidx.content.query" in loaded
    assert {m for m in loaded if m.startswith("sessidx.apps.")} == {"sessidx.apps.base", "sessidx.apps.claude"}
    assert {"sessidx.commands", "sessidx.content.reading", "argparse", "sessidx.argv"} & loaded == set()
    assert loaded & HEAVY - {"zlib", "_sqlite3"} == set()
    assert {"sessidx._stamps", "sessidx._words"} & loaded == set()  # it lists nothing and reads no output


def test_the_guard_on_a_search_can_fail(home):
    """A session changed since, and a `list` saw it (the listing cache rewritten): the full path
    runs, and the probe sees its listing."""
    session = ClaudeSession(cwd="/w", prompt="Fix the flaky login test")
    session.write(home)
    assert loaded_by("search", "--refresh") is not None
    ClaudeSession(cwd="/w", prompt="Fix the flaky signup test").write(home)
    assert loaded_by("list")
    loaded = loaded_by("search", "flaky")
    assert {"sessidx.commands", "sessidx.apps.aider"} <= loaded  # the listing's apps: Claude's and Aider's
    assert "sessidx._stamps" in loaded  # the listing in C (built where a compiler is: CI's machine has one)


def test_the_guard_on_a_move_can_fail(home):
    """`check` with a stray option goes through argparse: the probe sees it."""
    ClaudeSession(cwd="/w").write(home)
    assert "argparse" in loaded_by("check", "--", "claude:nothing")


def test_only_the_hot_paths_carry_the_start_up_tricks(home, tmp_path, monkeypatch):
    """The start-up boundary (sessidx/cli.py's docstring): `TYPE_CHECKING = False`, the
    stand-in for typing's, belongs to the modules a key press loads; every other module is plain
    Python and imports typing's own."""
    import os

    from tests.conftest import ROOT

    key = "claude:0b4ad1b6-9f27-4cb1-8a6e-7d7a0f3c1e55"
    ClaudeSession(cwd="/w", prompt="Fix the flaky login test", session_id=key.split(":")[1]).write(home)
    from sessidx.apps import HOMES

    for _variables, folders in HOMES.values():  # every app's home there: a key press loads each app's module
        for folder in folders:
            (home / folder).mkdir(parents=True, exist_ok=True)
    assert loaded_by("search", "--refresh") is not None
    fzf = tmp_path / "fzf"
    fzf.write_text("#!/bin/sh\ncat > /dev/null\nexit 130\n")
    fzf.chmod(0o755)
    hot = press_key({**os.environ, "SESSIDX_SHELL": "bash", "SESSIDX_FZF": str(fzf)})
    for args in (["list"], ["lines"], ["lines", "--stream"], ["lines", "--content", "flaky login"],
                 ["preview", "--shell", "bash", key], ["check", key], ["search", "flaky"]):
        hot |= loaded_by(*args)
    # the picker's background refresh of the SSH hosts (a bg-transform on every press): here a
    # host that cannot be resolved, so ssh fails at once
    monkeypatch.setenv("SESSIDX_HOSTS", "sessidx-startup-test.invalid")
    hot |= loaded_by("hosts", "--refresh")
    tricked = set()
    for path in (ROOT / "sessidx").rglob("*.py"):
        if "TYPE_CHECKING = False" in path.read_text():
            parts = path.relative_to(ROOT).with_suffix("").parts
            tricked.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    assert "sessidx.model" in tricked and tricked - hot == set()


def test_a_cold_build_loads_only_what_reading_needs(home):
    """`sessidx build` over Claude transcripts and Codex's SQLite index: SQLite's C module (the
    store is there), but not what only copies files, makes temp names or parses JSON through
    the json package: those imports were a third of a cold build; nor the `sqlite3` package
    around the C module (it loads datetime), nor the other apps' modules; nor `re` (4-8 ms),
    since the first press ever reads the newest transcripts this way before its first row: the
    transcripts' `"type"` marks are found in C (readers.type_marks), Claude's folder names and
    Codex's rollout ids worked out without it."""
    from homes import CodexThread, write_codex_home

    ClaudeSession(cwd="/w").write(home)
    write_codex_home(home, [CodexThread(cwd="/w/codex", title="A thread")])
    loaded = loaded_by("build")  # no cache yet: every source is read
    assert {"_sqlite3", "sessidx.apps.codex", "sessidx._stamps"} <= loaded
    assert loaded & {"shutil", "tempfile", "pathlib", "contextlib", "json", "random", "argparse", "zlib", "sqlite3",
                     "datetime", "re", "sessidx.apps.gemini"} == set()


def test_sqlite_loads_without_functools_and_functools_is_the_real_one_after():
    """sessidx/csqlite.py: `_sqlite3` is handed a stand-in for `functools` while it loads; its
    statement cache works, and `functools` imported afterwards is the real module."""
    probe = """
import sys
from sessidx.csqlite import sqlite3
assert "functools" not in sys.modules and "collections" not in sys.modules, sorted(sys.modules)
db = sqlite3.connect(":memory:")
print([db.execute("SELECT ? + 1", (i,)).fetchone()[0] for i in (1, 2, 1)])
import functools
print(functools.reduce(lambda a, b: a + b, [1, 2, 3]), functools.lru_cache(maxsize=2)(abs).cache_info().maxsize)
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["[2, 3, 2]", "6 2"]
