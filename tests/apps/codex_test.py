"""Codex adapter: the real 0.171.0 home (WAL un-checkpointed), old schemas, and the no-database walk."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from homes import CodexThread, write_codex_home

from sessidx.apps import APPS
from sessidx.apps.codex import sandbox_name
from sessidx.config import current_env
from sessidx.index import build

CODEX = [APPS["codex"]]

# id: (cwd, branch, model, effort, approval, sandbox, archived, title, origin), from realdata/README.md.
EXPECTED = {
    "01a2294c-8f8c-7983-bfbe-ea19a5074b91": ("/home/alex/code/shop-api", "fix/checkout-retry", "gpt-5.2", "medium",
                                             "never", "workspace-write", False,
                                             "Add retry with exponential backoff to the checkout payment call", "exec"),
    "01a2294c-971f-7913-be87-3b7fabb29ba1": ("/home/alex/code/it's a test", "main", "gpt-5.2", "low", "never",
                                             "read-only", False,
                                             "Explain why the apostrophe in this folder name breaks naive shell quoting",
                                             "exec"),
    "01a2294c-9921-7c40-80d2-48b5ddcf2514": ("/home/alex/code/café-ünïcode-日本", "feature/ümlaut-support", "o4-mini",
                                             "minimal", "never", "danger-full-access", False,
                                             "Run git status and summarise the working tree", "exec"),
    "01a2294c-9de4-7961-a4b0-45b2d4d46719": ("/home/alex/code/web-dashboard", "feature/dark-mode", "gpt-5.2-codex",
                                             "high", "never", "read-only", False, "Dark mode toggle", "cli"),
    "01a2294c-b27c-7bd0-a44d-3460d2a072da": ("/home/alex/code/shop-api", "fix/checkout-retry", "gpt-5.1-codex-mini",
                                             "medium", "never", "workspace-write", False,
                                             "Spawn a helper agent to review the retry helper", "exec"),
    "01a2294c-b70a-7cb1-a4a5-da0968c390ef": ("/home/alex/code/shop-api", "fix/checkout-retry", "gpt-5.1-codex", None,
                                             "never", "workspace-write", False,
                                             "Review the current code changes (staged, unstaged, and untracked files) "
                                             "and provide prioritized findings.", "exec"),
    "01a2294c-ba38-7af2-9ee4-cc2fb61d81f3": ("/home/alex/code/release-notes", None, "gpt-5.2", None, "never",
                                             "workspace-write", True, "Draft release notes for v1.4", "exec"),
}
SUBAGENTS = {"01a2294c-b395-7761-8aa6-938b9e4d059e", "01a2294c-b76a-7083-b1b0-4d9e66b68fab"}


def index(home: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    return {s.id: s for s in build(current_env(), CODEX).sessions}


def check_real(sessions: dict[str, object], home: Path) -> None:
    assert set(sessions) == set(EXPECTED)
    assert not SUBAGENTS & set(sessions)
    for tid, expected in EXPECTED.items():
        s = sessions[tid]
        got = (s.cwd, s.branch, s.model, s.effort, s.approval, s.sandbox, s.archived, s.title, s.origin)
        assert got == expected, tid
        # rollout paths in the DB say /home/alex; they are found again under this home
        # the recorded path is kept (the only place `codex resume` looks); the rollout is found by id
        assert s.path and s.path.startswith("/home/alex/.codex/")
        assert list(home.rglob(Path(s.path).name)) and s.bytes


def test_real_home_with_its_wal(realdata, monkeypatch):
    home = realdata("codex-home")
    check_real(index(home, monkeypatch), home)


def test_the_wal_matters(realdata):
    """Without the WAL the archive is invisible: what an immutable open would have shown."""
    db = realdata("codex-home") / ".codex/state_5.sqlite"
    conn = sqlite3.connect(f"{db.as_uri()}?mode=ro&immutable=1", uri=True)
    row = conn.execute("select archived from threads where id = '01a2294c-ba38-7af2-9ee4-cc2fb61d81f3'").fetchone()
    assert row == (0,)


def test_database_is_left_untouched(realdata, monkeypatch):
    codex = realdata("codex-home") / ".codex"
    before = {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in codex.iterdir()}
    index(codex.parent, monkeypatch)
    after = {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in codex.iterdir()}
    assert before == after


def test_without_a_database_the_dated_tree_is_walked(realdata, tmp_path, monkeypatch):
    home = tmp_path / "copy"
    shutil.copytree(realdata("codex-home"), home)
    for f in (home / ".codex").glob("state_5.sqlite*"):
        f.unlink()
    sessions = index(home, monkeypatch)
    assert set(sessions) == set(EXPECTED)
    dark = sessions["01a2294c-9de4-7961-a4b0-45b2d4d46719"]
    # from the newest turn_context and session_index.jsonl
    assert (dark.model, dark.effort, dark.approval, dark.sandbox, dark.title) == (
        "gpt-5.2-codex", "high", "never", "read-only", "Dark mode toggle")
    assert sessions["01a2294c-ba38-7af2-9ee4-cc2fb61d81f3"].archived
    assert sessions["01a2294c-9921-7c40-80d2-48b5ddcf2514"].branch == "feature/ümlaut-support"


def test_highest_state_db_and_codex_sqlite_home(home, tmp_path, monkeypatch):
    write_codex_home(home, [CodexThread(cwd="/w", title="newest db")])
    old = sqlite3.connect(home / ".codex/state_2.sqlite")
    old.execute("create table threads (id text)")
    old.close()
    assert [s.title for s in build(current_env(), CODEX).sessions] == ["newest db"]
    moved = tmp_path / "sqlite-home"
    moved.mkdir()
    for f in (home / ".codex").glob("state_5.sqlite*"):
        f.rename(moved / f.name)
    monkeypatch.setenv("CODEX_SQLITE_HOME", str(moved))
    assert [s.title for s in build(current_env(), CODEX).sessions] == ["newest db"]


def test_codex_home_is_honoured(tmp_path, monkeypatch):
    write_codex_home(tmp_path / "other", [CodexThread(cwd="/w", title="via CODEX_HOME")])
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "other/.codex"))
    assert [s.title for s in build(current_env(), CODEX).sessions] == ["via CODEX_HOME"]


def test_old_schema_without_new_columns(home):
    codex = home / ".codex"
    codex.mkdir()
    conn = sqlite3.connect(codex / "state_1.sqlite")
    conn.execute("create table threads (id text, rollout_path text, cwd text, title text, updated_at integer)")
    conn.execute("insert into threads values ('01a2294c-0000-7000-8000-000000000001', '/gone.jsonl', '/w', 'old build', 1700000000)")
    conn.commit()
    conn.close()
    (s,) = build(current_env(), CODEX).sessions
    assert (s.id, s.title, s.mtime, s.model, s.sandbox) == ("01a2294c-0000-7000-8000-000000000001", "old build", 1700000000000, None, None)


@pytest.mark.parametrize(
    ("stored", "name"),
    [
        ('{"type":"disabled"}', "danger-full-access"),
        ('{"type":"managed","file_system":{"type":"restricted","entries":[{"access":"write"}]}}', "workspace-write"),
        ('{"type":"managed","file_system":{"type":"restricted","entries":[{"access":"read"}]}}', "read-only"),
        ('{"type":"workspace-write","network_access":false}', "workspace-write"),
        ("read-only", "read-only"),
        ('{"type":"external","network_access":"enabled"}', None),
        ("garbage{", None),
        (None, None),
    ],
)
def test_sandbox_names(stored, name):
    assert sandbox_name(stored) == name
