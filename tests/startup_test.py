"""`list` runs on every key press: it must not import what only planning or parsing needs.

This is the start-up budget in a form that cannot flake: which modules a warm `list` loads.
(`make bench` measures the time.)"""

from __future__ import annotations

import subprocess
import sys

from homes import ClaudeSession

HEAVY = {"json", "hashlib", "sqlite3", "subprocess", "dataclasses", "typing", "pathlib", "zlib", "tempfile",
         "shutil", "datetime", "inspect", "importlib.util", "shlex", "termios", "argparse", "re", "enum",
         "functools", "collections", "types"}

# Run the way bin/sessidx runs, so only what sessidx itself imports is counted.
PROBE = """
import io, sys
from sessidx.cli import main
sys.stdout = io.StringIO()
main(sys.argv[1:])
sys.stdout = sys.__stdout__
print(" ".join(sorted(set(sys.modules))))
"""


def loaded_by(*args: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_warm_list_imports_nothing_heavy(home, tmp_path):
    for i in range(3):
        ClaudeSession(cwd=f"/w/{i}").write(home)
    assert loaded_by("build")  # the cache is warm now
    assert loaded_by("list") & HEAVY == set()
    assert loaded_by("lines") & HEAVY == set()


def test_the_guard_can_fail(home):
    """`list --json` needs json: the probe sees it, so the assertion above is not vacuous."""
    ClaudeSession(cwd="/w").write(home)
    assert "json" in loaded_by("list", "--json")


def test_the_launcher_imports_nothing_heavy_either(home):
    """bin/sessidx, the installed command: `-X importtime` lists every module it loads."""
    ClaudeSession(cwd="/w").write(home)
    assert loaded_by("build")  # the cache is warm now
    from tests.conftest import ROOT

    done = subprocess.run([sys.executable, "-X", "importtime", str(ROOT / "bin" / "sessidx"), "list"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.count("\n") == 1
    loaded = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "sessidx.commands" in loaded  # the probe sees sessidx's own imports
    assert loaded & HEAVY == set()
