"""The cline adapter (sessidx/apps/cline.py): its home listed as the CLI wrote it, its resume plans, and
its own cases."""

from __future__ import annotations

import pytest

from tests.apps.realcli import plan_json
from tests.apps.realhome_stores import check_damaged_database, check_real_home_is_indexed_exactly, check_resume_plans


def test_real_home_is_indexed_exactly(realdata, monkeypatch):
    check_real_home_is_indexed_exactly(realdata, monkeypatch, "cline")


@pytest.mark.parametrize("sid", [
    "1795991183296_r7db9",
    "1795991189698_2e5ie",
])
def test_resume_plans(realdata, sid):
    check_resume_plans(realdata, "cline", sid)


@pytest.mark.parametrize("how", ["truncated", "junk", "no-columns"])
def test_damaged_database(realdata, tmp_path, how):
    check_damaged_database(realdata, tmp_path, "cline", how)


def test_cline_carries_a_recorded_auto_approve_false(realdata):
    """Cline 3.0.65 resumes every session with auto-approve-all on (its default) unless given
    `--auto-approve false`; a session started with it keeps `autoApproveTools: false` in its
    manifest, and asked before each tool when resumed with the flag (conformance_login)."""
    home = realdata("cline-home")
    asked = plan_json(home, "cline:1795991195804_6a67p")  # `cline --auto-approve false -m mock-model ...`
    assert asked["argv"] == ["cline", "--id", "1795991195804_6a67p", "--auto-approve", "false", "-m", "mock-model"]
    planned = plan_json(home, "cline:1795991189698_2e5ie")  # `-p`: plan mode, which also records false
    assert planned["argv"][3:] == ["-p", "--auto-approve", "false", "-m", "mock-large"]
    default = plan_json(home, "cline:1795991183296_r7db9")  # started with the default: nothing to carry
    assert "--auto-approve" not in default["argv"]
