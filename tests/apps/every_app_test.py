"""Cases across several apps at once: one home holding many apps, every app's ids, damaged
stores of each, searching and previewing them together."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys

from sessidx.apps import APPS
from sessidx.config import current_env
from sessidx.content import reading, store
from sessidx.content.query import search
from sessidx.conversation import recent
from sessidx.index import build
from tests.apps import realhome_agents, realhome_stores
from tests.apps.realhome_agents import REAL, pi_line
from tests.apps.realhome_documents import expected, home_of, plan_of
from tests.apps.realhome_stores import ALL_WITH_EXPECTED, FIELDS
from tests.apps.synthetic_home import APPS_HERE, TRACER, plan
from tests.conftest import REALDATA, run_cli


def test_goose_path_root_and_crush_global_data(realdata, tmp_path, monkeypatch):
    root = tmp_path / "goose-root"
    shutil.copytree(realdata("goose-home") / ".local/share/goose", root / "data")
    monkeypatch.setenv("GOOSE_PATH_ROOT", str(root))
    assert len(build(current_env(), [APPS["goose"]]).sessions) == len(expected("goose"))
    crush_home = home_of("crush", realdata, tmp_path)
    monkeypatch.setenv("CRUSH_GLOBAL_DATA", str(crush_home / ".local/share/crush"))
    assert len(build(current_env(), [APPS["crush"]]).sessions) == len(expected("crush"))


def test_loose_modes_with_the_opt_in(realdata, tmp_path):
    kimi = plan_of("kimi", "afe90848", realdata, tmp_path, allow=True)
    assert kimi["argv"][-1] == "--yolo" and not kimi["error"].startswith("kimi restores")
    vibe = plan_of("vibe", "e333617f", realdata, tmp_path, allow=True)
    assert vibe["argv"][-2:] == ["e333617f-52d1-871c-fb6a-f2d5b92a7b50", "--auto-approve"]


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
    live = {app: [e for e in realhome_stores.expected(app) if not e.get("archived")] for app in ALL_WITH_EXPECTED}
    # Claude and Codex have facts files instead: 17 transcripts, 6 live top-level Codex threads.
    assert {a: len(v) for a, v in by_app.items()} == {"claude": 17, "codex": 6, **{a: len(v) for a, v in live.items()}}
    for app in ALL_WITH_EXPECTED:
        got = [{**{f: r[f] for f in FIELDS}, "updated_ms": r["mtime"]} for r in by_app[app]]
        assert got == [{f: e[f] for f in (*FIELDS, "updated_ms")} for e in live[app]]
    assert [r["mtime"] for r in rows] == sorted((r["mtime"] for r in rows), reverse=True)
    for app in (*ALL_WITH_EXPECTED, "codex", "claude"):
        assert run_cli("list", "--app", app, "--json", env={"SESSIDX_HOME": str(home)}).stdout.count("\n") == \
            len(by_app[app])


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


def test_loose_modes_only_with_the_opt_in(realdata):
    never = realhome_agents.plan_of("openhands", "d09e539a", realdata("openhands-home"), allow=True)
    assert never["argv"][-1] == "--always-approve" and never["held_back"] == []
    risky = realhome_agents.plan_of("openhands", "56f484ee", realdata("openhands-home"), allow=True)
    assert risky["argv"][-1] == "--llm-approve"
    gptme = realhome_agents.plan_of("gptme", "2026-12-01-sprinting-blue-cat", realdata("gptme-home"), allow=True)
    assert gptme["ok"] is True and gptme["argv"] == ["gptme", "--name=2026-12-01-sprinting-blue-cat"]


def test_search_and_preview_cover_every_real_session(realdata, tmp_path, monkeypatch):
    home = tmp_path / "all"
    for app in REAL:
        shutil.copytree(realdata(f"{app}-home"), home, dirs_exist_ok=True)
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    index = build(current_env(), [APPS[a] for a in REAL])
    assert len(index.sessions) == 20
    db = store.connect(current_env())
    reading.refresh(db, index.sessions)
    found = {(h.session.app, h.session.id) for h in search(db, "backup shell script")}
    assert found == {("pi", "01a230d0-3a1a-73cf-ac89-5e898de1862c"), ("hermes", "20261201_085653_0de498"),
                     ("openhands", "dd31b88c-9875-4fb2-ac25-37f53c833bff"), ("gptme", "2026-12-01-sprinting-yellow-cat")}
    for session in index.sessions:
        said = recent(session, APPS[session.app])
        assert said[0][0] == "user" and ("assistant", "Hello from mock.") in said, session.key
        assert not any(text.startswith("<system>") for _, text in said)  # gptme's own nudges are no prompts
    resumed = next(s for s in index.sessions if s.id == "01a230cf-fc09-731b-aa46-f0a4a14759f2")
    assert [t for r, t in recent(resumed, APPS["pi"]) if r == "user"] == ["Why does login fail?", "Add a test for it"]


def test_ids_fit_their_grammar_and_options_never_do(realdata):
    for app in REAL:
        pattern = APPS[app].id_pattern
        for row in json.loads((REALDATA / f"{app}-expected.json").read_text()):
            assert re.fullmatch(pattern, row["id"]), (app, row["id"])
        for hostile in ("--help", "-y", "../x", "a\nb", ""):
            assert not re.fullmatch(pattern, hostile), (app, hostile)


def test_damaged_stores_never_stop_the_listing(realdata, tmp_path):
    home = tmp_path / "all"
    for app in REAL:
        shutil.copytree(realdata(f"{app}-home"), home, dirs_exist_ok=True)
    for path in (home / ".pi").rglob("*.jsonl"):
        path.write_bytes(b"\x00\xff junk\n[1,2]\n" + path.read_bytes() + b'{"type": 7, "message": []}\n{"trunc')
    for name in ("state.db-wal", "state.db-shm"):
        (home / ".hermes" / name).unlink()
    (home / ".hermes/state.db").write_bytes(b"SQLite format 3\x00" + b"\x01" * 2048)
    states = sorted((home / ".openhands/conversations").glob("*/base_state.json"))
    states[0].write_text('{"id": ["not", "an", "id"]}')
    states[1].write_bytes(b"\xff{")
    for event in (home / ".openhands/conversations").glob("*/events/event-00001-*.json"):
        event.write_text("[]")
    configs = sorted((home / ".local/share/gptme/logs").glob("*/config.toml"))
    configs[0].write_bytes(b"[chat\nname = \x00\xff\nworkspace = [1, 2]\n")
    done = run_cli("list", "--json", env={"SESSIDX_HOME": str(home)})
    assert done.returncode == 0 and "Traceback" not in done.stderr
    listed = [json.loads(line) for line in done.stdout.splitlines()]
    counts = {app: sum(r["app"] == app for r in listed) for app in REAL}
    assert counts == {"pi": 5, "hermes": 0, "openhands": 3, "gptme": 5}


def test_hostile_ids_are_never_sessions(realdata, tmp_path, monkeypatch):
    """A gptme folder name or a pi header id that could become an option, or a line, is skipped."""
    home = tmp_path / "h"
    shutil.copytree(realdata("gptme-home"), home, symlinks=True)
    logs = home / ".local/share/gptme/logs"
    for bad in ("--help", "-y", "a b", "x\ny"):
        shutil.copytree(logs / "2026-12-01-singing-sad-elephant", logs / bad, symlinks=True)
    pi_folder = home / ".pi/agent/sessions/--w--"
    pi_folder.mkdir(parents=True)
    (pi_folder / "2026-12-01T09-00-00-000Z_x.jsonl").write_text(
        pi_line(type="session", version=3, id="--fork", timestamp="2026-12-01T09:00:00.000Z", cwd="/w"))
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    ids = {s.id for s in build(current_env(), [APPS["gptme"], APPS["pi"]]).sessions}
    assert ids == {e["id"] for e in realhome_agents.expected("gptme", home)}
    oh = home / ".openhands/conversations/00"
    oh.mkdir(parents=True)
    (oh / "base_state.json").write_text(json.dumps({"id": "-x", "workspace": {"working_dir": "/w"}}))
    hermes = home / ".hermes"
    shutil.copytree(realdata("hermes-home") / ".hermes", hermes)
    conn = sqlite3.connect(hermes / "state.db")
    conn.execute("UPDATE sessions SET id = '--yolo' WHERE id = '20261201_085545_8f6cb0'")
    conn.commit()
    conn.close()
    assert [s for s in build(current_env(), [APPS["openhands"]]).sessions] == []
    assert len(build(current_env(), [APPS["hermes"]]).sessions) == 4


def test_folder_apps_find_nothing_without_the_others(synthetic):
    """Aider and Cursor find folders through the other apps' sessions: alone, on a cold cache,
    Aider finds none and Cursor only the folder its projects/ names."""
    found = build(current_env(), [APPS["aider"], APPS["cursor"]]).sessions
    assert [s.app for s in found].count("aider") == 0
    assert sorted(s.cwd is not None for s in found if s.app == "cursor") == [False, False, True]


def test_cli_lists_them(synthetic):
    _, expected = synthetic
    for app in APPS_HERE:
        listed = [json.loads(line) for line in run_cli("list", "--json", "--app", app).stdout.splitlines()]
        # with --app only one app is read, so Aider and Cursor lean on the cache of the full list
        if app in ("aider", "cursor"):
            run_cli("list")
            listed = [json.loads(line) for line in run_cli("list", "--json", "--app", app).stdout.splitlines()]
        assert [r["id"] for r in listed] == [r["id"] for r in expected[app]], app


def test_loose_modes(synthetic):
    _, expected = synthetic
    qoder = plan(expected["qoder"][0]["id"], "qoder")
    assert [h["flag"] for h in qoder["held_back"]] == ["--permission-mode acceptEdits"]
    assert plan(expected["qoder"][0]["id"], "qoder", allow=True)["argv"][-2:] == ["--permission-mode", "acceptEdits"]
    cursor = plan(expected["cursor"][2]["id"], "cursor", allow=True)
    assert "not known to be as strict" not in (cursor["error"] or "")


def test_conversations_are_searchable(synthetic):
    run_cli("list")
    for words, app in [("stylesheet first", "cursor"), ("pagination orders endpoint", "kiro"),
                       ("secrets manager", "kiro"), ("terraform bucket", "q"), ("dark mode toggle persist", "qoder"),
                       ("exponential backoff", "aider"), ("meeting notes", "kiro")]:
        done = run_cli("search", *words.split(), "--json")
        assert app in {json.loads(line)["app"] for line in done.stdout.splitlines()}, (words, done.stderr)


def test_credential_stores_are_read_in_place_and_never_copied(synthetic, tmp_path):
    root, expected = synthetic
    env = {**os.environ}
    for args in (["list"], ["search", "terraform"], ["preview", f"q:{expected['q'][0]['id']}"]):
        done = subprocess.run([sys.executable, "-c", TRACER, *args], capture_output=True, text=True, env=env)
        assert "COPIED" not in done.stderr and "AUTH READ" not in done.stderr, done.stderr
        assert "OPEN file:" in done.stderr and "mode=ro" in done.stderr
    # and nothing was written beside them
    for db in (root / "home/.local/share/amazon-q", root / "home/.local/share/kiro-cli"):
        assert sorted(p.name for p in db.iterdir()) == ["data.sqlite3"]


def test_a_locked_or_damaged_store_is_skipped_with_a_note(synthetic):
    root, _ = synthetic
    (root / "home/.local/share/amazon-q/data.sqlite3").write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    done = run_cli("build", "-v")
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert "amazon-q" in done.stderr + done.stdout
    assert any(s.app == "kiro" for s in build(current_env(), APPS.values()).sessions)
