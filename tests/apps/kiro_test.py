"""The kiro adapter (sessidx/apps/kiro.py): its home listed as the CLI wrote it, its resume plans, and
its own cases."""

from __future__ import annotations

import pytest

from tests.apps.synthetic_home import check_resume_plans, check_synthetic_home_is_listed_exactly


def test_synthetic_home_is_listed_exactly(synthetic):
    check_synthetic_home_is_listed_exactly(synthetic, "kiro")


@pytest.mark.parametrize(("index", "argv", "error"), [
    (0, ["kiro-cli", "chat", "--resume-id", "sess_01JDX7Q2M4N8P6R3T5V7W9Y1Z3"], None),
    (2, ["kiro-cli", "chat", "--resume-id", "4d3c2b1a-0f9e-4d8c-b7a6-958473625140", "--model", "claude-opus-4"], None),
])
def test_resume_plans(synthetic, index, argv, error):
    check_resume_plans(synthetic, "kiro", index, argv, error)
