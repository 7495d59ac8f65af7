"""Kimi, Vibe, cn, auggie (real CLIs' data) and Crush, Goose, Amp (synthetic, from their source):
each home indexed exactly as its expected.json says, each plan safe, every override honoured."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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


@pytest.mark.parametrize("app", NEW)
def test_real_home_is_indexed_exactly(realdata, tmp_path, monkeypatch, app):
    monkeypatch.setenv("SESSIDX_HOME", str(home_of(app, realdata, tmp_path)))
    want = expected(app)
    assert rows(build(current_env(), [APPS[app]]).sessions) == want  # archived ones too, newest first
    listed = [json.loads(line) for line in run_cli("list", "--json", "--app", app).stdout.splitlines()]
    assert [r["id"] for r in listed] == [w["id"] for w in want if not w["archived"]]


@pytest.mark.parametrize(("app", "variable", "where"), [
    ("kimi", "KIMI_SHARE_DIR", ".kimi"), ("vibe", "VIBE_HOME", ".vibe"),
    ("cn", "CONTINUE_GLOBAL_DIR", ".continue"), ("goose", "XDG_DATA_HOME", ".local/share"),
    ("amp", "AMP_HOME", ".local/share/amp"), ("amp", "XDG_DATA_HOME", ".local/share"),
])
def test_app_overrides(realdata, tmp_path, monkeypatch, app, variable, where):
    moved = tmp_path / "moved"
    shutil.copytree(realdata(f"{app}-home") / where, moved)
    monkeypatch.setenv("SESSIDX_HOME", str(tmp_path / "empty"))
    monkeypatch.setenv(variable, str(moved))
    if variable == "XDG_DATA_HOME":
        monkeypatch.delenv("SESSIDX_HOME")  # SESSIDX_HOME wins over the generic XDG variable
        monkeypatch.setenv("HOME", str(tmp_path / "empty"))
    assert len(build(current_env(), [APPS[app]]).sessions) == len(expected(app))


def test_goose_path_root_and_crush_global_data(realdata, tmp_path, monkeypatch):
    root = tmp_path / "goose-root"
    shutil.copytree(realdata("goose-home") / ".local/share/goose", root / "data")
    monkeypatch.setenv("GOOSE_PATH_ROOT", str(root))
    assert len(build(current_env(), [APPS["goose"]]).sessions) == len(expected("goose"))
    crush_home = home_of("crush", realdata, tmp_path)
    monkeypatch.setenv("CRUSH_GLOBAL_DATA", str(crush_home / ".local/share/crush"))
    assert len(build(current_env(), [APPS["crush"]]).sessions) == len(expected("crush"))


def plan_of(app: str, sid: str, realdata, tmp_path, allow: bool = False) -> dict:
    home = home_of(app, realdata, tmp_path)
    done = run_cli("resume", f"{app}:{sid}", "--json", *(["--allow-permissive"] if allow else []),
                   env={"SESSIDX_HOME": str(home), "PATH": "/nonexistent"})
    return json.loads(done.stdout)


@pytest.mark.parametrize(("app", "sid", "argv", "refused"), [
    ("kimi", "94e83996-ea27-4f50-b1e0-993933a8efd9", ["kimi", "-r", "94e83996-ea27-4f50-b1e0-993933a8efd9"], None),
    ("kimi", "84ef86f3-8909-4cc2-95cd-0756ac6e9361", ["kimi", "-r", "84ef86f3-8909-4cc2-95cd-0756ac6e9361", "--plan"],
     None),
    ("kimi", "afe90848-0af4-45ff-b70d-7d3cf4237052", ["kimi", "-r", "afe90848-0af4-45ff-b70d-7d3cf4237052"],
     "no flag that turns it off"),
    ("vibe", "c84deaa8-6c03-f814-3f11-45b8ee775909",
     ["vibe", "--resume", "c84deaa8-6c03-f814-3f11-45b8ee775909"], None),
    ("vibe", "45fa137e-c92a-0f56-29c0-68d0c8d09a23", ["vibe", "--resume", "45fa137e-c92a-0f56-29c0-68d0c8d09a23"],
     "--agent does not override it"),
    ("cn", "195e05a7-1768-48b0-ba89-15a6df98cde9", ["cn", "ls"], None),
    ("auggie", "2a757696-8930-4e6c-90ee-748bad49f94a",
     ["auggie", "-r", "2a757696-8930-4e6c-90ee-748bad49f94a"], None),
    ("crush", "a459394a-836e-4a4f-a6ae-fc79db728952",
     ["crush", "--cwd", "/home/sam/code2/shop api", "--session", "a459394a-836e-4a4f-a6ae-fc79db728952"], None),
    ("goose", "20261130_2", ["env", "GOOSE_MODE=approve", "goose", "session", "--resume", "--session-id",
                             "20261130_2"], None),
    ("goose", "20261130_1", ["goose", "session", "--resume", "--session-id", "20261130_1"], None),
    ("amp", "T-0814173d-f99f-4c8f-a196-158d73d6ff00",
     ["amp", "threads", "continue", "T-0814173d-f99f-4c8f-a196-158d73d6ff00"], None),
])
def test_resume_plans(realdata, tmp_path, app, sid, argv, refused):
    plan = plan_of(app, sid, realdata, tmp_path)
    assert plan["argv"] == argv
    if refused:
        assert refused in plan["error"] and plan["held_back"]
    else:
        assert plan["error"].startswith("folder no longer exists")  # /home/sam is not on this machine


def test_cn_never_resumes_another_session(realdata, tmp_path):
    plan = plan_of("cn", "195e05a7", realdata, tmp_path)
    assert "--resume" not in plan["argv"]
    assert any("choose 'Scratch notes summary'" in w for w in plan["warnings"])


@pytest.mark.parametrize("allow", [False, True])
def test_auggie_ask_is_not_passed_and_the_preview_says_so(realdata, tmp_path, allow):
    """auggie 0.36.0's TUI ignores --ask (the live run's control: the next turn went out as "Ask
    mode is now disabled"), so the plan does not claim to restore it and says what the resume is."""
    plan = plan_of("auggie", "2a757696", realdata, tmp_path, allow=allow)
    assert "--ask" not in plan["argv"]
    assert any("does not restore" in w and "commands run automatically" in w for w in plan["warnings"])
    other = plan_of("auggie", "008938c5", realdata, tmp_path, allow=allow)  # not in ask mode: no such line
    assert not any("ask mode" in w for w in other["warnings"])


def test_loose_modes_with_the_opt_in(realdata, tmp_path):
    kimi = plan_of("kimi", "afe90848", realdata, tmp_path, allow=True)
    assert kimi["argv"][-1] == "--yolo" and not kimi["error"].startswith("kimi restores")
    vibe = plan_of("vibe", "e333617f", realdata, tmp_path, allow=True)
    assert vibe["argv"][-2:] == ["e333617f-52d1-871c-fb6a-f2d5b92a7b50", "--auto-approve"]


@pytest.mark.parametrize("app", ["cn", "auggie", "amp"])
def test_a_session_document_over_the_cap_is_still_listed(realdata, tmp_path, monkeypatch, app):
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


def test_every_app_is_guarded_and_keys_the_cache():
    """Adding an app is one module and one registry line: the tests' real-home guard and the
    cache key come from what each app declares."""
    from sessidx.apps import HOME_VARS
    from tests.conftest import _REAL_HOMES

    home = os.path.expanduser("~")
    for app in APPS.values():
        assert app.home_dirs or getattr(app, "reads_known_folders", False), app.name  # Aider: in the projects
        assert {os.path.join(home, d) for d in app.home_dirs} <= set(_REAL_HOMES), app.name
        assert set(app.home_vars) <= set(HOME_VARS), app.name
    assert {"KIMI_SHARE_DIR", "VIBE_HOME", "CONTINUE_GLOBAL_DIR", "CRUSH_GLOBAL_DATA", "GOOSE_PATH_ROOT",
            "AMP_HOME"} <= set(HOME_VARS)


def test_the_readme_table_names_every_registered_app():
    readme = (Path(__file__).parent.parent.parent / "README.md").read_text()
    table = readme[readme.index("## Supported apps and what is read"):readme.index("What each shows")]
    for name in APPS:
        assert f"(`{name}`)" in table or f"`{name}`)" in table, name


def test_a_warm_kimi_listing_hashes_nothing(realdata, tmp_path):
    """The folders of Kimi sessions are md5s of their paths: resolved when a session is read,
    not on every key press (hashlib loads OpenSSL)."""
    env = {"SESSIDX_HOME": str(realdata("kimi-home")), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert run_cli("list", env=env).returncode == 0  # cold: reads, hashes, caches
    probe = ("import sys, io; from sessidx.cli import main; sys.stdout = io.StringIO(); main(['list']); "
             "print('hashlib' in sys.modules, file=sys.__stdout__)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
