"""The qwen adapter (sessidx/apps/qwen.py): its home listed as the CLI wrote it, its resume plans, and
its own cases."""

from __future__ import annotations

import pytest

from tests.apps.realhome_stores import (
    check_junk_lines_in_jsonl_stores,
    check_real_home_is_indexed_exactly,
    check_resume_plans,
)


def test_real_home_is_indexed_exactly(realdata, monkeypatch):
    check_real_home_is_indexed_exactly(realdata, monkeypatch, "qwen")


@pytest.mark.parametrize("sid", [
    "74ae506b-4b3c-49a5-9929-21313abcaab4",
])
def test_resume_plans(realdata, sid):
    check_resume_plans(realdata, "qwen", sid)


def test_junk_lines_in_jsonl_stores(realdata, tmp_path):
    check_junk_lines_in_jsonl_stores(realdata, tmp_path, "qwen")
