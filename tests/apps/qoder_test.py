"""The qoder adapter (sessidx/apps/qoder.py): its home listed as the CLI wrote it, its resume plans, and
its own cases."""

from __future__ import annotations

import pytest

from tests.apps.synthetic_home import check_resume_plans, check_synthetic_home_is_listed_exactly


def test_synthetic_home_is_listed_exactly(synthetic):
    check_synthetic_home_is_listed_exactly(synthetic, "qoder")


@pytest.mark.parametrize(("index", "argv", "error"), [
    (0, ["qodercli", "--resume", "5b0e8f3a-1d2c-4e6f-8a9b-0c1d2e3f4a5b", "--model", "qoder-ultimate", "--permission-mode", "default"], None),
    (1, ["qodercli", "--resume", "8c9d0e1f-2a3b-4c5d-9e6f-7a8b9c0d1e2f", "--model", "qoder-auto", "--permission-mode", "plan"], None),
])
def test_resume_plans(synthetic, index, argv, error):
    check_resume_plans(synthetic, "qoder", index, argv, error)
