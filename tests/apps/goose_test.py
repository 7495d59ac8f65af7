"""The goose adapter (sessidx/apps/goose.py): its home listed as the CLI wrote it, its resume plans, and
its own cases."""

from __future__ import annotations

import pytest

from tests.apps.realhome_documents import check_app_overrides, check_real_home_is_indexed_exactly, check_resume_plans


def test_real_home_is_indexed_exactly(realdata, tmp_path, monkeypatch):
    check_real_home_is_indexed_exactly(realdata, tmp_path, monkeypatch, "goose")


@pytest.mark.parametrize(("variable", "where"), [
    ("XDG_DATA_HOME", ".local/share"),
])
def test_app_overrides(realdata, tmp_path, monkeypatch, variable, where):
    check_app_overrides(realdata, tmp_path, monkeypatch, "goose", variable, where)


@pytest.mark.parametrize(("sid", "argv", "refused"), [
    ("20261130_2", ["env", "GOOSE_MODE=approve", "goose", "session", "--resume", "--session-id", "20261130_2"], None),
    ("20261130_1", ["goose", "session", "--resume", "--session-id", "20261130_1"], None),
])
def test_resume_plans(realdata, tmp_path, sid, argv, refused):
    check_resume_plans(realdata, tmp_path, "goose", sid, argv, refused)
