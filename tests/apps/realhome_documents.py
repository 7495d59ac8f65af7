"""Kimi, Vibe, cn, auggie (real CLIs' data) and Crush, Goose, Amp (synthetic, from their source): the
data and checks their per-app test files share."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sessidx.apps import APPS
from sessidx.config import current_env
from sessidx.index import build
from tests.conftest import REALDATA, run_cli

NEW = ["kimi", "vibe", "cn", "auggie", "crush", "goose", "amp"]


FIELDS = ("app", "id", "cwd", "title", "branch", "model", "approval", "archived")


def expected(app: str) -> list[dict]:
    return json.loads((REALDATA / f"{app}-expected.json").read_text())


def home_of(app: str, realdata, tmp_path: Path) -> Path:
    """The app's real home; Crush's is rooted at `/` (projects.json names absolute data folders),
    so its project list is pointed at the extracted copies, keeping each project's `path`."""
    home = realdata(f"{app}-home")
    if app != "crush":
        return home
    root = tmp_path / "crush-root"
    shutil.copytree(home, root)
    listing = root / "home/sam/.local/share/crush/projects.json"
    doc = json.loads(listing.read_text())
    for project in doc["projects"]:
        project["data_dir"] = str(root) + project["data_dir"]
    listing.write_text(json.dumps(doc))
    return root / "home/sam"


def rows(sessions) -> list[dict]:
    return [{**{f: getattr(s, f) for f in FIELDS}, "updated_ms": s.mtime} for s in sessions]


def plan_of(app: str, sid: str, realdata, tmp_path, allow: bool = False) -> dict:
    home = home_of(app, realdata, tmp_path)
    done = run_cli("resume", f"{app}:{sid}", "--json", *(["--allow-permissive"] if allow else []),
                   env={"SESSIDX_HOME": str(home), "PATH": "/nonexistent"})
    return json.loads(done.stdout)


def check_real_home_is_indexed_exactly(realdata, tmp_path, monkeypatch, app):
    monkeypatch.setenv("SESSIDX_HOME", str(home_of(app, realdata, tmp_path)))
    want = expected(app)
    assert rows(build(current_env(), [APPS[app]]).sessions) == want  # archived ones too, newest first
    listed = [json.loads(line) for line in run_cli("list", "--json", "--app", app).stdout.splitlines()]
    assert [r["id"] for r in listed] == [w["id"] for w in want if not w["archived"]]


def check_app_overrides(realdata, tmp_path, monkeypatch, app, variable, where):
    moved = tmp_path / "moved"
    shutil.copytree(realdata(f"{app}-home") / where, moved)
    monkeypatch.setenv("SESSIDX_HOME", str(tmp_path / "empty"))
    monkeypatch.setenv(variable, str(moved))
    if variable == "XDG_DATA_HOME":
        monkeypatch.delenv("SESSIDX_HOME")  # SESSIDX_HOME wins over the generic XDG variable
        monkeypatch.setenv("HOME", str(tmp_path / "empty"))
    assert len(build(current_env(), [APPS[app]]).sessions) == len(expected(app))


def check_resume_plans(realdata, tmp_path, app, sid, argv, refused):
    plan = plan_of(app, sid, realdata, tmp_path)
    assert plan["argv"] == argv
    if refused:
        assert refused in plan["error"] and plan["held_back"]
    else:
        assert plan["error"].startswith("folder no longer exists")  # /home/sam is not on this machine


def check_a_session_document_over_the_cap_is_still_listed(realdata, tmp_path, monkeypatch, app):
    """One JSON document per session grows with the conversation: past 4 MiB it is not parsed
    whole, and its id, folder and title still come from its two ends."""
    home = tmp_path / "big"
    shutil.copytree(realdata(f"{app}-home"), home)
    biggest = max((p for p in home.rglob("*.json") if p.name != "sessions.json"), key=lambda p: p.stat().st_size)
    doc = json.loads(biggest.read_text())
    history = {"cn": "history", "auggie": "chatHistory", "amp": "messages"}[app]
    doc[history] = doc[history] + [{"padding": "x" * 1024}] * 5000
    biggest.write_text(json.dumps(doc))
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    ids = {s.id for s in build(current_env(), [APPS[app]]).sessions}
    assert ids == {e["id"] for e in expected(app)}
