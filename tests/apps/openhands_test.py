"""The openhands adapter (sessidx/apps/openhands.py): its home listed as the CLI wrote it, its resume plans, and
its own cases."""

from __future__ import annotations

import pytest

from tests.apps.realhome_agents import check_app_overrides, check_real_home_is_listed_exactly, check_resume_plans


def test_real_home_is_listed_exactly(realdata, monkeypatch):
    check_real_home_is_listed_exactly(realdata, monkeypatch, "openhands")


@pytest.mark.parametrize("sid", [
    "4edae71a-93fa-4d2a-9bb9-1015b5fbb7ae",
    "56f484ee-8a77-4c98-92db-b16d555e00a1",
    "d09e539a-4372-48d5-8ded-5effa2196094",
])
def test_resume_plans(realdata, sid):
    check_resume_plans(realdata, "openhands", sid)


@pytest.mark.parametrize(("variable", "where"), [
    ("OPENHANDS_CONVERSATIONS_DIR", ".openhands/conversations"),
    ("OPENHANDS_PERSISTENCE_DIR", ".openhands"),
])
def test_app_overrides(realdata, tmp_path, monkeypatch, variable, where):
    check_app_overrides(realdata, tmp_path, monkeypatch, "openhands", variable, where)
