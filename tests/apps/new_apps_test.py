"""pi, Hermes Agent, OpenHands CLI and gptme, from homes their real CLIs wrote: each listed exactly as
its expected.json says, resumed with the right command in the right folder, found by content
search and shown in the preview; their loose modes never in force without the opt-in."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from sessidx.apps import APPS
from sessidx.config import current_env
from sessidx.content import reading, store
from sessidx.content.query import search
from sessidx.conversation import recent
from sessidx.index import build
from tests.conftest import REALDATA, run_cli

REAL = ["pi", "hermes", "openhands", "gptme"]
FIELDS = ("app", "id", "cwd", "title", "model", "effort", "approval", "archived")


def expected(app: str, home: Path) -> list[dict]:
    rows = json.loads((REALDATA / f"{app}-expected.json").read_text())
    if app == "gptme":  # its workspace is stored as `~/proj/...`: the home the data lives in
        rows = [{**r, "cwd": r["cwd"].replace("/home/sam", str(home), 1)} for r in rows]
    return rows


def rows(sessions) -> list[dict]:
    return [{**{f: getattr(s, f) for f in FIELDS}, "updated_ms": s.mtime} for s in sessions]


@pytest.mark.parametrize("app", REAL)
def test_real_home_is_listed_exactly(realdata, monkeypatch, app):
    home = realdata(f"{app}-home")
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    want = [{f: e[f] for f in (*FIELDS, "updated_ms")} for e in expected(app, home)]
    assert rows(build(current_env(), [APPS[app]]).sessions) == want  # archived ones too, newest first
    listed = [json.loads(line) for line in run_cli("list", "--json", "--app", app).stdout.splitlines()]
    assert [r["id"] for r in listed] == [w["id"] for w in want if not w["archived"]]
    every = [json.loads(line) for line in run_cli("list", "--json", "--archived", "--app", app).stdout.splitlines()]
    assert [r["id"] for r in every] == [w["id"] for w in want]


def plan_of(app: str, sid: str, home: Path, allow: bool = False) -> dict:
    done = run_cli("resume", f"{app}:{sid}", "--json", *(["--allow-permissive"] if allow else []),
                   env={"SESSIDX_HOME": str(home), "PATH": "/nonexistent"})
    return json.loads(done.stdout)


# (app, id): the command, the flags held back, and why it is refused without the opt-in
PLANS = {
    ("pi", "01a230d0-3a1a-73cf-ac89-5e898de1862c"): (["pi", "--session", "01a230d0-3a1a-73cf-ac89-5e898de1862c"], [],
                                                     None),
    # 0.19.0 resumes on the config's default model unless told (seen by make conformance)
    ("hermes", "20261201_085608_b4a87b"): (["hermes", "--resume", "20261201_085608_b4a87b", "-m", "mock-hermes"], [],
                                           None),
    ("hermes", "20261201_085653_0de498"): (["hermes", "--resume", "20261201_085653_0de498", "-m", "mock-hermes-large"],
                                           [], None),
    ("openhands", "4edae71a-93fa-4d2a-9bb9-1015b5fbb7ae"): (
        ["openhands", "--resume", "4edae71a-93fa-4d2a-9bb9-1015b5fbb7ae"], [], None),
    ("openhands", "56f484ee-8a77-4c98-92db-b16d555e00a1"): (
        ["openhands", "--resume", "56f484ee-8a77-4c98-92db-b16d555e00a1"], ["--llm-approve"], None),
    ("openhands", "d09e539a-4372-48d5-8ded-5effa2196094"): (
        ["openhands", "--resume", "d09e539a-4372-48d5-8ded-5effa2196094"], ["--always-approve"], None),
    ("gptme", "2026-12-01-singing-sad-elephant"): (["gptme", "--name=2026-12-01-singing-sad-elephant"], [], None),
    ("gptme", "2026-12-01-sprinting-blue-cat"): (["gptme", "--name=2026-12-01-sprinting-blue-cat"], ["--no-confirm"],
                                                 "has no flag that turns it off"),
}


@pytest.mark.parametrize(("app", "sid"), sorted(PLANS))
def test_resume_plans(realdata, app, sid):
    home = realdata(f"{app}-home")
    argv, held, refused = PLANS[(app, sid)]
    plan = plan_of(app, sid, home)
    assert plan["argv"] == argv
    assert [h["flag"] for h in plan["held_back"]] == held
    want_cwd = next(e["cwd"] for e in expected(app, home) if e["id"] == sid)
    assert plan["cwd"] == want_cwd  # pi forks, and OpenHands works in, the folder it is started from
    if refused:
        assert refused in plan["error"] and plan["ok"] is False
    elif app == "gptme":
        assert plan["error"] is None and plan["ok"] is True  # its folders are in the extracted home
    else:
        assert plan["error"].startswith("folder no longer exists")  # /home/sam is not on this machine


def test_loose_modes_only_with_the_opt_in(realdata):
    never = plan_of("openhands", "d09e539a", realdata("openhands-home"), allow=True)
    assert never["argv"][-1] == "--always-approve" and never["held_back"] == []
    risky = plan_of("openhands", "56f484ee", realdata("openhands-home"), allow=True)
    assert risky["argv"][-1] == "--llm-approve"
    gptme = plan_of("gptme", "2026-12-01-sprinting-blue-cat", realdata("gptme-home"), allow=True)
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


def pi_line(**record) -> str:
    return json.dumps(record) + "\n"


def test_pi_stray_files_forks_and_names(realdata, tmp_path, monkeypatch):
    home = tmp_path / "pi"
    shutil.copytree(realdata("pi-home"), home)
    sessions = home / ".pi/agent/sessions"
    source = next(sessions.glob("--home-sam-proj-api-server--/*.jsonl"))
    fork_id = "01a230d1-0000-7000-8000-000000000001"
    header = pi_line(type="session", version=3, id=fork_id, timestamp="2026-12-01T09:00:00.000Z",
                     cwd="/home/sam/proj/web ui", parentSession=str(source))
    said = pi_line(type="message", id="aa", parentId=None, timestamp="2026-12-01T09:00:01.000Z",
                   message={"role": "user", "content": [{"type": "text", "text": "Fork it"}], "timestamp": 1796115601000})
    cleared = pi_line(type="session_info", id="bb", parentId="aa", timestamp="2026-12-01T09:00:02.000Z", name="  ")
    # not yet moved into its folder by pi (every pi start does that)
    (sessions / f"2026-12-01T09-00-00-000Z_{fork_id}.jsonl").write_text(header + said + cleared)
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    found = {s.id: s for s in build(current_env(), [APPS["pi"]]).sessions}
    fork = found[fork_id]
    assert (fork.cwd, fork.title, fork.mtime) == ("/home/sam/proj/web ui", "Fork it", 1796115601000)
    assert len(found) == 6


def test_hermes_lists_as_hermes_does(realdata, tmp_path, monkeypatch):
    """Sub-agent runs and compression continuations hidden, /branch children shown, and a
    compression root shown as its live tip."""
    home = tmp_path / "hermes"
    shutil.copytree(realdata("hermes-home"), home)
    conn = sqlite3.connect(home / ".hermes/state.db")
    add = ("INSERT INTO sessions (id, source, model, model_config, parent_session_id, started_at, ended_at, end_reason, "
           "cwd, title, archived) VALUES (?, 'cli', 'm', ?, ?, ?, ?, ?, '/w', ?, 0)")
    conn.execute(add, ("20261201_090000_aaaaaa", "{}", None, 1796116000.0, 1796116100.0, "compression", "Old root"))
    conn.execute(add, ("20261201_090140_bbbbbb", "{}", "20261201_090000_aaaaaa", 1796116100.0, None, None, "Live tip"))
    conn.execute(add, ("20261201_090200_cccccc", '{"_delegate_from": "x"}', "20261201_085608_b4a87b", 1796116120.0,
                       None, None, "A sub-agent"))
    conn.execute(add, ("20261201_090300_dddddd", '{"_branched_from": "20261201_085608_b4a87b"}',
                       "20261201_085608_b4a87b", 1796116180.0, None, None, "A branch"))
    conn.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', 'x', ?)",
                 ("20261201_090140_bbbbbb", 1796116200.5))
    conn.commit()
    conn.close()
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    found = {s.id: s for s in build(current_env(), [APPS["hermes"]]).sessions}
    assert "20261201_090000_aaaaaa" not in found and "20261201_090200_cccccc" not in found
    assert found["20261201_090140_bbbbbb"].title == "Live tip" and found["20261201_090140_bbbbbb"].mtime == 1796116200500
    assert found["20261201_090300_dddddd"].title == "A branch"
    assert len(found) == 7


@pytest.mark.parametrize(("app", "variable", "where"), [
    ("pi", "PI_CODING_AGENT_DIR", ".pi/agent"), ("hermes", "HERMES_HOME", ".hermes"),
    ("openhands", "OPENHANDS_CONVERSATIONS_DIR", ".openhands/conversations"),
    ("openhands", "OPENHANDS_PERSISTENCE_DIR", ".openhands"), ("gptme", "XDG_DATA_HOME", ".local/share"),
])
def test_app_overrides(realdata, tmp_path, monkeypatch, app, variable, where):
    moved = tmp_path / "moved"
    shutil.copytree(realdata(f"{app}-home") / where, moved)
    monkeypatch.setenv("SESSIDX_HOME", str(tmp_path / "empty"))
    monkeypatch.setenv(variable, str(moved))
    if variable == "XDG_DATA_HOME":
        monkeypatch.delenv("SESSIDX_HOME")  # SESSIDX_HOME wins over the generic XDG variable
        monkeypatch.setenv("HOME", str(tmp_path / "empty"))
    assert len(build(current_env(), [APPS[app]]).sessions) == 5


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
    assert ids == {e["id"] for e in expected("gptme", home)}
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
