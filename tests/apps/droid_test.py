"""The droid adapter (sessidx/apps/droid.py): its home listed as the CLI wrote it, its resume plans, and
its own cases."""

from __future__ import annotations

import json

import pytest

from tests.apps.realhome_stores import (
    check_junk_lines_in_jsonl_stores,
    check_real_home_is_indexed_exactly,
    check_resume_plans,
)
from tests.conftest import run_cli


def test_real_home_is_indexed_exactly(realdata, monkeypatch):
    check_real_home_is_indexed_exactly(realdata, monkeypatch, "droid")


@pytest.mark.parametrize("sid", [
    "718dc012-f603-4091-8523-ceec6f521971",
    "f091b5e2-193d-4fd8-ab91-76549522ac38",
])
def test_resume_plans(realdata, sid):
    check_resume_plans(realdata, "droid", sid)


def test_junk_lines_in_jsonl_stores(realdata, tmp_path):
    check_junk_lines_in_jsonl_stores(realdata, tmp_path, "droid")


def test_droid_exec_sessions_say_they_need_the_opt_in(realdata):
    home = realdata("droid-home")
    done = run_cli("preview", "f091b5e2", env={"SESSIDX_HOME": str(home), "PATH": "/nonexistent"})
    assert "droid exec" in done.stdout and "every non-interactive droid session needs the opt-in" in done.stdout
    rows = [json.loads(line) for line in run_cli("list", "--app", "droid", "--json",
                                                 env={"SESSIDX_HOME": str(home)}).stdout.splitlines()]
    assert {r["origin"] for r in rows} == {"exec"}
