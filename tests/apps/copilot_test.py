"""The copilot adapter (sessidx/apps/copilot.py): its home listed as the CLI wrote it, its resume plans, and
its own cases."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from sessidx.apps import APPS
from sessidx.clihelp import HelpText
from sessidx.config import current_env
from tests.apps.realcli import sessions
from tests.apps.realhome_stores import (
    check_damaged_database,
    check_junk_lines_in_jsonl_stores,
    check_real_home_is_indexed_exactly,
    check_resume_plans,
)
from tests.conftest import run_cli
from tests.stubs import write_stub


def test_real_home_is_indexed_exactly(realdata, monkeypatch):
    check_real_home_is_indexed_exactly(realdata, monkeypatch, "copilot")


@pytest.mark.parametrize("sid", [
    "9be6c79a-a387-48d7-9d12-5fa008fafe8c",
    "dc91ed55-7ad1-47ca-9547-07c54f7b305d",
    "f1897a7f-cf82-46fa-8748-9672f5ab1fe9",
])
def test_resume_plans(realdata, sid):
    check_resume_plans(realdata, "copilot", sid)


def test_permissive_opt_in_per_app(realdata, stub_bin):
    write_stub(stub_bin, "copilot")
    (stub_bin / "copilot").write_text("#!/bin/sh\necho '--resume --model --mode --allow-all'\n")
    env = {"SESSIDX_HOME": str(realdata("copilot-home")), "PATH": f"{stub_bin}:{os.environ['PATH']}"}
    plan = json.loads(run_cli("resume", "dc91ed55", "--json", "--allow-permissive", env=env).stdout)
    assert plan["argv"][-1] == "--allow-all" and plan["held_back"] == []


@pytest.mark.parametrize("how", ["truncated", "junk", "no-columns"])
def test_damaged_database(realdata, tmp_path, how):
    check_damaged_database(realdata, tmp_path, "copilot", how)


def test_junk_lines_in_jsonl_stores(realdata, tmp_path):
    check_junk_lines_in_jsonl_stores(realdata, tmp_path, "copilot")


def test_copilot_autopilot_is_held_back_as_autopilot(home, tmp_path):
    from sessidx.apps.copilot import APP
    from sessidx.clihelp import HelpText
    from sessidx.config import current_env
    from sessidx.model import Session

    s = Session("copilot", "c1", str(tmp_path), None, "t", 1, 1, None, None, "autopilot", None, None)
    plan = APP.plan(s, HelpText("--resume --autopilot --allow-all", found=True, version="1.0.102"), False,
                    current_env())
    assert [h.flag for h in plan.held_back] == ["--autopilot"] and plan.refusal
    opted = APP.plan(s, HelpText("--resume --autopilot --allow-all", found=True), True, current_env())
    assert opted.argv[-1] == "--autopilot" and opted.refusal is None


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
