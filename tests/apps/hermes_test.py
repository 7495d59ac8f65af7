"""The hermes adapter (sessidx/apps/hermes.py): its home listed as the CLI wrote it, its resume plans, and
its own cases."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from sessidx.apps import APPS
from sessidx.config import current_env
from sessidx.index import build
from tests.apps.realhome_agents import check_app_overrides, check_real_home_is_listed_exactly, check_resume_plans


def test_real_home_is_listed_exactly(realdata, monkeypatch):
    check_real_home_is_listed_exactly(realdata, monkeypatch, "hermes")


@pytest.mark.parametrize("sid", [
    "20261201_085608_b4a87b",
    "20261201_085653_0de498",
])
def test_resume_plans(realdata, sid):
    check_resume_plans(realdata, "hermes", sid)


def test_hermes_lists_as_hermes_does(realdata, tmp_path, monkeypatch):
    """Sub-agent runs and compression continuations hidden, /branch children shown, and a
    compression root shown as its live tip."""
    home = tmp_path / "hermes"
    shutil.copytree(realdata("hermes-home"), home)
    conn = sqlite3.connect(home / ".hermes/state.db")
    add = ("INSERT INTO sessions (id, source, model, model_config, parent_session_id, started_at, ended_at, end_reason, "
           "cwd, title, archived) VALUES (?, 'cli', 'm', ?, ?, ?, ?, ?, '/w', ?, 0)")
    conn.execute(add, ("20261201_090000_aaaaaa", "{}", None, 1796116000.0, 1796116100.0, "compression", "Old root"))
    conn.execute(add, ("20261201_090140_bbbbbb", "{}", "20261201_090000_aaaaaa", 1796116100.0, None, None, "Live tip"))
    conn.execute(add, ("20261201_090200_cccccc", '{"_delegate_from": "x"}', "20261201_085608_b4a87b", 1796116120.0,
                       None, None, "A sub-agent"))
    conn.execute(add, ("20261201_090300_dddddd", '{"_branched_from": "20261201_085608_b4a87b"}',
                       "20261201_085608_b4a87b", 1796116180.0, None, None, "A branch"))
    conn.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', 'x', ?)",
                 ("20261201_090140_bbbbbb", 1796116200.5))
    conn.commit()
    conn.close()
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    found = {s.id: s for s in build(current_env(), [APPS["hermes"]]).sessions}
    assert "20261201_090000_aaaaaa" not in found and "20261201_090200_cccccc" not in found
    assert found["20261201_090140_bbbbbb"].title == "Live tip" and found["20261201_090140_bbbbbb"].mtime == 1796116200500
    assert found["20261201_090300_dddddd"].title == "A branch"
    assert len(found) == 7


@pytest.mark.parametrize(("variable", "where"), [
    ("HERMES_HOME", ".hermes"),
])
def test_app_overrides(realdata, tmp_path, monkeypatch, variable, where):
    check_app_overrides(realdata, tmp_path, monkeypatch, "hermes", variable, where)
