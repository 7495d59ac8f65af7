"""`sessidx doctor` over the real homes (fixtures/realdata): a moved home, a CLI too new, an unknown
record type, each explained in one screen with its fix, and a healthy home that says so."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import run_cli

CLAUDE_HELP = ("Usage: claude [options]\n  -r, --resume [value]\n  --model <model>\n  --effort <level>\n"
               "  --permission-mode <mode>  (choices: acceptEdits, auto, bypassPermissions, default, dontAsk, plan)\n")


def stub_claude(folder: Path, version: str, help_text: str) -> str:
    """A `claude` on PATH that answers `--version` and `--help` only; the PATH to run with."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "claude"
    script.write_text(f"#!/bin/sh\ncase \"$1\" in --version) echo '{version}';; --help) cat <<'HELP'\n"
                      f"{help_text}HELP\n;; esac\n")
    script.chmod(0o755)
    return f"{folder}:/usr/bin:/bin"


@pytest.fixture
def claude_home(realdata, tmp_path: Path) -> Path:
    """A copy of the real Claude Code home (the tests change it)."""
    home = tmp_path / "real"
    shutil.copytree(realdata("claude-home"), home, symlinks=True)
    return home


def doctor(home: Path, path: str, **env: str) -> tuple[int, str, dict]:
    base = {"SESSIDX_HOME": str(home), "PATH": path, "SESSIDX_HOSTS": "-"}
    shown = run_cli("doctor", env={**base, **env})
    data = run_cli("doctor", "--json", env={**base, **env})
    assert shown.returncode == data.returncode and "Traceback" not in shown.stderr + data.stderr
    return shown.returncode, shown.stdout, json.loads(data.stdout)


def app(data: dict, name: str) -> dict:
    return next(a for a in data["apps"] if a["app"] == name)


def test_a_healthy_real_home_has_no_problems(claude_home, tmp_path):
    code, screen, data = doctor(claude_home, stub_claude(tmp_path / "bin", "2.1.332 (Claude Code)", CLAUDE_HELP))
    claude = app(data, "claude")
    assert code == 0 and data["ok"] and screen.rstrip().endswith("no problems"), screen
    assert claude["listed"] > 0 and claude["version"] == claude["proven_on"] == "2.1.332"
    assert claude["missing_flags"] == [] and "--permission-mode" in claude["plan_flags"]
    assert claude["unknown_records"] == {} and claude["findings"] == []
    assert "claude 2.1.332, proven on 2.1.332" in screen


def test_a_moved_home_is_named_with_where_the_sessions_are(claude_home, tmp_path):
    path = stub_claude(tmp_path / "bin", "2.1.332 (Claude Code)", CLAUDE_HELP)
    code, screen, data = doctor(claude_home, path, CLAUDE_CONFIG_DIR=str(tmp_path / "moved"))
    claude = app(data, "claude")
    assert code == 1 and claude["listed"] == 0
    assert claude["homes"][0] == {"path": str(tmp_path / "moved"), "by": "CLAUDE_CONFIG_DIR", "found": False}
    [problem] = [f for f in claude["findings"] if f["level"] == "problem"]
    assert f"CLAUDE_CONFIG_DIR={tmp_path / 'moved'}" in problem["text"] and str(claude_home / ".claude") in problem["text"]
    assert problem["fix"].startswith("unset CLAUDE_CONFIG_DIR")
    assert "fix: unset CLAUDE_CONFIG_DIR" in screen and screen.rstrip().endswith("1 problem")


def test_a_cli_too_new_without_a_flag_the_plan_uses_is_explained(claude_home, tmp_path):
    no_mode = CLAUDE_HELP.replace("  --permission-mode <mode>", "  --mode <mode>")
    code, screen, data = doctor(claude_home, stub_claude(tmp_path / "bin", "2.9.0 (Claude Code)", no_mode))
    claude = app(data, "claude")
    assert code == 1 and claude["version"] == "2.9.0" and claude["missing_flags"] == ["--permission-mode"]
    texts = [f["text"] for f in claude["findings"]]
    assert any("claude 2.9.0's help has no --permission-mode, which the plan passes" in t for t in texts), texts
    assert any("the plans were proven on 2.1.332 (newer)" in t for t in texts)
    assert "fix: install claude 2.1.332, the version the plans were proven on" in screen


def test_a_cli_whose_help_lost_the_resume_flag_means_enter_refuses(claude_home, tmp_path):
    stub = stub_claude(tmp_path / "bin", "2.9.0 (Claude Code)", CLAUDE_HELP.replace("-r, --resume [value]", "-c"))
    code, screen, data = doctor(claude_home, stub)
    assert code == 1 and "--resume" in app(data, "claude")["missing_flags"]
    assert "Enter refuses to resume" in screen


def test_an_unknown_record_type_is_counted_and_said(claude_home, tmp_path):
    newest = max(claude_home.glob(".claude/projects/*/*.jsonl"), key=os.path.getmtime)
    stamp = newest.stat()
    with newest.open("a") as f:
        for _ in range(3):
            f.write(json.dumps({"type": "hologram", "sessionId": newest.stem}) + "\n")
    os.utime(newest, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # still the newest
    code, screen, data = doctor(claude_home, stub_claude(tmp_path / "bin", "2.1.332 (Claude Code)", CLAUDE_HELP))
    claude = app(data, "claude")
    assert claude["unknown_records"] == {"hologram": 3}
    [note] = claude["findings"]
    assert note["level"] == "note" and "3 of type 'hologram'" in note["text"] and "not read" in note["text"]
    assert "records: 3 unknown" in screen and code == 0  # worth knowing, not wrong: a note


def test_the_caches_and_the_hosts_are_reported(claude_home, tmp_path):
    path = stub_claude(tmp_path / "bin", "2.1.332 (Claude Code)", CLAUDE_HELP)
    run_cli("search", "retry", env={"SESSIDX_HOME": str(claude_home), "PATH": path})
    code, screen, data = doctor(claude_home, path, SESSIDX_HOSTS="devbox [-F.x]")
    files = {f["what"]: f for f in data["files"]}
    assert files["index cache"]["bytes"] > 0 and files["content index"]["bytes"] > 0
    assert data["hosts"] == [{"name": "devbox", "sessions": 0, "heard_ms": 0, "note": None, "kept": ""}]
    assert code == 1 and any("not a host name, ignored: '[-F.x]'" in f["text"] for f in data["findings"])
    assert "devbox was never heard from" in screen and "content index" in screen


def test_each_apps_proven_version_is_its_conformance_pin():
    import conformance
    import conformance_kimicode
    import conformance_login
    import conformance_more

    from sessidx.apps import APPS

    pins = {p.app: p.version for p in [*conformance.PINS, *conformance_more.PINS, conformance_login.QODER_PIN,
                                               conformance_kimicode.PIN]}
    proven = {name: getattr(a, "proven_on", None) for name, a in APPS.items()}
    assert {name: v for name, v in proven.items() if v} == pins


def test_sessions_whose_cli_is_not_installed_are_listed_and_named_once(realdata, tmp_path):
    code, screen, data = doctor(realdata("codex-home"), "/usr/bin:/bin")
    codex = app(data, "codex")
    assert codex["listed"] > 0 and codex["cli"] is None and codex["proven_on"] == "0.171.0"
    assert "! no CLI on PATH, so Enter cannot resume their sessions (listed all the same): codex" in screen
    assert code == 0  # a note: nothing is wrong with the data
