"""The auggie adapter (sessidx/apps/auggie.py): its home listed as the CLI wrote it, its resume plans, and
its own cases."""

from __future__ import annotations

import pytest

from tests.apps.realhome_documents import (
    check_a_session_document_over_the_cap_is_still_listed,
    check_real_home_is_indexed_exactly,
    check_resume_plans,
    plan_of,
)


def test_real_home_is_indexed_exactly(realdata, tmp_path, monkeypatch):
    check_real_home_is_indexed_exactly(realdata, tmp_path, monkeypatch, "auggie")


@pytest.mark.parametrize(("sid", "argv", "refused"), [
    ("2a757696-8930-4e6c-90ee-748bad49f94a", ["auggie", "-r", "2a757696-8930-4e6c-90ee-748bad49f94a"], None),
])
def test_resume_plans(realdata, tmp_path, sid, argv, refused):
    check_resume_plans(realdata, tmp_path, "auggie", sid, argv, refused)


@pytest.mark.parametrize("allow", [False, True])
def test_auggie_ask_is_not_passed_and_the_preview_says_so(realdata, tmp_path, allow):
    """auggie 0.36.0's TUI ignores --ask (the live run's control: the next turn went out as "Ask
    mode is now disabled"), so the plan does not claim to restore it and says what the resume is."""
    plan = plan_of("auggie", "2a757696", realdata, tmp_path, allow=allow)
    assert "--ask" not in plan["argv"]
    assert any("does not restore" in w and "commands run automatically" in w for w in plan["warnings"])
    other = plan_of("auggie", "008938c5", realdata, tmp_path, allow=allow)  # not in ask mode: no such line
    assert not any("ask mode" in w for w in other["warnings"])


def test_a_session_document_over_the_cap_is_still_listed(realdata, tmp_path, monkeypatch):
    check_a_session_document_over_the_cap_is_still_listed(realdata, tmp_path, monkeypatch, "auggie")
