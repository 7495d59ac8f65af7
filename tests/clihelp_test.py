"""The CLI probe on a slow machine: one probe per binary, off the key press, a limit fit for load;
and a CLI whose help lacks its own resume flag is refused with what it said."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from sessidx import clihelp
from tests.conftest import run_cli
from tests.stubs import HELP

QWEN_ID = "74ae506b-4b3c-49a5-9929-21313abcaab4"
SLOW = 12  # seconds: more than the old 10 s limit; `gemini --help` took 7 s on a loaded machine


def slow_stub(folder: Path, program: str, help_text: str, seconds: float) -> Path:
    """`program --help` logs its start, sleeps, prints `help_text`, logs its end."""
    log = folder / f"{program}.log"
    script = folder / program
    script.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do case "$a" in\n'
        f"  --help) echo started >> '{log}'; sleep {seconds}; cat <<'HELP'\n{help_text}HELP\n"
        f"  echo finished >> '{log}'; exit 0;;\n"
        "  --version) echo 0.24.4; exit 0;; esac; done\n"
        "echo ran\n")
    script.chmod(0o755)
    return log


@pytest.mark.slow  # a help that takes SLOW seconds, waited out
def test_a_slow_help_costs_neither_the_key_press_nor_the_model(realdata, stub_bin):
    log = slow_stub(stub_bin, "qwen", HELP["qwen"], SLOW)
    env = {"SESSIDX_HOME": str(realdata("qwen-home")), "PATH": f"{stub_bin}:{os.environ['PATH']}"}
    shown = run_cli("preview", f"qwen:{QWEN_ID}", env=env)
    assert shown.returncode == 0, shown.stderr
    assert "still being read" in shown.stdout
    # The preview answered before the probe it started in the background had even begun to sleep.
    assert not log.exists() or "finished" not in log.read_text()
    deadline = time.monotonic() + 60
    while not log.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert log.read_text().split() == ["started"]
    plan = json.loads(run_cli("resume", f"qwen:{QWEN_ID}", "--json", env=env).stdout)
    # Enter waited for the probe already running rather than starting a second one, and the
    # model is carried on this first resume.
    assert plan["argv"] == ["qwen", "--resume", QWEN_ID, "-m", "mock-model"], plan
    assert log.read_text().split() == ["started", "finished"]
    again = json.loads(run_cli("resume", f"qwen:{QWEN_ID}", "--json", env=env).stdout)
    assert again["argv"] == plan["argv"] and log.read_text().split() == ["started", "finished"]  # cached


def test_enter_probes_itself_when_no_probe_runs(realdata, stub_bin, tmp_path):
    """A marker left by a probe that died names a dead process: it holds nobody up."""
    log = slow_stub(stub_bin, "qwen", HELP["qwen"], 0)
    cache = tmp_path / "cache" / "sessidx"
    cache.mkdir(parents=True)
    binary = str(stub_bin / "qwen")
    key = clihelp._key(binary, ("--help",))
    assert key is not None
    marker = clihelp._marker_path(str(cache), key)
    assert marker is not None
    Path(marker).write_text("999999999")  # no such process
    found = clihelp.learn("qwen", ("--help",), str(cache), str(stub_bin))
    assert found.has("--resume") and log.read_text().split() == ["started", "finished"]
    assert not os.path.exists(marker)


def test_an_app_whose_help_is_slower_than_the_limit_gets_its_own(stub_bin, tmp_path, monkeypatch):
    """OpenHands 1.16.0's --help took over 30 s under load: under the common limit it was never
    cached, and every Enter waited for it again."""
    from sessidx.apps import APPS

    monkeypatch.setattr(clihelp, "HELP_TIMEOUT", 1.0)
    log = slow_stub(stub_bin, "openhands", "  --resume [RESUME]\n  --always-approve, --yolo\n", 2)
    cache = str(tmp_path / "cache")
    os.makedirs(cache)
    assert not clihelp.learn("openhands", ("--help",), cache, str(stub_bin)).known  # the common limit: too short
    assert clihelp.learn("openhands", ("--help",), cache, str(stub_bin), timeout=6).has("--always-approve")
    again = clihelp.learn("openhands", ("--help",), cache, str(stub_bin))
    assert again.has("--resume") and log.read_text().split().count("finished") == 1  # cached
    assert getattr(APPS["openhands"], "help_timeout", 0) >= 120  # what it took on a loaded 2-core machine


def test_the_limit_fits_a_loaded_machine():
    assert clihelp.HELP_TIMEOUT >= 3 * 7  # three times the slowest `--help` seen under load


# What kimi-cli 1.52.0 (PyPI) prints for `--help`, exit 0.
KIMI_STUB_SAYS = ("kimi-cli is no longer maintained. Please use the new Kimi Code CLI. Install: "
                  "curl -fsSL https://code.kimi.com/kimi-code/install.sh | bash\n")


def test_a_cli_whose_help_lacks_its_resume_flag_is_refused(realdata, stub_bin):
    """kimi-cli 1.52.0 prints a deprecation notice for every command and exits 0."""
    slow_stub(stub_bin, "kimi", KIMI_STUB_SAYS, 0)
    home = realdata("kimi-home")
    sid = next(p.name for p in (home / ".kimi/sessions").glob("*/*") if p.is_dir())
    env = {"SESSIDX_HOME": str(home), "PATH": f"{stub_bin}:{os.environ['PATH']}"}
    plan = json.loads(run_cli("resume", f"kimi:{sid}", "--json", env=env).stdout)
    assert plan["ok"] is False
    assert "cannot resume: its help has no -r" in plan["error"] and "no longer maintained" in plan["error"]
    done = run_cli("resume", f"kimi:{sid}", "--shell", "bash", env=env)
    assert done.returncode == 1 and done.stdout == "" and "no longer maintained" in done.stderr


def test_a_cli_with_its_resume_flag_is_not_refused(realdata, stub_bin):
    slow_stub(stub_bin, "kimi", "Usage: kimi [OPTIONS]\n  -r, --resume TEXT\n  --yolo\n  --afk\n  --plan\n", 0)
    home = realdata("kimi-home")
    env = {"SESSIDX_HOME": str(home), "PATH": f"{stub_bin}:{os.environ['PATH']}"}
    rows = [json.loads(line) for line in run_cli("list", "--app", "kimi", "--json", env=env).stdout.splitlines()]
    plain = next(r for r in rows if r["approval"] == "default")
    plan = json.loads(run_cli("resume", f"kimi:{plain['id']}", "--json", env=env).stdout)
    assert plan["error"] is None or plan["error"].startswith("folder no longer exists"), plan
