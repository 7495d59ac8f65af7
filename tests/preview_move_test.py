"""Issue 18: the preview after a move in the picker, on every arrow key. Its fast path reads
one session from the lookup after the index, loads one app module, and answers without `re`,
`json`, `shutil` or `subprocess`; each piece that replaced one of those agrees with it."""

from __future__ import annotations

import marshal
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from homes import ClaudeSession
from hypothesis import given
from hypothesis import strategies as st

from sessidx import index
from sessidx.apps import APPS, HOME_VARS
from sessidx.apps.base import UUID
from sessidx.clihelp import HelpText, which
from sessidx.config import current_env
from sessidx.index import build, cache_path, cached_session, id_fits
from sessidx.quoting import _bare
from sessidx.resume import current_branch


def test_home_vars_are_every_apps_own():
    """Written out in the registry so that finding the cache loads no app: a new app's
    variable must be added there, or its homes would share one cache file."""
    assert sorted({var for app in APPS.values() for var in app.home_vars}) == HOME_VARS


def test_the_branch_is_read_as_git_says_it(tmp_path):
    (tmp_path / "gitconfig").write_text("")

    def _git(*args: str | Path) -> str:
        done = subprocess.run(["git", *map(str, args)], capture_output=True, text=True,
                              env={**os.environ, "GIT_CONFIG_GLOBAL": str(tmp_path / "gitconfig"),
                                   "GIT_CONFIG_NOSYSTEM": "1"})
        return done.stdout.strip() if done.returncode == 0 else ""

    repo = tmp_path / "repo"
    _git("init", "-q", "-b", "unborn", repo)
    cases = [repo, tmp_path]  # a branch with no commits yet; outside git
    (repo / "sub").mkdir()
    cases.append(repo / "sub")
    _git("-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "one")
    _git("-C", repo, "worktree", "add", "-q", "-b", "feature/x", tmp_path / "wt")
    cases.append(tmp_path / "wt")  # a worktree: `.git` is a file
    detached = tmp_path / "detached"
    _git("-C", repo, "worktree", "add", "-q", "--detach", detached)
    cases.append(detached)
    for folder in cases:
        said = _git("-C", folder, "symbolic-ref", "--short", "-q", "HEAD") or None
        assert current_branch(str(folder)) == said, folder
    assert current_branch(str(tmp_path / "wt")) == "feature/x"


@given(st.text(alphabet="0123456789abcdefABCDEFg-\n", max_size=40))
def test_a_uuid_is_checked_as_its_regex_checks_it(ident):
    assert id_fits(UUID, ident) == (re.fullmatch(UUID, ident) is not None)


def test_a_uuid_fits():
    assert id_fits(UUID, "0b4ad1b6-9f27-4cb1-8a6e-7d7a0f3c1e55")
    assert not id_fits(UUID, "0b4ad1b6-9f27-4cb1-8a6e-7d7a0f3c1e55\n")
    assert not id_fits(UUID, "--dangerously-skip-permissions")


@given(st.text(alphabet="-_a-zA-Z09 .=é\n", max_size=30), st.text(alphabet="-_az09", max_size=6))
def test_a_flag_is_found_as_the_regex_found_it(text, word):
    regex = re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None
    assert HelpText(text, found=True)._word(word) == regex


def test_the_version_compares_as_before():
    assert HelpText("x", found=True, version="2.1.332").version_at_least(2, 1, 300)
    assert HelpText("x", found=True, version="1.0.128").version_at_least(2, 0) is False
    assert HelpText("x", found=True, version=None).version_at_least(1) is None


_OLD_SAFE = re.compile(r"[A-Za-z0-9_@+:,./-][A-Za-z0-9_@%+=:,./-]*")


@given(st.text(max_size=12) | st.text(alphabet="az09_@%+=:,./-$ \n'", max_size=12))
def test_bare_words_are_the_regexs(word):
    assert _bare(word) == (bool(word) and _OLD_SAFE.fullmatch(word) is not None)


def test_which_finds_what_shutil_finds(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    (tmp_path / "b" / "tool").write_text("#!/bin/sh\n")
    (tmp_path / "b" / "tool").chmod(0o755)
    (tmp_path / "a" / "tool").write_text("not runnable")
    (tmp_path / "a" / "dir").mkdir()
    path = f"{tmp_path / 'a'}:{tmp_path / 'b'}::{tmp_path / 'a'}"
    for program in ("tool", "dir", "missing", str(tmp_path / "b" / "tool"), str(tmp_path / "a" / "tool")):
        assert which(program, path) == shutil.which(program, path=path), program
    assert which("tool", "") is None and shutil.which("tool", path="") is None


@pytest.fixture
def many(home: Path) -> list[str]:
    ids = []
    for i in range(150):
        session = ClaudeSession(cwd=f"/w/{i % 7}", prompt=f"task {i}")
        session.write(home)
        ids.append(f"claude:{session.session_id}")
    build(current_env(), APPS.values())
    return ids


def test_every_session_is_found_through_the_lookup(many, monkeypatch):
    env = current_env()
    listed = {f"{s.app}:{s.id}": s for s in build(env, APPS.values()).sessions}
    monkeypatch.setattr(index, "_read_cache", None)  # the lookup answers: the index is not read whole
    for key in many:
        found = cached_session(env, key)
        assert found is not None and tuple(found) == tuple(listed[key])
    assert cached_session(env, "claude:0b4ad1b6-9f27-4cb1-8a6e-7d7a0f3c1e55") is None  # not in the index
    assert cached_session(env, "codex:" + many[0].split(":")[1]) is None  # another app's


@pytest.mark.parametrize("damage", ["no lookup", "torn header", "junk bucket", "other version"])
def test_a_cache_without_a_usable_lookup_is_read_whole(many, damage):
    env = current_env()
    path = Path(cache_path(env) or "")
    data = path.read_bytes()
    whole = marshal.dumps(marshal.loads(data))  # the index object alone, as an older cache file holds
    if damage == "no lookup":
        data = whole
    elif damage == "torn header":
        data = data[:-30] + b"\xff" * 12 + data[-18:]
    elif damage == "junk bucket":
        data = whole + b"\x00" * (len(data) - len(whole) - 30) + data[-30:]
    else:
        header = marshal.dumps(("9/old", [len(data)]))
        data = whole + header + b"sessidx-lookup" + len(header).to_bytes(4, "little")
    path.write_bytes(data)
    for key in many[:5]:
        found = cached_session(env, key)
        assert found is not None and f"{found.app}:{found.id}" == key, damage
