"""The amp adapter (sessidx/apps/amp.py): its home listed as the CLI wrote it, its resume plans, and
its own cases."""

from __future__ import annotations

import pytest

from tests.apps.realhome_documents import (
    check_a_session_document_over_the_cap_is_still_listed,
    check_app_overrides,
    check_real_home_is_indexed_exactly,
    check_resume_plans,
)


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
