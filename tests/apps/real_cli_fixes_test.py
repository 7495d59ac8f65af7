"""What the real CLIs showed when driven live (issue 17), each pinned on their real homes."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from sessidx.apps import APPS
from sessidx.clihelp import HelpText
from sessidx.config import current_env
from sessidx.index import build
from tests.conftest import run_cli

KILO_HELP = ("kilo [project]\n  -m, --model  model to use\n  -s, --session  session id to continue\n"
             "      --agent  agent to use\n")


def sessions(home: Path, monkeypatch: pytest.MonkeyPatch, app: str) -> list:
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    return build(current_env(), [APPS[app]]).sessions


def plan_json(home: Path, ident: str, *flags: str, path: str = "/nonexistent") -> dict:
    done = run_cli("resume", ident, "--json", *flags, env={"SESSIDX_HOME": str(home), "PATH": path})
    return json.loads(done.stdout)


def test_kilo_carries_a_recorded_plan_agent(realdata, tmp_path, monkeypatch):
    """Kilo 7.7.9 opens `--session ID` in Code unless given `--agent plan`. Kilo's store is
    opencode's (same schema): the real opencode database, one session switched to Plan."""
    home = tmp_path / "kilo-home"
    shutil.copytree(realdata("opencode-home") / ".local/share/opencode", home / ".local/share/kilo")
    db = home / ".local/share/kilo/kilo.db"
    (home / ".local/share/kilo/opencode.db").rename(db)
    for suffix in ("-wal", "-shm"):
        if (home / f".local/share/kilo/opencode.db{suffix}").exists():
            (home / f".local/share/kilo/opencode.db{suffix}").rename(f"{db}{suffix}")
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE session SET agent = 'plan' WHERE id = 'ses_dd6965aeaffe2dtbgU4xU4zour'")
        conn.execute("UPDATE session SET agent = 'yolo-helper' WHERE id = 'ses_dd6961556ffeEywRsAlqqWjnHR'")
    found = {s.id: s for s in sessions(home, monkeypatch, "kilo")}
    kilo = APPS["kilo"]
    help_text = HelpText(KILO_HELP, found=True, version="7.7.9")
    planned = kilo.plan(found["ses_dd6965aeaffe2dtbgU4xU4zour"], help_text, False, current_env())
    assert planned.argv[-2:] == ["--agent", "plan"] and planned.refusal is None
    built = kilo.plan(found["ses_dd696378cffexsNtjXerLT0P3y"], help_text, False, current_env())
    assert "--agent" not in built.argv  # the default: nothing to carry
    custom = kilo.plan(found["ses_dd6961556ffeEywRsAlqqWjnHR"], help_text, False, current_env())
    assert "--agent" not in custom.argv and any("'yolo-helper' is not a built-in" in w for w in custom.warnings)
    older = kilo.plan(found["ses_dd6965aeaffe2dtbgU4xU4zour"], HelpText("-s --session -m", found=True), False,
                      current_env())
    assert "--agent" not in older.argv  # a build without the flag gets none


def test_vibe_agent_is_what_was_recorded(realdata):
    home = realdata("vibe-home")
    plain = plan_json(home, "vibe:c84deaa8")  # ask: restored by itself, `--agent` would carry nothing
    assert plain["argv"] == ["vibe", "--resume", "c84deaa8-6c03-f814-3f11-45b8ee775909"]
    loose = plan_json(home, "vibe:45fa137e")  # auto-approve
    assert "--agent does not override it" in loose["error"] and loose["held_back"]
    opted = plan_json(home, "vibe:45fa137e", "--allow-permissive")
    assert opted["argv"] == ["vibe", "--resume", "45fa137e-c92a-0f56-29c0-68d0c8d09a23"]
    assert opted["error"].startswith("folder no longer exists")


def test_vibe_bypass_is_not_restored_so_its_plain_resume_is_not_refused(realdata):
    home = realdata("vibe-home")
    plain = plan_json(home, "vibe:e333617f")  # accept-edits+bypass
    assert plain["argv"] == ["vibe", "--resume", "e333617f-52d1-871c-fb6a-f2d5b92a7b50"]
    assert plain["error"].startswith("folder no longer exists") and plain["held_back"] == []
    assert any("--auto-approve, which a resume does not restore" in w for w in plain["warnings"])
    opted = plan_json(home, "vibe:e333617f", "--allow-permissive")
    assert opted["argv"][-1] == "--auto-approve" and "--agent" not in opted["argv"]


def test_copilot_autopilot_reason_names_what_is_loose(realdata, tmp_path, monkeypatch):
    """Autopilot comes back with Manual Approval: tools ask, the agent goes on by itself."""
    home = tmp_path / "copilot"
    shutil.copytree(realdata("copilot-home"), home)
    real = {s.id: s for s in sessions(home, monkeypatch, "copilot")}
    session = real["9be6c79a-a387-48d7-9d12-5fa008fafe8c"]
    session.approval = "autopilot"  # what `--autopilot` records, on a real session
    cli = HelpText("--resume --model --mode --allow-all --autopilot --yolo", found=True, version="1.0.102")
    planned = APPS["copilot"].plan(session, cli, False, current_env())
    assert planned.refusal and "tools still ask" in planned.refusal and "by itself" in planned.refusal
    assert "every tool would run unasked" not in planned.refusal
    allow_all = APPS["copilot"].plan(real["dc91ed55-7ad1-47ca-9547-07c54f7b305d"], cli, False, current_env())
    assert allow_all.refusal and "every tool would run unasked" in allow_all.refusal


def test_droid_exec_sessions_say_they_need_the_opt_in(realdata):
    home = realdata("droid-home")
    done = run_cli("preview", "f091b5e2", env={"SESSIDX_HOME": str(home), "PATH": "/nonexistent"})
    assert "droid exec" in done.stdout and "every non-interactive droid session needs the opt-in" in done.stdout
    rows = [json.loads(line) for line in run_cli("list", "--app", "droid", "--json",
                                                 env={"SESSIDX_HOME": str(home)}).stdout.splitlines()]
    assert {r["origin"] for r in rows} == {"exec"}


def test_cn_names_the_session_as_its_picker_shows_it(realdata, tmp_path):
    home = tmp_path / "cn"
    shutil.copytree(realdata("cn-home"), home)
    doc = json.loads((home / ".continue/sessions/78ca3158-53d2-40dc-a64b-228215907cf1.json").read_text())
    first = next(h["message"]["content"] for h in doc["history"] if h["message"]["role"] == "user")
    first = first if isinstance(first, str) else first[0]["text"]
    plan = plan_json(home, "cn:78ca3158")
    choose = next(w for w in plan["warnings"] if "its picker opens here" in w)
    # cn's picker shows (and sorts by) when a session was made, not when it was last used
    created = time.strftime("%Y-%m-%d %H:%M", time.localtime(1796070946995 / 1000))  # its sessions.json
    assert "'Untitled Session' shown as '" in choose and f"created {created}" in choose
    assert " ".join(first.split())[:30] in choose
    assert any(".onboarding_complete is missing" in w for w in plan["warnings"])
    (home / ".continue/.onboarding_complete").write_text("")
    assert not any("onboarding" in w for w in plan_json(home, "cn:78ca3158")["warnings"])
    titled = plan_json(home, "cn:195e05a7")
    assert any("choose 'Scratch notes summary' (shown as" in w for w in titled["warnings"])
    (home / ".continue/sessions/sessions.json").unlink()  # no index: the file's last use, said as such
    assert any("'Untitled Session' last used 20" in w for w in plan_json(home, "cn:78ca3158")["warnings"])


@pytest.mark.parametrize(("made", "shown"), [
    ((2026, 12, 1, 16, 39), "4:39 PM"), ((2026, 11, 30, 9, 5), "yesterday"), ((2026, 11, 29, 9, 5), "Sunday"),
    ((2026, 11, 28, 9, 5), "Nov 28"), ((2025, 12, 24, 9, 5), "Dec 24, 2025")])
def test_cn_times_read_as_its_picker_prints_them(made, shown):
    from sessidx.apps.cn import _as_cn_shows

    now = time.mktime((2026, 12, 1, 18, 0, 0, 0, 0, -1))  # a Tuesday
    assert _as_cn_shows(int(time.mktime((*made, 0, 0, 0, -1)) * 1000), now) == shown


GEMINI_ID = "e3cfe87b-50e0-4f29-9754-a82c1c5c2cf1"


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


def test_cline_carries_a_recorded_auto_approve_false(realdata):
    """Cline 3.0.65 resumes every session with auto-approve-all on (its default) unless given
    `--auto-approve false`; a session started with it keeps `autoApproveTools: false` in its
    manifest, and asked before each tool when resumed with the flag (conformance_login)."""
    home = realdata("cline-home")
    asked = plan_json(home, "cline:1795991195804_6a67p")  # `cline --auto-approve false -m mock-model ...`
    assert asked["argv"] == ["cline", "--id", "1795991195804_6a67p", "--auto-approve", "false", "-m", "mock-model"]
    planned = plan_json(home, "cline:1795991189698_2e5ie")  # `-p`: plan mode, which also records false
    assert planned["argv"][3:] == ["-p", "--auto-approve", "false", "-m", "mock-large"]
    default = plan_json(home, "cline:1795991183296_r7db9")  # started with the default: nothing to carry
    assert "--auto-approve" not in default["argv"]
