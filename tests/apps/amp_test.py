"""The amp adapter (sessidx/apps/amp.py): its home listed as the CLI wrote it, its resume plans, its
own cases, and the plan against its real binary (npm `@ampcode/cli-linux-x64` 0.0.1790142911): the
resume plan is checked against the help of `amp threads continue` as that binary printed it
(fixtures/realdata/amp-threads-continue-help.txt). Its threads need its server (see amp.py), so the
home they are read from stays synthetic."""

from __future__ import annotations

import pytest

from sessidx.apps import APPS
from sessidx.clihelp import HelpText
from sessidx.config import current_env
from sessidx.model import Session
from tests.apps.realhome_documents import (
    check_a_session_document_over_the_cap_is_still_listed,
    check_app_overrides,
    check_real_home_is_indexed_exactly,
    check_resume_plans,
)
from tests.conftest import REALDATA

THREAD = Session(app="amp", id="T-0814173d-f99f-4c8f-a196-158d73d6ff00", cwd="/home/sam/code2/it's-mine")
REAL_HELP = (REALDATA / "amp-threads-continue-help.txt").read_text()


def test_the_probe_asks_for_the_resume_commands_own_help():
    assert APPS["amp"].help_args == ("threads", "continue", "--help")
    assert REAL_HELP.startswith("Usage: amp threads continue [options] [threads...]")


def test_the_plan_is_threads_continue_as_the_real_help_shows_it():
    plan = APPS["amp"].plan(THREAD, HelpText(REAL_HELP, found=True, version="0.0.1790142911"), False, current_env({}))
    assert plan.argv == ["amp", "threads", "continue", THREAD.id] and plan.refusal is None and not plan.warnings


def test_an_amp_whose_help_lost_threads_continue_is_refused_with_what_it_said():
    help_text = "Usage: amp [options] [command]\n\nCommands:\n  threads  Manage threads\n    list  List all threads\n"
    plan = APPS["amp"].plan(THREAD, HelpText(help_text, found=True), False, current_env({}))
    assert plan.refusal is not None and "no `threads continue`" in plan.refusal and "Manage threads" in plan.refusal


def test_an_amp_not_installed_still_shows_the_command():
    plan = APPS["amp"].plan(THREAD, HelpText("", found=False), False, current_env({}))
    assert plan.argv == ["amp", "threads", "continue", THREAD.id] and plan.refusal is None


def test_real_home_is_indexed_exactly(realdata, tmp_path, monkeypatch):
    check_real_home_is_indexed_exactly(realdata, tmp_path, monkeypatch, "amp")


@pytest.mark.parametrize(("variable", "where"), [
    ("AMP_HOME", ".local/share/amp"),
    ("XDG_DATA_HOME", ".local/share"),
])
def test_app_overrides(realdata, tmp_path, monkeypatch, variable, where):
    check_app_overrides(realdata, tmp_path, monkeypatch, "amp", variable, where)


@pytest.mark.parametrize(("sid", "argv", "refused"), [
    ("T-0814173d-f99f-4c8f-a196-158d73d6ff00", ["amp", "threads", "continue", "T-0814173d-f99f-4c8f-a196-158d73d6ff00"], None),
])
def test_resume_plans(realdata, tmp_path, sid, argv, refused):
    check_resume_plans(realdata, tmp_path, "amp", sid, argv, refused)


def test_a_session_document_over_the_cap_is_still_listed(realdata, tmp_path, monkeypatch):
    check_a_session_document_over_the_cap_is_still_listed(realdata, tmp_path, monkeypatch, "amp")
