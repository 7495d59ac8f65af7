"""The index cache: only what changed is read again; a bad cache is rebuilt silently."""

from __future__ import annotations

import marshal
import os
import threading
from pathlib import Path

import pytest
from homes import ClaudeSession, CodexThread, write_codex_home

from sessidx.apps import APPS, claude, codex
from sessidx.config import current_env
from sessidx.index import CACHE_VERSION, build, cache_path, load

ALL = list(APPS.values())


@pytest.fixture
def reads(monkeypatch):
    """Counts transcript parses and database loads."""
    counts = {"claude": 0, "codex": 0}
    real_parse, real_db = claude.parse_transcript, codex.load_database

    def parse(*a):
        counts["claude"] += 1
        return real_parse(*a)

    def db(*a):
        counts["codex"] += 1
        return real_db(*a)

    monkeypatch.setattr(claude, "parse_transcript", parse)
    monkeypatch.setattr(codex, "load_database", db)
    return counts


def test_only_changed_sources_are_read_again(home, reads):
    paths = [ClaudeSession(cwd=f"/w/{i}", prompt=f"p{i}").write(home) for i in range(5)]
    write_codex_home(home, [CodexThread(cwd="/w")])
    env = current_env()
    assert len(build(env, ALL).sessions) == 6
    assert reads == {"claude": 5, "codex": 1}
    build(env, ALL)
    assert reads == {"claude": 5, "codex": 1}  # warm: nothing read
    with open(paths[2], "ab") as f:
        f.write(b'{"type":"custom-title","customTitle":"renamed"}\n')
    titles = {s.title for s in build(env, ALL).sessions}
    assert "renamed" in titles and reads == {"claude": 6, "codex": 1}
    paths[0].unlink()
    assert len(build(env, ALL).sessions) == 5 and reads["claude"] == 6


def test_wal_change_rereads_the_database(home, reads):
    write_codex_home(home, [CodexThread(cwd="/w", title="before")])
    env = current_env()
    build(env, ALL)
    wal = home / ".codex/state_5.sqlite-wal"
    st = wal.stat()
    os.utime(wal, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    build(env, ALL)
    assert reads["codex"] == 2


@pytest.mark.parametrize(
    "damage",
    [b"", b"{not json", b'{"version": 1, "sources": {}}', b"[]",
     marshal.dumps({"version": CACHE_VERSION, "sources": []}),
     marshal.dumps({"version": CACHE_VERSION, "sources": {"claude:/x": ["claude", [1], [[1, 2]]]}}),
     marshal.dumps({"version": CACHE_VERSION, "sources": {"claude:/x": ["claude", [1], [["x"] * 14]]}}),
     marshal.dumps({"version": CACHE_VERSION, "sources": {"claude:/x": ("claude", 1, None)}}),
     marshal.dumps({"version": CACHE_VERSION, "sources": {"claude:/x": ["claude", [1], [[None] * 14]]}}),
     marshal.dumps({"version": CACHE_VERSION}) + b"trailing", marshal.dumps(123)[:-1],
     b"\x00\xff" * 100],
)
def test_corrupt_or_foreign_cache_is_rebuilt_silently(home, damage, capsys):
    ClaudeSession(cwd="/w", prompt="still here").write(home)
    env = current_env()
    build(env, ALL)
    cache = Path(cache_path(env))
    cache.write_bytes(damage)
    index = build(env, ALL)
    assert [s.title for s in index.sessions] == ["still here"] and not index.problems
    assert marshal.loads(cache.read_bytes())["version"] == CACHE_VERSION
    assert capsys.readouterr() == ("", "")


def test_cache_lives_under_xdg_cache_home(home, tmp_path):
    ClaudeSession(cwd="/w").write(home)
    build(current_env(), ALL)
    assert Path(cache_path(current_env())).parent == tmp_path / "cache" / "sessidx"
    assert not list(home.rglob("*sessidx*"))


def test_parallel_runs_never_corrupt_the_cache(home):
    for i in range(30):
        ClaudeSession(cwd=f"/w/{i}").write(home)
    env = current_env()
    errors = []

    def run():
        try:
            for _ in range(5):
                assert len(build(env, ALL).sessions) == 30
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    cache = Path(cache_path(env))
    assert len(marshal.loads(cache.read_bytes())["apps"]["claude"][0]) == 30  # one stamp per transcript
    assert not [p for p in cache.parent.iterdir() if p.suffix == ".tmp"]


def test_cached_listing_needs_no_stat(home):
    path = ClaudeSession(cwd="/w", prompt="cached").write(home)
    env = current_env()
    build(env, ALL)
    path.unlink()
    assert [s.title for s in build(env, ALL, refresh=False).sessions] == ["cached"]
    assert build(env, ALL).sessions == []


def test_demo_home_when_the_machine_has_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("SESSIDX_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "empty"))
    index = load(current_env(), ALL)
    assert index.demo and index.sessions
    demo = Path(__file__).parent.parent / "fixtures" / "home"
    # Codex keeps the rollout paths its database recorded on the machine the demo came from
    assert all(Path(s.path).is_relative_to(demo) for s in index.sessions if s.path and s.app != "codex")
    assert {s.app for s in index.sessions} == {"claude", "codex"}


def test_the_real_home_guard_trips(monkeypatch):
    """Reading the real ~/.claude from a test fails loudly (conftest's audit hook)."""
    from tests.conftest import YouForgotToPointSessidxAtATestHome

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", os.path.expanduser("~/.claude"))
    with pytest.raises(YouForgotToPointSessidxAtATestHome):
        build(current_env(), [APPS["claude"]])


def good_row(**change: object) -> list[object]:
    row: dict[str, object] = dict(app="claude", id="abcd-1", cwd="/w", branch=None, title="t", mtime=1, bytes=2,
                                  model=None, effort=None, approval=None, sandbox=None, path="/w/x", archived=False,
                                  origin=None)
    row.update(change)
    return list(row.values())


@pytest.mark.parametrize("row", [
    good_row(cwd=5),  # once: 'int' object has no attribute 'startswith'
    good_row(app="cgaude"),  # once: KeyError: 'cgaude'
    good_row(app="codex"),  # a row of another app inside a claude entry
    good_row(mtime=True), good_row(mtime="1"), good_row(archived=1), good_row(id=None), good_row(title=b"x"),
    good_row(bytes=1.5), good_row()[:-1],
])
def test_a_damaged_cache_of_the_right_version_is_rebuilt(home, row, cli):

    path = ClaudeSession(cwd="/w", prompt="still here").write(home)
    env = current_env()
    build(env, ALL)
    cache = Path(cache_path(env))
    damaged = marshal.loads(cache.read_bytes())
    rows = damaged["apps"]["claude"][1]
    rows[next(iter(rows))] = [row]  # the rows only: stamps and shape stay as they were
    cache.write_bytes(marshal.dumps(damaged))
    assert [s.title for s in build(env, ALL, refresh=False).sessions] == []
    for args in (["list"], ["lines"], ["preview", path.stem], ["resume", path.stem, "--json"]):
        cache.write_bytes(marshal.dumps(damaged))
        done = cli(*args)
        assert "Traceback" not in done.stderr, (args, done.stderr)
        assert path.stem[:8] in done.stdout, args


def test_anything_but_a_regular_file_at_the_cache_path_is_no_cache(home, tmp_path, cli):
    ClaudeSession(cwd="/w", prompt="listed").write(home)
    env = current_env()
    cache = Path(cache_path(env))
    cache.parent.mkdir(parents=True)
    os.mkfifo(cache)  # once: `list` hung on it
    done = cli("list", "--json")
    assert done.returncode == 0 and "listed" in done.stdout
    cache.unlink()
    cache.symlink_to("/dev/zero")  # once: killed for memory at 23 GB
    done = cli("build", "-v")
    assert done.returncode == 0 and "not a regular file" in done.stderr
    assert cli("list").stdout.count("listed") == 1


@pytest.mark.parametrize("blocker", ["file-for-folder", "read-only"])
def test_an_unwritable_cache_costs_speed_not_the_command(home, tmp_path, path_with_claude_stub, cli, blocker):
    cache_root = tmp_path / "cache"
    if blocker == "file-for-folder":
        cache_root.mkdir()
        (cache_root / "sessidx").write_text("a file where the folder should be")
    else:
        (cache_root / "sessidx").mkdir(parents=True)
        (cache_root / "sessidx").chmod(0o500)
    folder = tmp_path / "proj"
    folder.mkdir()
    s = ClaudeSession(cwd=str(folder), prompt="unwritable")
    s.write(home)
    try:
        for args in (["list"], ["preview", s.session_id], ["resume", s.session_id, "--shell", "bash"]):
            done = cli(*args)
            assert done.returncode == 0 and "Traceback" not in done.stderr, (args, done.stderr)
        if os.geteuid() != 0 or blocker == "file-for-folder":  # root writes through mode 0500
            assert "not written" in cli("build", "-v").stderr
    finally:
        (cache_root / "sessidx").chmod(0o700)


@pytest.fixture
def path_with_claude_stub(stub_bin, monkeypatch):
    from tests.stubs import write_stub

    write_stub(stub_bin, "claude")
    monkeypatch.setenv("PATH", f"{stub_bin}{os.pathsep}{os.environ['PATH']}")
    return stub_bin


def test_a_relative_xdg_cache_home_is_ignored(home, tmp_path, monkeypatch):
    """Run from inside ~/.claude/projects, a relative cache folder once landed in the agent's home."""
    ClaudeSession(cwd="/w").write(home)
    projects = home / ".claude" / "projects"
    monkeypatch.chdir(projects)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative-cache")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert len(build(current_env(), ALL).sessions) == 1
    assert not (projects / "relative-cache").exists()
    assert (tmp_path / "user" / ".cache" / "sessidx").is_dir()


def test_temp_files_of_crashed_runs_are_removed(home):
    ClaudeSession(cwd="/w").write(home)
    env = current_env()
    build(env, ALL)
    cache = Path(cache_path(env))
    old = cache.parent / (cache.name + "xyz.tmp")  # the shape the first versions left behind
    young = cache.parent / (cache.name + ".abc.tmp")  # a run writing right now
    for leftover in (old, young):
        leftover.write_bytes(b"half")
    os.utime(old, (1, 1))
    ClaudeSession(cwd="/w/2").write(home)
    build(env, ALL)
    assert not old.exists() and young.exists()
    assert cache.parent.stat().st_mode & 0o077 == 0  # the folder is the user's alone


def test_an_app_whose_home_has_gone_leaves_the_index(home):
    """Its cached rows go, as a fresh build would give: not listed, not found by key, and not
    lent to Aider as known folders; an app not asked for but still there keeps its part."""
    import shutil

    from sessidx.index import cached_session

    ClaudeSession(cwd="/w/claude").write(home)
    thread = CodexThread(cwd="/w/codex")
    write_codex_home(home, [thread])
    assert {s.app for s in load(current_env()).sessions} == {"claude", "codex"}
    build(current_env(), [claude.APP])  # one app asked for: the other keeps its part
    assert cached_session(current_env(), f"codex:{thread.thread_id}") is not None
    shutil.rmtree(home / ".codex")
    assert {s.app for s in load(current_env()).sessions} == {"claude"}
    assert cached_session(current_env(), f"codex:{thread.thread_id}") is None
    with open(cache_path(current_env()), "rb") as f:
        assert set(marshal.load(f)["apps"]) == {"claude", "aider"}


def test_a_folder_aider_found_a_history_in_stays_known_after_the_other_session_there_is_gone(home, tmp_path):
    """Aider looks in the folders the other apps' sessions were listed in. Once it found a
    history file in one, its own cached row keeps that folder known when the session that made
    it known is deleted (the other apps' cached rows are not read for folders: their sessions
    of this run are)."""
    import shutil

    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(Path(__file__).resolve().parent.parent / "fixtures" / "realdata" / "aider-chat-history.md",
                project / ".aider.chat.history.md")
    ClaudeSession(cwd=str(project)).write(home)
    assert {s.app for s in load(current_env()).sessions} == {"claude", "aider"}
    for transcript in (home / ".claude" / "projects").rglob("*.jsonl"):
        transcript.unlink()
    assert {s.app for s in load(current_env()).sessions} == {"aider"}
