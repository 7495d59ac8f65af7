"""The cursor adapter (sessidx/apps/cursor.py): its home listed as the CLI wrote it, its resume plans, and
its own cases."""

from __future__ import annotations

import pytest

from tests.apps.synthetic_home import check_resume_plans, check_synthetic_home_is_listed_exactly


def test_synthetic_home_is_listed_exactly(synthetic):
    check_synthetic_home_is_listed_exactly(synthetic, "cursor")


@pytest.mark.parametrize(("index", "argv", "error"), [
    (0, ["cursor-agent", "--resume", "6f1c1c8e-3b1a-4c55-9a57-1b0a2f3e4d01", "--model", "gpt-5"], None),
    (1, ["cursor-agent", "--resume", "0b7d5e2a-8c3f-4e1d-b6a9-2c4d5e6f7a02", "--model", "claude-4.5-sonnet", "--mode", "plan"], None),
    (2, ["cursor-agent", "--resume", "9e8d7c6b-5a49-4382-9170-a1b2c3d4e503"], "not known to be as strict"),
])
def test_resume_plans(synthetic, index, argv, error):
    check_resume_plans(synthetic, "cursor", index, argv, error)
