"""The crush adapter (sessidx/apps/crush.py): its home listed as the CLI wrote it, its resume plans, and
its own cases."""

from __future__ import annotations

import pytest

from tests.apps.realhome_documents import check_real_home_is_indexed_exactly, check_resume_plans


def test_real_home_is_indexed_exactly(realdata, tmp_path, monkeypatch):
    check_real_home_is_indexed_exactly(realdata, tmp_path, monkeypatch, "crush")


@pytest.mark.parametrize(("sid", "argv", "refused"), [
    ("a459394a-836e-4a4f-a6ae-fc79db728952", ["crush", "--cwd", "/home/sam/code2/shop api", "--session", "a459394a-836e-4a4f-a6ae-fc79db728952"], None),
])
def test_resume_plans(realdata, tmp_path, sid, argv, refused):
    check_resume_plans(realdata, tmp_path, "crush", sid, argv, refused)
