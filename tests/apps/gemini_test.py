"""The gemini adapter (sessidx/apps/gemini.py): its home listed as the CLI wrote it, its resume plans, and
its own cases."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from tests.apps.realcli import GEMINI_ID
from tests.apps.realhome_stores import (
    check_junk_lines_in_jsonl_stores,
    check_real_home_is_indexed_exactly,
    check_resume_plans,
    gemini_home,
    gemini_plan,
)
from tests.conftest import run_cli


def test_real_home_is_indexed_exactly(realdata, monkeypatch):
    check_real_home_is_indexed_exactly(realdata, monkeypatch, "gemini")


@pytest.mark.parametrize("sid", [
    "e3cfe87b-50e0-4f29-9754-a82c1c5c2cf1",
])
def test_resume_plans(realdata, sid):
    check_resume_plans(realdata, "gemini", sid)


def test_gemini_preview_leads_with_the_cleanup_hazard(realdata):
    done = run_cli("preview", "e3cfe87b", env={"SESSIDX_HOME": str(realdata("gemini-home"))})
    assert "will not resume: Gemini CLI" in done.stdout and "sessionRetention" in done.stdout
    assert "gemini --resume e3cfe87b-50e0-4f29-9754-a82c1c5c2cf1" in done.stdout  # the command, to copy


def test_junk_lines_in_jsonl_stores(realdata, tmp_path):
    check_junk_lines_in_jsonl_stores(realdata, tmp_path, "gemini")


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


@pytest.mark.parametrize("retitled_in", ["session", "startup file"])
def test_gemini_resume_in_a_later_minute_is_still_one_session(realdata, tmp_path, retitled_in):
    """0.61.0 leaves a startup-only file (its metadata, a startup `messages` list, `$set
    sessionId`: the real lines a resume writes) when it resumes in a later minute, and may
    re-title the session after the resume."""
    home = tmp_path / "gemini"
    shutil.copytree(realdata("gemini-home"), home)
    chats = home / ".gemini/tmp/api/chats"
    real = chats / "session-2026-11-29T22-34-e3cfe87b.jsonl"
    lines = real.read_text().splitlines()
    startup = [json.loads(line) for line in lines[6:9]]  # the second start, as the real file has it
    assert "sessionId" in startup[0] and len(startup[1]["$set"]["messages"]) == 1 and "sessionId" in startup[2]["$set"]
    startup[0]["startTime"] = startup[0]["lastUpdated"] = "2026-11-30T09:12:00.000Z"
    retitle = json.dumps({"$set": {"summary": "Mock title: Now add unit tests"}})
    later = chats / "session-2026-11-30T09-12-e3cfe87b.jsonl"
    later.write_text("\n".join([*map(json.dumps, startup), *([retitle] if retitled_in == "startup file" else [])]) + "\n")
    if retitled_in == "session":
        real.write_text(real.read_text() + retitle + "\n")
    rows = [json.loads(line) for line in run_cli("list", "--json", env={"SESSIDX_HOME": str(home)}).stdout.splitlines()]
    ours = [r for r in rows if r["id"] == GEMINI_ID]
    assert len(ours) == 1 and ours[0]["path"] == str(real)
    want = "Mock title: Now add unit tests" if retitled_in == "session" else "Mock title: Add input validation to the"
    assert ours[0]["title"] == want
    assert "ambiguous" not in run_cli("resume", GEMINI_ID, "--json", env={"SESSIDX_HOME": str(home)}).stderr
    assert os.path.exists(later)  # read, never touched
