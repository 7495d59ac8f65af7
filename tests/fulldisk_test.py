"""Output to a full disk (`> /dev/full`): one line on stderr and exit 1 for every command, never
a traceback. (Once: a traceback from every command but search.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from homes import ClaudeSession


def to_full_disk(*args: str) -> subprocess.CompletedProcess[str]:
    """`sessidx ARGS > /dev/full`, through bin/sessidx as the shell runs it."""
    from tests.conftest import ROOT

    with open("/dev/full", "w") as full:
        return subprocess.run([sys.executable, str(ROOT / "bin" / "sessidx"), *args], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=60, env=dict(os.environ))


@pytest.fixture
def session(home: Path, tmp_path: Path) -> ClaudeSession:
    folder = tmp_path / "project"
    folder.mkdir()
    s = ClaudeSession(cwd=str(folder), prompt="The flaky login test on the full disk", mode="default")
    s.write(home)
    return s


COMMANDS = {
    "list": lambda s: ["list"],
    "list --json": lambda s: ["list", "--json"],
    "find": lambda s: ["find", "flaky"],
    "build": lambda s: ["build"],
    "build -v": lambda s: ["build", "-v"],
    "lines": lambda s: ["lines"],
    "lines --stream": lambda s: ["lines", "--stream"],
    "lines --content": lambda s: ["lines", "--content", "flaky"],
    "preview": lambda s: ["preview", "--shell", "bash", f"claude:{s.session_id}"],
    "resume": lambda s: ["resume", s.session_id, "--shell", "bash"],
    "resume --json": lambda s: ["resume", s.session_id, "--json"],
    "search": lambda s: ["search", "flaky"],
    "export": lambda s: ["export", s.session_id],
    "export --json": lambda s: ["export", "--json", s.session_id],
    "init": lambda s: ["init", "bash"],
    "help": lambda s: ["help"],
    "--version": lambda s: ["--version"],
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_says_one_line_on_a_full_disk(session, name):
    from tests.conftest import run_cli

    args = COMMANDS[name](session)
    if name.startswith("lines --content"):
        run_cli("search", "--refresh", check=True)
    works = run_cli(*args)
    assert works.returncode == 0 and works.stdout, (name, works.stderr)  # the command has output to write
    done = to_full_disk(*args)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1, (name, done.stderr)
    lines = [line for line in done.stderr.splitlines() if "cannot write the output" in line]
    assert lines == ["sessidx: cannot write the output (No space left on device)"], done.stderr
