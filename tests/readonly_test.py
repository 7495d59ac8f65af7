"""The agent homes are the user's data: proven read-only over all eight apps' real data, credentials never opened."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from sessidx.apps import APPS
from sessidx.config import current_env
from sessidx.content import reading, store
from sessidx.content.query import search
from sessidx.conversation import recent
from sessidx.index import build

CREDENTIALS = ("auth.json", ".credentials.json", ".claude.json", "oauth_creds.json", "credentials.json")
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
MUTATING_EVENTS = {"os.rename", "os.remove", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.utime",
                   "os.truncate", "os.link", "os.symlink", "shutil.rmtree", "shutil.move"}


class Recorder:
    def __init__(self, roots: list[Path]) -> None:
        self.roots = tuple(str(r) for r in roots)
        self.active = False
        self.writes: list[str] = []
        self.opened: list[str] = []

    def under(self, path: object) -> str | None:
        if isinstance(path, int) or path is None:
            return None
        text = os.fsdecode(os.fspath(path)) if isinstance(path, (str, bytes, os.PathLike)) else str(path)
        text = text.removeprefix("file:").split("?", 1)[0]
        return text if text.startswith(self.roots) else None

    def __call__(self, event: str, args: tuple[object, ...]) -> None:
        if not self.active:
            return
        if event == "open":
            path = self.under(args[0])
            if path is None:
                return
            self.opened.append(path)
            mode, flags = args[1], args[2]
            if (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                    isinstance(flags, int) and flags & WRITE_FLAGS):
                self.writes.append(f"open {path} {mode} {flags}")
        elif event in MUTATING_EVENTS and any(self.under(a) for a in args[:2]):
            self.writes.append(f"{event} {args[:2]}")
        elif event == "sqlite3.connect" and (path := self.under(args[0])):
            self.opened.append(path)


RECORDER = Recorder([])
sys.addaudithook(RECORDER)


def test_indexing_real_homes_writes_nothing_and_opens_no_credentials(realdata, tmp_path, monkeypatch):
    """The list, the content index, a search and the previews' conversations, over the real data."""
    home = tmp_path / "all"
    for name in ("claude-home", "codex-home", "gemini-home", "opencode-home", "copilot-home", "cline-home",
                 "qwen-home", "droid-home"):
        shutil.copytree(realdata(name), home, dirs_exist_ok=True)
    for folder in (home, home / ".claude", home / ".codex", home / ".gemini", home / ".copilot", home / ".cline",
                   home / ".qwen", home / ".factory", home / ".local/share/opencode"):
        for cred in CREDENTIALS:
            (folder / cred).write_text('{"secret": "do not open"}')
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    RECORDER.roots = (str(home),)
    before = sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns, p.stat().st_ctime_ns) for p in home.rglob("*"))
    RECORDER.active = True
    try:
        index = build(current_env(), APPS.values())
        build(current_env(), APPS.values())  # warm run too
        db = store.connect(current_env())
        stats = reading.refresh(db, index.sessions)  # what was said, read from every app's store
        found = search(db, "mock")
        previewed = [recent(s, APPS[s.app]) for s in index.sessions]
    finally:
        RECORDER.active = False
    assert stats["messages"] > 0 and found and any(previewed)
    assert len(index.sessions) == 17 + 7 + 4 + 3 + 3 + 3 + 3 + 3  # every app's real sessions (codex: + archived)
    assert RECORDER.writes == []
    assert not [p for p in RECORDER.opened if Path(p).name in CREDENTIALS]
    assert RECORDER.opened  # the hook saw the reads, so it would have seen a write
    after = sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns, p.stat().st_ctime_ns) for p in home.rglob("*"))
    assert before == after  # nothing created, renamed, deleted or touched


# pi's logins, Hermes' keys and logins, OpenHands' settings (they hold `api_key`), gptme's user config
NEW_APP_CREDENTIALS = (".pi/agent/auth.json", ".hermes/.env", ".hermes/auth.json", ".openhands/agent_settings.json",
                       ".openhands/settings.json", ".config/gptme/config.toml")


def test_pi_hermes_openhands_gptme_write_nothing_and_open_no_credentials(realdata, tmp_path, monkeypatch):
    home = tmp_path / "new"
    for name in ("pi-home", "hermes-home", "openhands-home", "gptme-home"):
        shutil.copytree(realdata(name), home, dirs_exist_ok=True, symlinks=True)
    for cred in NEW_APP_CREDENTIALS:
        (home / cred).write_text('{"api_key": "do not open"}\nOPENAI_API_KEY=do-not-open\n')
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    RECORDER.roots = (str(home),)
    before = sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns, p.stat().st_ctime_ns) for p in home.rglob("*"))
    RECORDER.active = True
    try:
        index = build(current_env(), APPS.values())
        db = store.connect(current_env())
        stats = reading.refresh(db, index.sessions)
        found = search(db, "mock")
        previewed = [recent(s, APPS[s.app]) for s in index.sessions]
    finally:
        RECORDER.active = False
    assert len(index.sessions) == 20 and stats["messages"] > 0 and found and all(previewed)
    assert RECORDER.writes == []
    opened = {os.path.relpath(p, home) for p in RECORDER.opened}
    assert not opened & set(NEW_APP_CREDENTIALS)
    assert {".hermes/state.db", ".pi/agent/sessions"} & {p.split("/--")[0] for p in opened}  # the hook saw the reads
    after = sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns, p.stat().st_ctime_ns) for p in home.rglob("*"))
    assert before == after


def test_synthetic_homes_are_read_only_too(tmp_path, monkeypatch):
    """Cursor, Kiro, Q, Qoder and Aider (synthetic data): the homes and the projects Aider's
    history lives in are only read."""
    from synthetic_apps import make_home

    make_home(tmp_path / "syn")
    monkeypatch.setenv("SESSIDX_HOME", str(tmp_path / "syn" / "home"))
    RECORDER.roots = (str(tmp_path / "syn"),)
    before = sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns, p.stat().st_ctime_ns) for p in (tmp_path / "syn").rglob("*"))
    RECORDER.active = True
    try:
        index = build(current_env(), APPS.values())
        db = store.connect(current_env())
        stats = reading.refresh(db, index.sessions)
        previewed = [recent(s, APPS[s.app]) for s in index.sessions]
    finally:
        RECORDER.active = False
    assert {s.app for s in index.sessions} == {"cursor", "kiro", "q", "qoder", "aider"}
    assert stats["messages"] > 0 and all(previewed)
    assert RECORDER.writes == [] and RECORDER.opened
    after = sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns, p.stat().st_ctime_ns) for p in (tmp_path / "syn").rglob("*"))
    assert before == after


def test_the_agent_tools_and_export_read_only(realdata, tmp_path, monkeypatch):
    """What `sessidx mcp` answers and `sessidx export` writes, over the real homes: every session
    listed, searched, shown, planned and exported, the homes only read and no credential opened."""
    from sessidx import agent_api
    from sessidx.export import document, markdown

    home = tmp_path / "agents"
    for name in ("claude-home", "codex-home", "gemini-home", "copilot-home", "qwen-home"):
        shutil.copytree(realdata(name), home, dirs_exist_ok=True)
    for folder in (home, home / ".claude", home / ".codex", home / ".gemini", home / ".copilot", home / ".qwen"):
        for cred in CREDENTIALS:
            (folder / cred).write_text('{"secret": "do not open"}')
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    RECORDER.roots = (str(home),)
    before = sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in home.rglob("*"))
    RECORDER.active = True
    try:
        sessions = agent_api.Sessions(current_env())
        listed = agent_api.list_sessions(sessions, limit=200, archived=True)["results"]
        found = agent_api.search(sessions, "mock")["results"]
        shown = [agent_api.show(sessions, r["id"], exchanges=20) for r in listed]
        planned = [agent_api.plan(sessions, r["id"]) for r in listed]
        pages = [markdown(document(sessions, r["id"])) for r in listed]
    finally:
        RECORDER.active = False
    assert len(listed) > 20 and found and any(s["messages"] for s in shown) and all(p["verdict"] for p in planned)
    assert all(page.startswith("# ") for page in pages)
    assert RECORDER.writes == []
    assert not [p for p in RECORDER.opened if Path(p).name in CREDENTIALS]
    assert RECORDER.opened
    after = sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in home.rglob("*"))
    assert before == after
