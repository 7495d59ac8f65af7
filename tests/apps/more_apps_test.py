"""Gemini, opencode/Kilo, Copilot, Cline, Qwen and droid: each real home indexed exactly as its
expected.json says, each plan the README's resume line plus the safe flags, and damaged copies
of each store never breaking the listing."""

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
from tests.stubs import write_stub

MORE = ["gemini", "opencode", "copilot", "cline", "qwen", "droid"]
FIELDS = ("app", "id", "cwd", "title", "branch", "model", "approval")


def expected(app: str) -> list[dict]:
    return json.loads((REALDATA / f"{app}-expected.json").read_text())


def listed(home: Path, monkeypatch: pytest.MonkeyPatch, app: str) -> list:
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    return [s for s in build(current_env(), [APPS[app]]).sessions if not s.archived]


@pytest.mark.parametrize("app", MORE)
def test_real_home_is_indexed_exactly(realdata, monkeypatch, app):
    sessions = listed(realdata(f"{app}-home"), monkeypatch, app)
    want = expected(app)
    got = [{**{f: getattr(s, f) for f in FIELDS}, "updated_ms": s.mtime} for s in sessions]
    assert got == want  # same sessions, same fields, newest first


ALL_WITH_EXPECTED = [*MORE, "kimi", "vibe", "cn", "auggie", "goose", "amp"]  # Crush's home is rooted at /


def test_every_app_in_one_home(realdata, tmp_path):
    """`sessidx list --json` over one home holding every app's data; counts from expected.json."""
    home = tmp_path / "all"
    for name in ["claude-home", "codex-home", *(f"{a}-home" for a in ALL_WITH_EXPECTED)]:
        shutil.copytree(realdata(name), home, dirs_exist_ok=True)
    done = run_cli("list", "--json", env={"SESSIDX_HOME": str(home)})
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    by_app: dict[str, list[dict]] = {}
    for row in rows:
        by_app.setdefault(row["app"], []).append(row)
    live = {app: [e for e in expected(app) if not e.get("archived")] for app in ALL_WITH_EXPECTED}
    # Claude and Codex have facts files instead: 17 transcripts, 6 live top-level Codex threads.
    assert {a: len(v) for a, v in by_app.items()} == {"claude": 17, "codex": 6, **{a: len(v) for a, v in live.items()}}
    for app in ALL_WITH_EXPECTED:
        got = [{**{f: r[f] for f in FIELDS}, "updated_ms": r["mtime"]} for r in by_app[app]]
        assert got == [{f: e[f] for f in (*FIELDS, "updated_ms")} for e in live[app]]
    assert [r["mtime"] for r in rows] == sorted((r["mtime"] for r in rows), reverse=True)
    for app in (*ALL_WITH_EXPECTED, "codex", "claude"):
        assert run_cli("list", "--app", app, "--json", env={"SESSIDX_HOME": str(home)}).stdout.count("\n") == \
            len(by_app[app])


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


@pytest.mark.parametrize(("app", "sid"), sorted(PLANS))
def test_resume_plans(realdata, app, sid):
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


def test_permissive_opt_in_per_app(realdata, stub_bin):
    write_stub(stub_bin, "copilot")
    (stub_bin / "copilot").write_text("#!/bin/sh\necho '--resume --model --mode --allow-all'\n")
    env = {"SESSIDX_HOME": str(realdata("copilot-home")), "PATH": f"{stub_bin}:{os.environ['PATH']}"}
    plan = json.loads(run_cli("resume", "dc91ed55", "--json", "--allow-permissive", env=env).stdout)
    assert plan["argv"][-1] == "--allow-all" and plan["held_back"] == []


def test_gemini_preview_leads_with_the_cleanup_hazard(realdata):
    done = run_cli("preview", "e3cfe87b", env={"SESSIDX_HOME": str(realdata("gemini-home"))})
    assert "will not resume: Gemini CLI" in done.stdout and "sessionRetention" in done.stdout
    assert "gemini --resume e3cfe87b-50e0-4f29-9754-a82c1c5c2cf1" in done.stdout  # the command, to copy


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


@pytest.mark.parametrize("how", ["truncated", "junk", "no-columns"])
@pytest.mark.parametrize("app", sorted(STORES))
def test_damaged_database(realdata, tmp_path, app, how):
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


@pytest.mark.parametrize("app", ["gemini", "qwen", "droid", "copilot"])
def test_junk_lines_in_jsonl_stores(realdata, tmp_path, app):
    home = copy_home(realdata, app, tmp_path)
    for path in home.rglob("*.jsonl"):
        data = path.read_bytes()
        path.write_bytes(b"\x00\xff junk\n[1,2]\n" + data + b'{"type": 7, "cwd": [], "message": "x"}\n{"trunc')
    done = run_cli("list", "--json", env={"SESSIDX_HOME": str(home)})
    assert done.returncode == 0 and "Traceback" not in done.stderr
    ids = {json.loads(line)["id"] for line in done.stdout.splitlines()}
    assert ids == {r["id"] for r in expected(app)}  # junk before the header or after the end is skipped


def test_subagents_and_children_are_skipped(tmp_path, monkeypatch):
    home = tmp_path / "h"
    chats = home / ".gemini/tmp/proj/chats"
    (chats / "sub").mkdir(parents=True)
    (home / ".gemini/tmp/proj/.project_root").write_text("/w")
    line = {"sessionId": "3a1f0c2e-0000-4000-8000-000000000001", "kind": "main", "lastUpdated": "2026-11-29T22:34:07.973Z"}
    said = {"type": "user", "content": [{"text": "hello"}]}
    (chats / "session-2026-11-29T22-34-main0001.jsonl").write_text(json.dumps(line) + "\n" + json.dumps(said) + "\n")
    (chats / "session-2026-11-29T22-34-sub00001.jsonl").write_text(json.dumps({**line, "sessionId": "s", "kind": "subagent"}))
    (chats / "sub" / "session-x.jsonl").write_text(json.dumps({**line, "sessionId": "nested"}))
    factory = home / ".factory/sessions/-w"
    factory.mkdir(parents=True)
    (factory / "a.jsonl").write_text(json.dumps({"type": "session_start", "id": "a", "cwd": "/w"}) + "\n")
    (factory / "a.settings.json").write_text(json.dumps({"tags": [{"name": "subagent"}]}))
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    assert [s.id for s in build(current_env(), APPS.values()).sessions] == ["3a1f0c2e-0000-4000-8000-000000000001"]


def test_app_overrides(tmp_path, monkeypatch, realdata):
    moved = tmp_path / "moved"
    shutil.copytree(realdata("gemini-home"), moved)
    monkeypatch.setenv("GEMINI_CLI_HOME", str(moved))
    assert len(build(current_env(), [APPS["gemini"]]).sessions) == 4
    monkeypatch.setenv("QWEN_HOME", str(realdata("qwen-home") / ".qwen"))
    assert len(build(current_env(), [APPS["qwen"]]).sessions) == 3
    data = tmp_path / "xdg"
    shutil.copytree(realdata("opencode-home") / ".local/share", data)
    monkeypatch.delenv("SESSIDX_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "nohome"))
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    assert len(build(current_env(), [APPS["opencode"]]).sessions) == 3


def test_kilo_reads_its_own_database(realdata, tmp_path, monkeypatch):
    home = tmp_path / "k"
    (home / ".local/share/kilo").mkdir(parents=True)
    src = realdata("opencode-home") / ".local/share/opencode"
    for f in src.iterdir():
        shutil.copy(f, home / ".local/share/kilo" / f.name.replace("opencode", "kilo"))
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    sessions = build(current_env(), APPS.values()).sessions
    assert {s.app for s in sessions} == {"kilo"} and len(sessions) == 3
    plan = json.loads(run_cli("resume", "kilo:ses_dd6965aeaffe2dtbgU4xU4zour", "--json",
                              env={"SESSIDX_HOME": str(home)}).stdout)
    assert plan["argv"][:3] == ["kilo", "--session", "ses_dd6965aeaffe2dtbgU4xU4zour"]


def test_older_file_layouts(tmp_path, monkeypatch):
    """opencode before its database (`storage/session/*/*.json`) and Gemini before JSONL
    (`session-*.json`, and a pre-0.29 slug that is sha256 of the cwd)."""
    import hashlib

    home = tmp_path / "old"
    storage = home / ".local/share/opencode/storage/session/proj1"
    storage.mkdir(parents=True)
    base = {"directory": "/w/old", "title": "Old storage", "time": {"created": 1700000000000, "updated": 1700000100000}}
    (storage / "ses_a.json").write_text(json.dumps({"id": "ses_a", **base}))
    (storage / "ses_child.json").write_text(json.dumps({"id": "ses_child", "parentID": "ses_a", **base}))
    (storage / "ses_archived.json").write_text(json.dumps(
        {"id": "ses_archived", **base, "time": {**base["time"], "archived": 1700000200000}}))
    slug = hashlib.sha256(b"/w/gem").hexdigest()
    chats = home / ".gemini/tmp" / slug / "chats"
    chats.mkdir(parents=True)
    (home / ".gemini/projects.json").write_text(json.dumps({"projects": {"/w/gem": "unused-new-slug"}}))
    (chats / "session-2025-01-01T10-00-abcd1234.json").write_text(json.dumps({
        "sessionId": "abcd1234-0000-4000-8000-000000000000", "lastUpdated": "2025-01-01T10:05:00.000Z",
        "messages": [{"type": "user", "content": [{"text": "Old gemini prompt"}]},
                     {"type": "gemini", "model": "gemini-2.0-pro", "content": "ok"}]}))
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    got = {s.id: s for s in build(current_env(), APPS.values()).sessions}
    assert set(got) == {"ses_a", "ses_archived", "abcd1234-0000-4000-8000-000000000000"}
    assert (got["ses_a"].cwd, got["ses_a"].title, got["ses_a"].mtime, got["ses_a"].archived) == (
        "/w/old", "Old storage", 1700000100000, False)
    assert got["ses_archived"].archived
    gem = got["abcd1234-0000-4000-8000-000000000000"]
    assert (gem.cwd, gem.title, gem.model, gem.mtime) == ("/w/gem", "Old gemini prompt", "gemini-2.0-pro",
                                                          1735725900000)


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


def test_gemini_startup_file_is_not_a_second_session(home, tmp_path):
    """Once listed as a second session with the same id: `resume <full id>` was ambiguous."""
    sid = "5be0a2c1-0000-4000-8000-000000000001"
    gemini_home(home, tmp_path)
    rows = [json.loads(line) for line in run_cli("list", "--json").stdout.splitlines()]
    assert [(r["id"], r["title"]) for r in rows] == [(sid, "Explain the router")]
    assert "ambiguous" not in run_cli("resume", sid, "--json").stderr


@pytest.mark.parametrize(("layers", "refused"), [
    ({}, True),  # on by default in Gemini
    ({"user": False}, False),
    ({"user": False, "workspace": True}, True),  # the folder's settings win over the user's
    ({"user": True, "workspace": False}, False),
    ({"defaults": False}, False),
    ({"user": False, "system": True}, True),  # system settings win over everything
    ({"user": "not json {"}, True),  # unreadable says nothing: the default holds
])
def test_gemini_resumes_only_where_its_cleanup_is_off(home, tmp_path, layers, refused):
    cwd = tmp_path / "proj"
    cwd.mkdir()
    gemini_home(home, cwd)
    files = {"user": home / ".gemini/settings.json", "workspace": cwd / ".gemini/settings.json",
             "system": tmp_path / "etc/settings.json", "defaults": tmp_path / "etc/system-defaults.json"}
    for layer, enabled in layers.items():
        files[layer].parent.mkdir(parents=True, exist_ok=True)
        files[layer].write_text(enabled if isinstance(enabled, str) else
                                json.dumps({"general": {"sessionRetention": {"enabled": enabled}}}))
    env = {"GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(files["system"])}
    plan = gemini_plan(env, "5be0a2c1")
    assert plan["ok"] is (not refused)
    assert ("session cleanup" in (plan["error"] or "")) is refused
    assert plan["argv"] == ["gemini", "--resume", "5be0a2c1-0000-4000-8000-000000000001", "-m", "gemini-3.8-flash"]


def test_copilot_autopilot_is_held_back_as_autopilot(home, tmp_path):
    from sessidx.apps.copilot import APP
    from sessidx.clihelp import HelpText
    from sessidx.config import current_env
    from sessidx.model import Session

    s = Session("copilot", "c1", str(tmp_path), None, "t", 1, 1, None, None, "autopilot", None, None)
    plan = APP.plan(s, HelpText("--resume --autopilot --allow-all", found=True, version="1.0.102"), False,
                    current_env())
    assert [h.flag for h in plan.held_back] == ["--autopilot"] and plan.refusal
    opted = APP.plan(s, HelpText("--resume --autopilot --allow-all", found=True), True, current_env())
    assert opted.argv[-1] == "--autopilot" and opted.refusal is None
