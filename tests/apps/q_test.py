"""The q adapter (sessidx/apps/q.py): its home listed as the CLI wrote it, its resume plans, and
its own cases."""

from __future__ import annotations

import sqlite3

import pytest

from tests.apps.synthetic_home import check_resume_plans, check_synthetic_home_is_listed_exactly
from tests.conftest import run_cli


def test_synthetic_home_is_listed_exactly(synthetic):
    check_synthetic_home_is_listed_exactly(synthetic, "q")


@pytest.mark.parametrize(("index", "argv", "error"), [
    (0, ["q", "chat", "--resume"], None),
    (1, ["q", "chat", "--resume", "--model", "claude-sonnet-4"], None),
])
def test_resume_plans(synthetic, index, argv, error):
    check_resume_plans(synthetic, "q", index, argv, error)


def test_preview_shows_the_conversation(synthetic):
    _, expected = synthetic
    run_cli("list")
    shown = run_cli("preview", f"q:{expected['q'][0]['id']}").stdout
    assert "Done: Fix it" in shown or "Done: Write a terraform" in shown


def test_q_database_holds_the_tokens_the_test_plants(synthetic):
    """The guard above means something only if the table is there."""
    root, _ = synthetic
    conn = sqlite3.connect(root / "home/.local/share/amazon-q/data.sqlite3")
    assert conn.execute("select count(*) from auth_kv").fetchone() == (1,)
