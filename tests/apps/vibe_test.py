"""The vibe adapter (sessidx/apps/vibe.py): its home listed as the CLI wrote it, its resume plans, and
its own cases."""

from __future__ import annotations

import pytest

from tests.apps.realcli import plan_json
from tests.apps.realhome_documents import check_app_overrides, check_real_home_is_indexed_exactly, check_resume_plans


def test_real_home_is_indexed_exactly(realdata, tmp_path, monkeypatch):
    check_real_home_is_indexed_exactly(realdata, tmp_path, monkeypatch, "vibe")


@pytest.mark.parametrize(("variable", "where"), [
    ("VIBE_HOME", ".vibe"),
])
def test_app_overrides(realdata, tmp_path, monkeypatch, variable, where):
    check_app_overrides(realdata, tmp_path, monkeypatch, "vibe", variable, where)


@pytest.mark.parametrize(("sid", "argv", "refused"), [
    ("c84deaa8-6c03-f814-3f11-45b8ee775909", ["vibe", "--resume", "c84deaa8-6c03-f814-3f11-45b8ee775909"], None),
    ("45fa137e-c92a-0f56-29c0-68d0c8d09a23", ["vibe", "--resume", "45fa137e-c92a-0f56-29c0-68d0c8d09a23"], "--agent does not override it"),
])
def test_resume_plans(realdata, tmp_path, sid, argv, refused):
    check_resume_plans(realdata, tmp_path, "vibe", sid, argv, refused)


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
