"""The kimi adapter (sessidx/apps/kimi.py): its home listed as the CLI wrote it, its resume plans, and
its own cases."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.apps.realhome_documents import check_app_overrides, check_real_home_is_indexed_exactly, check_resume_plans
from tests.conftest import run_cli


def test_real_home_is_indexed_exactly(realdata, tmp_path, monkeypatch):
    check_real_home_is_indexed_exactly(realdata, tmp_path, monkeypatch, "kimi")


@pytest.mark.parametrize(("variable", "where"), [
    ("KIMI_SHARE_DIR", ".kimi"),
])
def test_app_overrides(realdata, tmp_path, monkeypatch, variable, where):
    check_app_overrides(realdata, tmp_path, monkeypatch, "kimi", variable, where)


@pytest.mark.parametrize(("sid", "argv", "refused"), [
    ("94e83996-ea27-4f50-b1e0-993933a8efd9", ["kimi", "-r", "94e83996-ea27-4f50-b1e0-993933a8efd9"], None),
    ("84ef86f3-8909-4cc2-95cd-0756ac6e9361", ["kimi", "-r", "84ef86f3-8909-4cc2-95cd-0756ac6e9361", "--plan"], None),
    ("afe90848-0af4-45ff-b70d-7d3cf4237052", ["kimi", "-r", "afe90848-0af4-45ff-b70d-7d3cf4237052"], "no flag that turns it off"),
])
def test_resume_plans(realdata, tmp_path, sid, argv, refused):
    check_resume_plans(realdata, tmp_path, "kimi", sid, argv, refused)


def test_a_warm_kimi_listing_hashes_nothing(realdata, tmp_path):
    """The folders of Kimi sessions are md5s of their paths: resolved when a session is read,
    not on every key press (hashlib loads OpenSSL)."""
    env = {"SESSIDX_HOME": str(realdata("kimi-home")), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert run_cli("list", env=env).returncode == 0  # cold: reads, hashes, caches
    probe = ("import sys, io; from sessidx.cli import main; sys.stdout = io.StringIO(); main(['list']); "
             "print('hashlib' in sys.modules, file=sys.__stdout__)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
