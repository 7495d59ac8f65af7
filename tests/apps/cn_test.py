"""The cn adapter (sessidx/apps/cn.py): its home listed as the CLI wrote it, its resume plans, and
its own cases."""

from __future__ import annotations

import json
import shutil
import time

import pytest

from tests.apps.realcli import plan_json
from tests.apps.realhome_documents import (
    check_a_session_document_over_the_cap_is_still_listed,
    check_app_overrides,
    check_real_home_is_indexed_exactly,
    check_resume_plans,
    plan_of,
)


def test_real_home_is_indexed_exactly(realdata, tmp_path, monkeypatch):
    check_real_home_is_indexed_exactly(realdata, tmp_path, monkeypatch, "cn")


@pytest.mark.parametrize(("variable", "where"), [
    ("CONTINUE_GLOBAL_DIR", ".continue"),
])
def test_app_overrides(realdata, tmp_path, monkeypatch, variable, where):
    check_app_overrides(realdata, tmp_path, monkeypatch, "cn", variable, where)


@pytest.mark.parametrize(("sid", "argv", "refused"), [
    ("195e05a7-1768-48b0-ba89-15a6df98cde9", ["cn", "ls"], None),
])
def test_resume_plans(realdata, tmp_path, sid, argv, refused):
    check_resume_plans(realdata, tmp_path, "cn", sid, argv, refused)


def test_cn_never_resumes_another_session(realdata, tmp_path):
    plan = plan_of("cn", "195e05a7", realdata, tmp_path)
    assert "--resume" not in plan["argv"]
    assert any("choose 'Scratch notes summary'" in w for w in plan["warnings"])


def test_a_session_document_over_the_cap_is_still_listed(realdata, tmp_path, monkeypatch):
    check_a_session_document_over_the_cap_is_still_listed(realdata, tmp_path, monkeypatch, "cn")


def test_cn_names_the_session_as_its_picker_shows_it(realdata, tmp_path):
    home = tmp_path / "cn"
    shutil.copytree(realdata("cn-home"), home)
    doc = json.loads((home / ".continue/sessions/78ca3158-53d2-40dc-a64b-228215907cf1.json").read_text())
    first = next(h["message"]["content"] for h in doc["history"] if h["message"]["role"] == "user")
    first = first if isinstance(first, str) else first[0]["text"]
    plan = plan_json(home, "cn:78ca3158")
    choose = next(w for w in plan["warnings"] if "its picker opens here" in w)
    # cn's picker shows (and sorts by) when a session was made, not when it was last used
    created = time.strftime("%Y-%m-%d %H:%M", time.localtime(1796070946995 / 1000))  # its sessions.json
    assert "'Untitled Session' shown as '" in choose and f"created {created}" in choose
    assert " ".join(first.split())[:30] in choose
    assert any(".onboarding_complete is missing" in w for w in plan["warnings"])
    (home / ".continue/.onboarding_complete").write_text("")
    assert not any("onboarding" in w for w in plan_json(home, "cn:78ca3158")["warnings"])
    titled = plan_json(home, "cn:195e05a7")
    assert any("choose 'Scratch notes summary' (shown as" in w for w in titled["warnings"])
    (home / ".continue/sessions/sessions.json").unlink()  # no index: the file's last use, said as such
    assert any("'Untitled Session' last used 20" in w for w in plan_json(home, "cn:78ca3158")["warnings"])


@pytest.mark.parametrize(("made", "shown"), [
    ((2026, 12, 1, 16, 39), "4:39 PM"), ((2026, 11, 30, 9, 5), "yesterday"), ((2026, 11, 29, 9, 5), "Sunday"),
    ((2026, 11, 28, 9, 5), "Nov 28"), ((2025, 12, 24, 9, 5), "Dec 24, 2025")])
def test_cn_times_read_as_its_picker_prints_them(made, shown):
    from sessidx.apps.cn import _as_cn_shows

    now = time.mktime((2026, 12, 1, 18, 0, 0, 0, 0, -1))  # a Tuesday
    assert _as_cn_shows(int(time.mktime((*made, 0, 0, 0, -1)) * 1000), now) == shown
