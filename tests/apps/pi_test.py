"""The pi adapter (sessidx/apps/pi.py): its home listed as the CLI wrote it, its resume plans, and
its own cases."""

from __future__ import annotations

import shutil

import pytest

from sessidx.apps import APPS
from sessidx.config import current_env
from sessidx.index import build
from tests.apps.realhome_agents import (
    check_app_overrides,
    check_real_home_is_listed_exactly,
    check_resume_plans,
    pi_line,
)


def test_real_home_is_listed_exactly(realdata, monkeypatch):
    check_real_home_is_listed_exactly(realdata, monkeypatch, "pi")


@pytest.mark.parametrize("sid", [
    "01a230d0-3a1a-73cf-ac89-5e898de1862c",
])
def test_resume_plans(realdata, sid):
    check_resume_plans(realdata, "pi", sid)


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


@pytest.mark.parametrize(("variable", "where"), [
    ("PI_CODING_AGENT_DIR", ".pi/agent"),
])
def test_app_overrides(realdata, tmp_path, monkeypatch, variable, where):
    check_app_overrides(realdata, tmp_path, monkeypatch, "pi", variable, where)
