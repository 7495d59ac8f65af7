"""What the real CLIs showed when driven live (issue 17): the data and checks their per-app test files
share."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sessidx.apps import APPS
from sessidx.config import current_env
from sessidx.index import build
from tests.conftest import run_cli

KILO_HELP = ("kilo [project]\n  -m, --model  model to use\n  -s, --session  session id to continue\n"
             "      --agent  agent to use\n")


def sessions(home: Path, monkeypatch: pytest.MonkeyPatch, app: str) -> list:
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    return build(current_env(), [APPS[app]]).sessions


def plan_json(home: Path, ident: str, *flags: str, path: str = "/nonexistent") -> dict:
    done = run_cli("resume", ident, "--json", *flags, env={"SESSIDX_HOME": str(home), "PATH": path})
    return json.loads(done.stdout)


GEMINI_ID = "e3cfe87b-50e0-4f29-9754-a82c1c5c2cf1"
