"""Gemini, opencode/Kilo, Copilot, Cline, Qwen and droid, from their real homes: the data and checks
their per-app test files share."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from sessidx.apps import APPS
from sessidx.config import current_env
from sessidx.index import build
from tests.conftest import REALDATA, run_cli

MORE = ["gemini", "opencode", "copilot", "cline", "qwen", "droid"]


FIELDS = ("app", "id", "cwd", "title", "branch", "model", "approval")


def expected(app: str) -> list[dict]:
    return json.loads((REALDATA / f"{app}-expected.json").read_text())


def listed(home: Path, monkeypatch: pytest.MonkeyPatch, app: str) -> list:
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    return [s for s in build(current_env(), [APPS[app]]).sessions if not s.archived]


ALL_WITH_EXPECTED = [*MORE, "kimi", "vibe", "cn", "auggie", "goose", "amp"]  # Crush's home is rooted at /


# The README's resume line for each app, plus the safe flags sessidx adds.
PLANS = {
    ("gemini", "e3cfe87b-50e0-4f29-9754-a82c1c5c2cf1"): ["gemini", "--resume", "e3cfe87b-50e0-4f29-9754-a82c1c5c2cf1",
                                                         "-m", "gemini-3.8-flash"],
    ("opencode", "ses_dd6965aeaffe2dtbgU4xU4zour"): ["opencode", "--session", "ses_dd6965aeaffe2dtbgU4xU4zour",
                                                     "-m", "mock/mock-large"],
    ("copilot", "9be6c79a-a387-48d7-9d12-5fa008fafe8c"): ["copilot", "--resume=9be6c79a-a387-48d7-9d12-5fa008fafe8c",
                                                          "--model", "mock-large"],
    ("copilot", "f1897a7f-cf82-46fa-8748-9672f5ab1fe9"): ["copilot", "--resume=f1897a7f-cf82-46fa-8748-9672f5ab1fe9",
                                                          "--model", "mock-model", "--mode", "plan"],
    ("copilot", "dc91ed55-7ad1-47ca-9547-07c54f7b305d"): ["copilot", "--resume=dc91ed55-7ad1-47ca-9547-07c54f7b305d",
                                                          "--model", "mock-model"],
    ("cline", "1795991183296_r7db9"): ["cline", "--id", "1795991183296_r7db9", "-m", "mock-model"],
    ("cline", "1795991189698_2e5ie"): ["cline", "--id", "1795991189698_2e5ie", "-p", "--auto-approve", "false",
                                       "-m", "mock-large"],  # `-p` records autoApproveTools: false
    ("qwen", "74ae506b-4b3c-49a5-9929-21313abcaab4"): ["qwen", "--resume", "74ae506b-4b3c-49a5-9929-21313abcaab4",
                                                       "-m", "mock-model"],
    ("droid", "f091b5e2-193d-4fd8-ab91-76549522ac38"): ["droid", "--resume", "f091b5e2-193d-4fd8-ab91-76549522ac38"],
    ("droid", "718dc012-f603-4091-8523-ceec6f521971"): ["droid", "--resume", "718dc012-f603-4091-8523-ceec6f521971"],
}


HELD = {("copilot", "dc91ed55-7ad1-47ca-9547-07c54f7b305d"): ["--allow-all"],
        ("droid", "f091b5e2-193d-4fd8-ab91-76549522ac38"): ["--auto low"],
        ("droid", "718dc012-f603-4091-8523-ceec6f521971"): ["--auto high"]}


# Not resumed without the per-launch opt-in, and why: the CLI restores a loose mode by itself
# with no override (Copilot), only looser overrides (droid), or its cleanup would delete it (Gemini).
REFUSED = {("copilot", "dc91ed55-7ad1-47ca-9547-07c54f7b305d"): "has no flag that turns it off",
           ("droid", "f091b5e2-193d-4fd8-ab91-76549522ac38"): "still looser than its default",
           ("droid", "718dc012-f603-4091-8523-ceec6f521971"): "still looser than its default",
           ("gemini", "e3cfe87b-50e0-4f29-9754-a82c1c5c2cf1"): "session cleanup"}


def copy_home(realdata, app: str, tmp_path: Path) -> Path:
    home = tmp_path / app
    shutil.copytree(realdata(f"{app}-home"), home)
    return home


def damage_db(db: Path, how: str) -> None:
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    if how == "truncated":
        db.write_bytes(db.read_bytes()[:200])
    elif how == "junk":
        db.write_bytes(b"SQLite format 3\x00" + os.urandom(2048))
    else:  # a table without the expected columns
        db.unlink()
        conn = sqlite3.connect(db)
        conn.execute("create table session (unrelated)")
        conn.execute("create table sessions (unrelated)")
        conn.commit()
        conn.close()


STORES = {"opencode": ".local/share/opencode/opencode.db", "cline": ".cline/data/db/sessions.db",
          "copilot": ".copilot/session-store.db"}


def gemini_home(home: Path, cwd: Path, sid: str = "5be0a2c1-0000-4000-8000-000000000001") -> Path:
    """A Gemini 0.61.0 home with one session in `cwd`, and the startup-only file a resume in a
    later minute leaves beside it (metadata, a `$set` of startup messages, nothing resumable)."""
    chats = home / ".gemini/tmp/proj/chats"
    chats.mkdir(parents=True)
    (home / ".gemini/tmp/proj/.project_root").write_text(str(cwd))
    meta = {"sessionId": sid, "projectHash": "h", "startTime": "2026-11-29T22:34:00Z",
            "lastUpdated": "2026-11-29T22:35:00Z", "kind": "main"}
    said = [{"id": "1", "type": "user", "content": [{"text": "<session_context>cwd</session_context>"}]},
            {"id": "2", "type": "user", "content": [{"text": "Explain the router"}]},
            {"id": "3", "type": "gemini", "content": "It routes.", "model": "gemini-3.8-flash"}]
    (chats / f"session-2026-11-29T22-34-{sid[:8]}.jsonl").write_text(
        "\n".join(json.dumps(r) for r in [meta, *said]) + "\n")
    stub = [{**meta, "startTime": "2026-11-30T09:12:00Z", "lastUpdated": "2026-11-30T09:12:00Z"},
            {"$set": {"messages": said[:1]}}, {"$set": {"sessionId": sid}}]
    (chats / f"session-2026-11-30T09-12-{sid[:8]}.jsonl").write_text("\n".join(json.dumps(r) for r in stub) + "\n")
    return home


def gemini_plan(env: dict[str, str], sid: str) -> dict:
    return json.loads(run_cli("resume", sid, "--json", env={**env, "PATH": "/nonexistent"}).stdout)


def check_real_home_is_indexed_exactly(realdata, monkeypatch, app):
    sessions = listed(realdata(f"{app}-home"), monkeypatch, app)
    want = expected(app)
    got = [{**{f: getattr(s, f) for f in FIELDS}, "updated_ms": s.mtime} for s in sessions]
    assert got == want  # same sessions, same fields, newest first


def check_resume_plans(realdata, app, sid):
    done = run_cli("resume", f"{app}:{sid}", "--json", env={"SESSIDX_HOME": str(realdata(f"{app}-home")),
                                                          "PATH": "/nonexistent"})
    plan = json.loads(done.stdout)
    assert plan["argv"] == PLANS[(app, sid)]
    assert [h["flag"] for h in plan["held_back"]] == HELD.get((app, sid), [])
    assert plan["cwd"].startswith("/home/sam/code/")
    refused = REFUSED.get((app, sid))
    assert (refused is None) == (plan["error"] is None or plan["error"].startswith("folder no longer exists"))
    if refused:
        assert refused in plan["error"] and plan["ok"] is False


def check_damaged_database(realdata, tmp_path, app, how):
    home = copy_home(realdata, app, tmp_path)
    damage_db(home / STORES[app], how)
    from homes import ClaudeSession

    other = ClaudeSession(cwd="/w", prompt="other app still listed").write(home)
    done = run_cli("list", "--json", env={"SESSIDX_HOME": str(home)})
    assert done.returncode == 0 and "Traceback" not in done.stderr
    ids = {json.loads(line)["id"] for line in done.stdout.splitlines()}
    assert other.stem in ids
    if app == "copilot":  # workspace.yaml alone still lists every session
        assert {r["id"] for r in expected("copilot")} <= ids


def check_junk_lines_in_jsonl_stores(realdata, tmp_path, app):
    home = copy_home(realdata, app, tmp_path)
    for path in home.rglob("*.jsonl"):
        data = path.read_bytes()
        path.write_bytes(b"\x00\xff junk\n[1,2]\n" + data + b'{"type": 7, "cwd": [], "message": "x"}\n{"trunc')
    done = run_cli("list", "--json", env={"SESSIDX_HOME": str(home)})
    assert done.returncode == 0 and "Traceback" not in done.stderr
    ids = {json.loads(line)["id"] for line in done.stdout.splitlines()}
    assert ids == {r["id"] for r in expected(app)}  # junk before the header or after the end is skipped
