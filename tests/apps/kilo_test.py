"""The kilo adapter (sessidx/apps/kilo.py): its home listed as the CLI wrote it, its resume plans, and
its own cases."""

from __future__ import annotations

import json
import shutil
import sqlite3

from sessidx.apps import APPS
from sessidx.clihelp import HelpText
from sessidx.config import current_env
from sessidx.index import build
from tests.apps.realcli import KILO_HELP, sessions
from tests.conftest import run_cli


def test_kilo_reads_its_own_database(realdata, tmp_path, monkeypatch):
    home = tmp_path / "k"
    (home / ".local/share/kilo").mkdir(parents=True)
    src = realdata("opencode-home") / ".local/share/opencode"
    for f in src.iterdir():
        shutil.copy(f, home / ".local/share/kilo" / f.name.replace("opencode", "kilo"))
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    sessions = build(current_env(), APPS.values()).sessions
    assert {s.app for s in sessions} == {"kilo"} and len(sessions) == 3
    plan = json.loads(run_cli("resume", "kilo:ses_dd6965aeaffe2dtbgU4xU4zour", "--json",
                              env={"SESSIDX_HOME": str(home)}).stdout)
    assert plan["argv"][:3] == ["kilo", "--session", "ses_dd6965aeaffe2dtbgU4xU4zour"]


def test_kilo_carries_a_recorded_plan_agent(realdata, tmp_path, monkeypatch):
    """Kilo 7.7.9 opens `--session ID` in Code unless given `--agent plan`. Kilo's store is
    opencode's (same schema): the real opencode database, one session switched to Plan."""
    home = tmp_path / "kilo-home"
    shutil.copytree(realdata("opencode-home") / ".local/share/opencode", home / ".local/share/kilo")
    db = home / ".local/share/kilo/kilo.db"
    (home / ".local/share/kilo/opencode.db").rename(db)
    for suffix in ("-wal", "-shm"):
        if (home / f".local/share/kilo/opencode.db{suffix}").exists():
            (home / f".local/share/kilo/opencode.db{suffix}").rename(f"{db}{suffix}")
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE session SET agent = 'plan' WHERE id = 'ses_dd6965aeaffe2dtbgU4xU4zour'")
        conn.execute("UPDATE session SET agent = 'yolo-helper' WHERE id = 'ses_dd6961556ffeEywRsAlqqWjnHR'")
    found = {s.id: s for s in sessions(home, monkeypatch, "kilo")}
    kilo = APPS["kilo"]
    help_text = HelpText(KILO_HELP, found=True, version="7.7.9")
    planned = kilo.plan(found["ses_dd6965aeaffe2dtbgU4xU4zour"], help_text, False, current_env())
    assert planned.argv[-2:] == ["--agent", "plan"] and planned.refusal is None
    built = kilo.plan(found["ses_dd696378cffexsNtjXerLT0P3y"], help_text, False, current_env())
    assert "--agent" not in built.argv  # the default: nothing to carry
    custom = kilo.plan(found["ses_dd6961556ffeEywRsAlqqWjnHR"], help_text, False, current_env())
    assert "--agent" not in custom.argv and any("'yolo-helper' is not a built-in" in w for w in custom.warnings)
    older = kilo.plan(found["ses_dd6965aeaffe2dtbgU4xU4zour"], HelpText("-s --session -m", found=True), False,
                      current_env())
    assert "--agent" not in older.argv  # a build without the flag gets none
