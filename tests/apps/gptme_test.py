"""The gptme adapter (sessidx/apps/gptme.py): its home listed as the CLI wrote it, its resume plans, and
its own cases."""

from __future__ import annotations

import pytest

from tests.apps.realhome_agents import check_app_overrides, check_real_home_is_listed_exactly, check_resume_plans


def test_real_home_is_listed_exactly(realdata, monkeypatch):
    check_real_home_is_listed_exactly(realdata, monkeypatch, "gptme")


@pytest.mark.parametrize("sid", [
    "2026-12-01-singing-sad-elephant",
    "2026-12-01-sprinting-blue-cat",
])
def test_resume_plans(realdata, sid):
    check_resume_plans(realdata, "gptme", sid)


@pytest.mark.parametrize(("variable", "where"), [
    ("XDG_DATA_HOME", ".local/share"),
])
def test_app_overrides(realdata, tmp_path, monkeypatch, variable, where):
    check_app_overrides(realdata, tmp_path, monkeypatch, "gptme", variable, where)
