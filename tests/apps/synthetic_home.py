"""Cursor, Kiro, Amazon Q, Qoder and Aider, from the home fixtures/synthetic_apps.py builds: the data
and checks their per-app test files share."""

from __future__ import annotations

import json

from sessidx.apps import APPS
from sessidx.config import current_env
from sessidx.index import build
from tests.conftest import run_cli

APPS_HERE = ["cursor", "kiro", "q", "qoder", "aider"]


FIELDS = ("app", "id", "cwd", "title", "branch", "model", "approval", "archived")


def rows(sessions) -> list[dict]:
    return [{**{f: getattr(s, f) for f in FIELDS}, "updated_ms": s.mtime} for s in sessions]


def plan(sid: str, app: str, allow: bool = False) -> dict:
    run_cli("list")
    done = run_cli("resume", f"{app}:{sid}", "--json", *(["--allow-permissive"] if allow else []),
                   env={"PATH": "/nonexistent"})
    return json.loads(done.stdout)


TRACER = """
import sqlite3, sys
real_connect = sqlite3.connect
class Traced(sqlite3.Connection):
    def execute(self, sql, *a):
        if "auth_kv" in sql.lower():
            print("AUTH READ", file=sys.stderr)
        return super().execute(sql, *a)
def connect(database, *a, **k):
    if "amazon-q" in str(database) or "kiro-cli" in str(database):
        print("OPEN", database, file=sys.stderr)
    k["factory"] = Traced
    return real_connect(database, *a, **k)
sqlite3.connect = connect
import shutil
real_copy = shutil.copyfile
def copyfile(src, dst, *a, **k):
    if "data.sqlite3" in str(src):
        print("COPIED", src, file=sys.stderr)
    return real_copy(src, dst, *a, **k)
shutil.copyfile = copyfile
from sessidx.cli import main
sys.argv = ["sessidx", *sys.argv[1:]]
main()
"""


def check_synthetic_home_is_listed_exactly(synthetic, app):
    _, expected = synthetic
    every = build(current_env(), APPS.values())
    assert rows([s for s in every.sessions if s.app == app]) == expected[app]


def check_resume_plans(synthetic, app, index, argv, error):
    _, expected = synthetic
    row = expected[app][index]
    got = plan(row["id"], app)
    assert got["argv"] == argv
    assert got["cwd"] == row["cwd"]
    if error:
        assert error in got["error"] and not got["ok"]
    else:
        assert got["error"] is None and got["ok"], got
