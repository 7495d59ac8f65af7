"""Cursor CLI, Kiro CLI, Amazon Q CLI, Qoder CLI and Aider, from SYNTHETIC homes built from their
formats (fixtures/synthetic_apps.py): each listed exactly, each plan safe, each conversation read,
and the credential tables of Kiro's and Q's databases never read nor copied."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from synthetic_apps import make_home

from sessidx.apps import APPS
from sessidx.config import current_env
from sessidx.index import build
from tests.conftest import run_cli

APPS_HERE = ["cursor", "kiro", "q", "qoder", "aider"]
FIELDS = ("app", "id", "cwd", "title", "branch", "model", "approval", "archived")


@pytest.fixture
def synthetic(tmp_path, monkeypatch) -> tuple[Path, dict[str, list[dict]]]:
    expected = make_home(tmp_path / "syn")
    monkeypatch.setenv("SESSIDX_HOME", str(tmp_path / "syn" / "home"))
    return tmp_path / "syn", expected


def rows(sessions) -> list[dict]:
    return [{**{f: getattr(s, f) for f in FIELDS}, "updated_ms": s.mtime} for s in sessions]


@pytest.mark.parametrize("app", APPS_HERE)
def test_synthetic_home_is_listed_exactly(synthetic, app):
    _, expected = synthetic
    every = build(current_env(), APPS.values())
    assert rows([s for s in every.sessions if s.app == app]) == expected[app]


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


def plan(sid: str, app: str, allow: bool = False) -> dict:
    run_cli("list")
    done = run_cli("resume", f"{app}:{sid}", "--json", *(["--allow-permissive"] if allow else []),
                   env={"PATH": "/nonexistent"})
    return json.loads(done.stdout)


@pytest.mark.parametrize(("app", "index", "argv", "error"), [
    ("cursor", 0, ["cursor-agent", "--resume", "6f1c1c8e-3b1a-4c55-9a57-1b0a2f3e4d01", "--model", "gpt-5"],
     None),
    ("cursor", 1, ["cursor-agent", "--resume", "0b7d5e2a-8c3f-4e1d-b6a9-2c4d5e6f7a02", "--model",
                   "claude-4.5-sonnet", "--mode", "plan"], None),
    ("cursor", 2, ["cursor-agent", "--resume", "9e8d7c6b-5a49-4382-9170-a1b2c3d4e503"], "not known to be as strict"),
    ("kiro", 0, ["kiro-cli", "chat", "--resume-id", "sess_01JDX7Q2M4N8P6R3T5V7W9Y1Z3"], None),
    ("q", 0, ["q", "chat", "--resume"], None),
    ("qoder", 0, ["qodercli", "--resume", "5b0e8f3a-1d2c-4e6f-8a9b-0c1d2e3f4a5b", "--model", "qoder-ultimate",
                  "--permission-mode", "default"], None),
    ("qoder", 1, ["qodercli", "--resume", "8c9d0e1f-2a3b-4c5d-9e6f-7a8b9c0d1e2f", "--model", "qoder-auto",
                  "--permission-mode", "plan"], None),
    ("aider", 0, ["aider", "--restore-chat-history", "--model", "claude-sonnet-4-5"], None),
    ("kiro", 2, ["kiro-cli", "chat", "--resume-id", "4d3c2b1a-0f9e-4d8c-b7a6-958473625140", "--model", "claude-opus-4"],
     None),
    ("q", 1, ["q", "chat", "--resume", "--model", "claude-sonnet-4"], None),
])
def test_resume_plans(synthetic, app, index, argv, error):
    _, expected = synthetic
    row = expected[app][index]
    got = plan(row["id"], app)
    assert got["argv"] == argv
    assert got["cwd"] == row["cwd"]
    if error:
        assert error in got["error"] and not got["ok"]
    else:
        assert got["error"] is None and got["ok"], got


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


def test_preview_shows_the_conversation(synthetic):
    _, expected = synthetic
    run_cli("list")
    shown = run_cli("preview", f"q:{expected['q'][0]['id']}").stdout
    assert "Done: Fix it" in shown or "Done: Write a terraform" in shown


TRACER = """
import sqlite3, sys
real_connect = sqlite3.connect
class Traced(sqlite3.Connection):
    def execute(self, sql, *a):
        if "auth_kv" in sql.lower():
            print("AUTH READ", file=sys.stderr)
        return super().execute(sql, *a)
def connect(database, *a, **k):
    if "amazon-q" in str(database) or "kiro-cli" in str(database):
        print("OPEN", database, file=sys.stderr)
    k["factory"] = Traced
    return real_connect(database, *a, **k)
sqlite3.connect = connect
import shutil
real_copy = shutil.copyfile
def copyfile(src, dst, *a, **k):
    if "data.sqlite3" in str(src):
        print("COPIED", src, file=sys.stderr)
    return real_copy(src, dst, *a, **k)
shutil.copyfile = copyfile
from sessidx.cli import main
sys.argv = ["sessidx", *sys.argv[1:]]
main()
"""


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


def test_q_database_holds_the_tokens_the_test_plants(synthetic):
    """The guard above means something only if the table is there."""
    root, _ = synthetic
    conn = sqlite3.connect(root / "home/.local/share/amazon-q/data.sqlite3")
    assert conn.execute("select count(*) from auth_kv").fetchone() == (1,)
