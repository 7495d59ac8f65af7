"""pi, Hermes Agent, OpenHands CLI and gptme, from homes their real CLIs wrote: the data and checks
their per-app test files share."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sessidx.apps import APPS
from sessidx.config import current_env
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


def pi_line(**record) -> str:
    return json.dumps(record) + "\n"


def check_real_home_is_listed_exactly(realdata, monkeypatch, app):
    home = realdata(f"{app}-home")
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    want = [{f: e[f] for f in (*FIELDS, "updated_ms")} for e in expected(app, home)]
    assert rows(build(current_env(), [APPS[app]]).sessions) == want  # archived ones too, newest first
    listed = [json.loads(line) for line in run_cli("list", "--json", "--app", app).stdout.splitlines()]
    assert [r["id"] for r in listed] == [w["id"] for w in want if not w["archived"]]
    every = [json.loads(line) for line in run_cli("list", "--json", "--archived", "--app", app).stdout.splitlines()]
    assert [r["id"] for r in every] == [w["id"] for w in want]


def check_resume_plans(realdata, app, sid):
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


def check_app_overrides(realdata, tmp_path, monkeypatch, app, variable, where):
    moved = tmp_path / "moved"
    shutil.copytree(realdata(f"{app}-home") / where, moved)
    monkeypatch.setenv("SESSIDX_HOME", str(tmp_path / "empty"))
    monkeypatch.setenv(variable, str(moved))
    if variable == "XDG_DATA_HOME":
        monkeypatch.delenv("SESSIDX_HOME")  # SESSIDX_HOME wins over the generic XDG variable
        monkeypatch.setenv("HOME", str(tmp_path / "empty"))
    assert len(build(current_env(), [APPS[app]]).sessions) == 5
