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
    assert len(marshal.loads(cache.read_bytes())["sources"]) == 30
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
    assert all(Path(s.path).is_relative_to(Path(__file__).parent.parent / "fixtures" / "home")
               for s in index.sessions if s.path)


def test_the_real_home_guard_trips(monkeypatch):
    """Reading the real ~/.claude from a test fails loudly (conftest's audit hook)."""
    from tests.conftest import YouForgotToPointSessidxAtATestHome

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", os.path.expanduser("~/.claude"))
    with pytest.raises(YouForgotToPointSessidxAtATestHome):
        build(current_env(), [APPS["claude"]])
