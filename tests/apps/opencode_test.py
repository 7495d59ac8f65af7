"""The opencode adapter (sessidx/apps/opencode.py): its home listed as the CLI wrote it, its resume plans, and
its own cases."""

from __future__ import annotations

import pytest

from tests.apps.realhome_stores import check_damaged_database, check_real_home_is_indexed_exactly, check_resume_plans


def test_real_home_is_indexed_exactly(realdata, monkeypatch):
    check_real_home_is_indexed_exactly(realdata, monkeypatch, "opencode")


@pytest.mark.parametrize("sid", [
    "ses_dd6965aeaffe2dtbgU4xU4zour",
])
def test_resume_plans(realdata, sid):
    check_resume_plans(realdata, "opencode", sid)


@pytest.mark.parametrize("how", ["truncated", "junk", "no-columns"])
def test_damaged_database(realdata, tmp_path, how):
    check_damaged_database(realdata, tmp_path, "opencode", how)
