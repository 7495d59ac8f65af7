"""`sessidx search` answers from the content index (content/kept.py) and then checks, in bulk,
everything the last listing looked at (freshness.py). Every change a listing would see must be
found by that check (which then says so and brings the index up to date); each test's guard
shows a check too lax to see it (only folders, only files, no variables) would have missed it."""

from __future__ import annotations

import marshal
import os
import sqlite3
import time
from pathlib import Path

import pytest
from homes import ClaudeSession, CodexThread, jsonl, write_codex_home

from sessidx import commands, freshness, local
from sessidx.cli import main
from sessidx.config import current_env
from sessidx.content import kept, store

BACK = time.time() - 3600


def _age(home: Path) -> None:
    """Everything in the home an hour old: as a home the agents are not writing in right now."""
    for folder, dirs, files in os.walk(home):
        for name in files + dirs:
            os.utime(os.path.join(folder, name), (BACK, BACK), follow_symlinks=False)
    os.utime(home, (BACK, BACK))


def _refresh() -> None:
    assert commands.search(current_env(), lambda line: None, None, refresh_only=True) == 0


def _kept(query: str) -> str | None:
    """What the kept path answers when the check after it finds nothing changed; None when that
    check finds a change (or the full path answers). The check runs after, as the command's."""
    lines: list[str] = []
    answered = kept.search_kept(current_env(), lines.append, query, False, 10,
                               time.monotonic() + store.KEYSTROKE_WAIT)
    if answered is None:
        return None
    held = freshness.fresh(_record(), current_env())
    from sessidx.local import refresh_content

    kept.check_after(current_env(), answered[1], detach=False, refresh=refresh_content)
    return "\n".join(lines) if held else None


def _full(query: str) -> str:
    lines: list[str] = []
    commands.search(current_env(), lines.append, query, limit=10)
    return "\n".join(lines)


def _record() -> bytes:
    found = _kept_row()
    assert found is not None
    return found[2]


def _kept_row() -> tuple[str, str, bytes] | None:
    from sessidx.content.store import connect

    db = connect(current_env())
    try:
        return kept.kept_record(db)
    finally:
        db.close()


def _lax(what: str) -> bool:
    """Whether a check too lax in one way (it compares only folders, or only files) would have
    called the home unchanged: the real check's stats, half of them ignored."""

    def view(outcome: tuple[int, int, int, int] | None) -> object:
        is_dir = outcome is not None and outcome[0] & 0o170000 == 0o040000
        if what == "folders only":  # what a folder holds, not whether a file in it grew
            return outcome if is_dir or outcome is None else "a file"
        if what == "files only":  # no folder's mtime: a new entry goes unseen
            return "a folder" if is_dir else outcome
        raise AssertionError(what)

    return all(view(freshness._seen(path, follow)) == view(outcome) for (path, follow), outcome in _BEFORE.items())


_BEFORE: dict[tuple[str, bool], object] = {}  # what each path the record holds showed when it was kept


def _snapshot() -> None:
    _BEFORE.clear()
    _BEFORE.update({key: freshness._seen(*key) for key in freshness.looked_at(_record())})


@pytest.fixture
def made(home: Path) -> dict[str, Path]:
    """Two Claude projects and a Codex home (database and WAL), aged, indexed, and kept."""
    paths = {"one": ClaudeSession(cwd="/w/shop", prompt="Fix the flaky checkout test").write(home),
             "two": ClaudeSession(cwd="/w/blog", prompt="Write the release notes").write(home)}
    write_codex_home(home, [CodexThread(cwd="/w/shop", title="Add a dark mode toggle")])
    _age(home)
    _refresh()
    assert _kept("flaky") == _full("flaky") and "checkout" in (_kept("flaky") or "")
    _snapshot()
    return paths


def test_nothing_changed_is_answered_at_once_and_as_the_full_path_answers(made):
    for query in ("flaky", "release notes", "dark mode", "nothing says this"):
        assert _kept(query) == _full(query)


def test_a_new_session_in_an_existing_folder(home, made, monkeypatch):
    ClaudeSession(cwd="/w/shop", prompt="Make the checkout faster").write(home)
    assert _lax("files only")  # only the folder's mtime tells
    assert _kept("checkout") is None
    assert "faster" in _full("checkout")
    assert _kept("checkout") == _full("checkout")  # kept again after the full path ran


def test_a_new_project_folder(home, made, monkeypatch):
    ClaudeSession(cwd="/w/newshop", prompt="Set up the checkout service").write(home)
    assert _lax("files only")
    assert _kept("checkout") is None
    assert "service" in _full("checkout")


def test_a_deleted_session(made, monkeypatch):
    made["one"].unlink()
    assert _kept("flaky") is None
    assert "checkout" not in _full("flaky")
    assert _kept("flaky") == ""  # nothing says it now: the kept path answers that too


def test_an_appended_transcript(made, monkeypatch):
    with made["two"].open("ab") as f:
        f.write(jsonl([{"type": "user", "sessionId": made["two"].stem, "cwd": "/w/blog", "uuid": "u-late",
                        "message": {"role": "user", "content": "also mention the zebra migration"}}]))
    assert _lax("folders only")  # its folder's entries are as they were
    assert _kept("zebra") is None
    assert "zebra" in _full("zebra")


def test_a_changed_database(home, made, monkeypatch):
    """Codex writes its thread list into state_5.sqlite's WAL, kept open: no entry comes or goes."""
    db = sqlite3.connect(home / ".codex" / "state_5.sqlite")
    try:
        db.execute("pragma wal_autocheckpoint=0")
        db.execute("select count(*) from threads").fetchone()  # its -shm made: Codex is running
        _age(home)
        _refresh()
        assert _kept("dark")
        _snapshot()
        db.execute("update threads set title = 'Add a light mode toggle', first_user_message = 'light'")
        db.commit()
        assert _lax("folders only")
        assert _kept("dark") is None
        assert _full("dark") and _kept("dark") == _full("dark")  # the full path ran, and kept it again
    finally:
        db.close()


def test_a_changed_home_variable(home, made, monkeypatch, tmp_path):
    other = tmp_path / "other"
    write_codex_home(other, [CodexThread(cwd="/w/shop", title="Port the toggle to the settings page")])
    _age(other)
    record = _record()
    monkeypatch.setenv("CODEX_HOME", str(other / ".codex"))
    assert not freshness.fresh(record, current_env())
    assert freshness.fresh(_without_variables(record), current_env())  # the old paths are all as they were
    assert _kept("toggle") is None
    assert "settings" in _full("toggle")
    record = _record()
    monkeypatch.setenv("SESSIDX_HOME", str(other))
    assert not freshness.fresh(record, current_env())
    assert _kept("toggle") is None


def _without_variables(record: bytes) -> bytes:
    parts = list(marshal.loads(record))
    parts[2] = []  # what the apps read of the environment
    return marshal.dumps(tuple(parts))


def test_the_variables_the_apps_read_are_kept(made):
    """The cache file's name hashes the apps' home variables; the record keeps every variable
    the apps read (set or not), so one the hash leaves out is checked all the same."""
    names = dict(marshal.loads(_record())[2])
    assert "CODEX_HOME" in names and names["CODEX_HOME"] is None


def test_a_recent_folder_keeps_its_entries(home, monkeypatch):
    """A folder changed within RACY_NS of the record: an entry added in the same tick of the
    file system's clock leaves its mtime as it was, so its names are compared too."""
    ClaudeSession(cwd="/w/shop", prompt="Fix the flaky checkout test").write(home)
    _refresh()  # written just now: racy
    names = marshal.loads(_record())[5]
    assert any(path.endswith("-w-shop") for path, _ in names)
    folder = next(Path(path) for path, _ in names if path.endswith("-w-shop"))
    stamp = folder.stat()
    ClaudeSession(cwd="/w/shop", prompt="Make the checkout faster").write(home)
    os.utime(folder, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # its mtime as if in the same tick
    record = _record()
    assert _kept("checkout") is None
    # in one tick the ctime (which utime set to now) would not have moved either: no stat shows it
    monkeypatch.setattr(freshness, "_holds", lambda present: True)
    assert not freshness.fresh(record, current_env())  # the names see it
    monkeypatch.setattr(freshness, "_names", lambda item: True)
    assert freshness.fresh(record, current_env())  # without the names it would have passed


def test_a_same_size_rewrite_with_its_mtime_put_back(made):
    """`touch -r` after a rewrite in place at the same size (backup and sync tools): the ctime
    moved, and a check of mode, inode, size and mtime alone would have passed."""
    path = made["one"]
    before = path.stat()
    data = path.read_bytes()
    with path.open("r+b") as f:
        f.write(data.replace(b"flaky", b"shaky"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert _kept("flaky") is None
    assert "shaky" in _full("shaky") and _full("flaky") == ""
    looked = [key for key in _BEFORE if key[0] == str(path)]
    assert looked and all(freshness._seen(*key)[:4] == _BEFORE[key][:4] for key in looked)  # type: ignore[index]


def test_a_listing_that_writes_is_never_trusted(home, monkeypatch):
    ClaudeSession(cwd="/w/shop", prompt="Fix the flaky checkout test").write(home)
    _age(home)
    from sessidx.apps import claude

    real = claude.APP.sources

    def writing(env):  # an app whose sources() makes a temp file: not told from a stat
        (home / "scratch").write_text("x")
        return real(env)

    monkeypatch.setattr(claude.APP, "sources", writing)
    _refresh()
    assert _kept_row() is None
    assert _kept("flaky") is None


def test_the_command_line_takes_the_kept_path_and_prints_the_same(made, capsys, monkeypatch):
    """`sessidx search --limit 10 flaky` and `--json`: the same bytes by either path; `-v`
    (which the kept path does not handle) runs the full one."""
    for extra in ([], ["--json"]):
        assert main(["search", "--limit", "10", *extra, "flaky"]) == 0
        fast = capsys.readouterr().out
        calls: list[str] = []
        real_index = local.listing
        monkeypatch.setattr(local, "listing", lambda *a, **k: calls.append("listed") or real_index(*a, **k))
        assert main(["search", "--limit", "10", *extra, "-v", "flaky"]) == 0
        assert calls and capsys.readouterr().out == fast
        calls.clear()
        assert main(["search", "--limit", "10", *extra, "flaky"]) == 0
        assert not calls and capsys.readouterr().out == fast
        monkeypatch.setattr(local, "listing", real_index)


REALDATA_HOMES = sorted(p.name.removesuffix(".tar.gz") for p in Path(__file__).parent.parent.joinpath(
    "fixtures", "realdata").glob("*-home*.tar.gz"))


@pytest.mark.parametrize("name", REALDATA_HOMES)
def test_real_homes_are_kept_and_answered_byte_for_byte(realdata, name, home, monkeypatch, tmp_path):
    """Over each home written by a real CLI: the record is trusted (the kept path answers) and
    prints what the full path prints, for words the sessions hold."""
    real_home = realdata(name)
    monkeypatch.setenv("SESSIDX_HOME", str(real_home))
    _refresh()
    if not local.listing(current_env(), announce=False).sessions:  # crush's: its projects are elsewhere
        assert _kept("the") is None  # no listing cache to vouch for: the full path, as before
        return
    assert freshness.fresh(_record(), current_env()), f"{name}: the record is not trusted"
    for query in ("the", "test", "file", "hello"):
        assert _kept(query) == _full(query), query


def test_a_big_home_is_answered_byte_for_byte(home, monkeypatch):
    from bighome import make_many_sessions

    make_many_sessions(home, 300, codex=30)
    _age(home)
    _refresh()
    for query in ("fix", "session", "step", "codex thread", "nothing says this"):
        assert _kept(query) is not None and _kept(query) == _full(query), query


@pytest.mark.parametrize("argv", [
    ["fix"], ["--limit", "10", "fix"], ["--json", "fix", "login"], ["fix", "--limit", "3", "--json"],
    ["--json", "--limit", "7", "--", "-v", "--app", "x"], ["--", "fix"], ['"a phrase"', "word"]])
def test_the_plain_search_reads_its_words_as_argparse_does(argv):
    from sessidx.argv import parser
    from sessidx.cli import Args, _plain_search

    plain = _plain_search(argv)
    full = parser(["search", *argv]).parse_args(["search", *argv], namespace=Args())
    assert plain is not None
    assert (plain.query, plain.json, plain.limit, plain.app) == (full.query, full.json, full.limit, full.app)


@pytest.mark.parametrize("argv", [["--app", "codex", "fix"], ["-v", "fix"], ["--limit", "0", "fix"], ["--limit"],
                                  ["--since", "3d", "fix"], ["--host", "box", "fix"], ["--lim", "3", "fix"], []])
def test_anything_else_goes_to_argparse(argv):
    from sessidx.cli import _plain_search

    assert _plain_search(argv) is None


def test_home_is_checked_for_a_tilde_in_an_override(home, made, monkeypatch, tmp_path):
    """`CODEX_HOME=~/codex` means another folder once HOME changes (os.path.expanduser reads it)."""
    for name in ("h1", "h2"):
        write_codex_home(tmp_path / name, [CodexThread(cwd="/w/shop", title=f"Toggle of {name}")])
        (tmp_path / name / ".codex").rename(tmp_path / name / "codex")
        _age(tmp_path / name)
    monkeypatch.setenv("HOME", str(tmp_path / "h1"))
    monkeypatch.setenv("CODEX_HOME", "~/codex")
    _refresh()
    record = _record()
    assert freshness.fresh(record, current_env())
    monkeypatch.setenv("HOME", str(tmp_path / "h2"))
    assert not freshness.fresh(record, current_env())
    parts = list(marshal.loads(record))
    parts[2] = [item for item in parts[2] if item[0] != "HOME"]
    assert freshness.fresh(marshal.dumps(tuple(parts)), current_env())  # the paths alone would not tell


def _append(path: Path, words: str) -> None:
    with path.open("ab") as f:
        f.write(jsonl([{"type": "user", "sessionId": path.stem, "cwd": "/w/any", "uuid": f"u-{words}",
                        "message": {"role": "user", "content": words}}]))




def test_an_append_is_told_by_the_next_search_and_found_by_the_one_after(made, capsys, monkeypatch):
    """The promise: a search answers from the index as its last check left it; when its own
    check finds a session changed, its stderr says so, and the next search has it."""
    assert main(["search", "flaky"]) == 0
    assert "checkout" in capsys.readouterr().out
    _append(made["two"], "zebra migration")
    assert main(["search", "zebra"]) == 1  # answered before the check: the index did not have it yet
    told = capsys.readouterr().err
    assert "1 session changed since the content index was last brought up to date" in told
    assert main(["search", "zebra"]) == 0
    found = capsys.readouterr()
    assert "zebra" in found.out and found.err == ""
    assert main(["search", "zebra"]) == 0 and capsys.readouterr().err == ""  # nothing changed: no line


def test_the_guard_on_the_told_append_can_fail(made, capsys, monkeypatch):
    """With a check that sees nothing, the stale answer is silent and stays stale."""
    monkeypatch.setattr(freshness, "fresh", lambda record, env: True)
    _append(made["two"], "zebra migration")
    assert main(["search", "zebra"]) == 1 and "changed since" not in capsys.readouterr().err
    assert main(["search", "zebra"]) == 1


def test_a_check_whose_refresh_fails_sends_the_next_search_down_the_full_path(made, capsys, monkeypatch):
    real = local.refresh_content

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(local, "refresh_content", full_disk)
    _append(made["two"], "zebra migration")
    assert main(["search", "zebra"]) == 1
    assert "not brought up to date" in capsys.readouterr().err
    assert _kept_row() is None  # nothing vouches for the index now
    monkeypatch.setattr(local, "refresh_content", real)
    assert main(["search", "zebra"]) == 0 and "zebra" in capsys.readouterr().out


def test_a_search_while_a_refresh_runs_says_so_and_harms_nothing(made, capsys):

    with store.lock(current_env()):  # another sessidx indexing, alive
        assert main(["search", "flaky"]) == 0
        searched = capsys.readouterr()
    assert "checkout" in searched.out and "searching what is indexed" in searched.err
    assert main(["search", "flaky"]) == 0 and capsys.readouterr().out == searched.out


# Runs a command with this process as the subreaper of what it leaves (Linux): its detached
# check is reparented here, so it can be waited for, and anything it left is seen.
SUBREAPER = r"""
import ctypes, json, os, subprocess, sys, time
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
done = subprocess.run(sys.argv[2:], capture_output=True, text=True)
deadline, reaped = time.monotonic() + float(sys.argv[1]), 0
while True:
    try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        break  # nothing left
    reaped += bool(pid)
    if not pid and time.monotonic() > deadline:
        reaped = -1
        break
    if not pid:
        time.sleep(0.01)
print(json.dumps({"code": done.returncode, "out": done.stdout, "err": done.stderr, "reaped": reaped}))
"""
BOUND = 30.0  # seconds the check may take to end, at most; it takes milliseconds


def _command(*argv: str) -> dict[str, object]:
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", SUBREAPER, str(BOUND), *argv], capture_output=True, text=True,
                          timeout=BOUND + 30, check=True)
    result: dict[str, object] = json.loads(done.stdout)
    return result


needs_linux = pytest.mark.skipif(not os.path.exists("/proc/self"), reason="a subreaper is Linux's")


@needs_linux
def test_the_command_checks_in_a_child_that_ends_and_tells(made):
    import sys

    search = [sys.executable, "-m", "sessidx", "search"]
    nothing = _command(*search, "flaky")
    assert nothing["code"] == 0 and "checkout" in str(nothing["out"]) and nothing["err"] == ""
    assert nothing["reaped"] == 1  # the check's child, ended within the bound; nothing else left
    _append(made["two"], "zebra migration")
    told = _command(*search, "zebra")
    assert told["code"] == 1 and "1 session changed since" in str(told["err"])
    assert told["reaped"] == 1  # its refresh done and ended
    found = _command(*search, "--json", "zebra")
    assert found["code"] == 0 and "zebra" in str(found["out"]) and found["err"] == ""


# The check's refresh stuck (a disk that hangs, say): the child ends at CHECK_SECONDS all the same.
STUCK = """
import time
from sessidx import cli, local
from sessidx.content import kept
kept.CHECK_SECONDS = 1
local.refresh_content = lambda *args, **kwargs: time.sleep(3600)
cli.run()
"""


@needs_linux
def test_a_stuck_check_ends_at_its_bound_and_the_next_search_takes_the_full_path(made):
    import sys

    _append(made["two"], "zebra migration")
    stuck = _command(sys.executable, "-c", STUCK, "search", "zebra")
    assert stuck["code"] == 1 and stuck["reaped"] == 1, stuck  # ended by its alarm, not left behind
    assert _kept_row() is None
    assert "zebra" in _full("zebra")
