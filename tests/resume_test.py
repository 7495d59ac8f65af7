"""Resume plans: safe-resume rules for Claude and Codex, and the shared checks."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from homes import ClaudeSession, CodexThread, write_codex_home

from tests.conftest import run_cli
from tests.stubs import write_stub


@pytest.fixture
def path_with_stubs(stub_bin, monkeypatch):
    import os

    monkeypatch.setenv("PATH", f"{stub_bin}{os.pathsep}{os.environ['PATH']}")
    return stub_bin


def plan(*args: str) -> dict:
    done = run_cli("resume", *args, "--json")
    assert done.stdout, done.stderr
    return json.loads(done.stdout)


def git_repo(folder: Path, branch: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", branch, str(folder)], check=True)
    return folder


@pytest.mark.parametrize(
    ("mode", "allow", "expected_mode", "held"),
    [
        ("plan", False, "plan", []),
        ("default", False, "default", []),
        ("acceptEdits", False, "default", ["--permission-mode acceptEdits"]),
        ("bypassPermissions", False, "default", ["--permission-mode bypassPermissions"]),
        ("auto", False, "auto", []),  # the stub is 2.1.332, whose default is auto
        ("dontAsk", False, "dontAsk", []),  # denies what is not allowed: stricter than asking
        ("manual", False, "default", []),  # 2.1.332's alias of default, read as default
        ("bypassPermissions", True, "bypassPermissions", []),
    ],
)
def test_claude_modes(home, tmp_path, path_with_stubs, mode, allow, expected_mode, held):
    write_stub(path_with_stubs, "claude")
    cwd = tmp_path / "proj"
    cwd.mkdir()
    s = ClaudeSession(cwd=str(cwd), mode=mode, model="claude-opus-5-5", effort="high")
    s.write(home)
    p = plan(s.session_id[:6], *(["--allow-permissive"] if allow else []))
    assert p["argv"] == ["claude", f"--resume={s.session_id}", "--model", "claude-opus-5-5", "--effort", "high",
                         "--permission-mode", expected_mode]
    assert [h["flag"] for h in p["held_back"]] == held
    assert p["ok"] is True and p["cwd"] == str(cwd)


def test_claude_without_effort_flag_drops_it(home, tmp_path, path_with_stubs):
    write_stub(path_with_stubs, "claude", help_key="claude-1.0")
    s = ClaudeSession(cwd=str(tmp_path), effort="high")
    s.write(home)
    p = plan(s.session_id)
    assert "--effort" not in p["argv"]
    assert any("--effort" in w for w in p["warnings"])


@pytest.mark.parametrize(
    ("approval", "sandbox", "allow", "flags", "held"),
    [
        ("on-request", "workspace-write", False, ["-a", "on-request", "-s", "workspace-write"], []),
        ("never", "read-only", False, ["-a", "on-request", "-s", "read-only"], ["-a never"]),
        ("never", "danger-full-access", False, ["-a", "on-request", "-s", "workspace-write"],
         ["-a never", "-s danger-full-access"]),
        ("on-failure", "workspace-write", False, ["-a", "on-request", "-s", "workspace-write"], ["-a on-failure"]),
        # 0.171.0's -a takes only on-request and never: untrusted is replaced by on-request
        ("untrusted", "read-only", False, ["-a", "on-request", "-s", "read-only"], []),
        ("never", "danger-full-access", True, ["-a", "never", "-s", "danger-full-access"], []),
    ],
)
def test_codex_strict_flags_explicit(home, tmp_path, path_with_stubs, approval, sandbox, allow, flags, held):
    write_stub(path_with_stubs, "codex")
    t = CodexThread(cwd=str(tmp_path), approval=approval, sandbox=sandbox, model="gpt-5.2", effort="high")
    write_codex_home(home, [t])
    p = plan(t.thread_id, *(["--allow-permissive"] if allow else []))
    # no `-c model_reasoning_effort=…`: Codex restores effort itself, and `-c` cannot attach to a
    # thread held open in its app server
    assert p["argv"] == ["codex", "resume", "-m", "gpt-5.2", *flags, "-C", str(tmp_path), "--", t.thread_id]
    assert [h["flag"] for h in p["held_back"]] == held


def test_codex_archived_is_refused_with_unarchive_hint(home, tmp_path, path_with_stubs):
    write_stub(path_with_stubs, "codex")
    t = CodexThread(cwd=str(tmp_path), archived=True)
    write_codex_home(home, [t])
    p = plan(t.thread_id)
    assert p["ok"] is False and f"codex unarchive {t.thread_id}" in p["error"]
    listed = run_cli("list", "--json").stdout
    assert t.thread_id not in listed
    assert t.thread_id in run_cli("list", "--json", "--archived").stdout
    done = run_cli("resume", t.thread_id, "--shell", "bash")
    assert done.returncode == 1 and "codex unarchive" in done.stderr and done.stdout == ""


def test_missing_folder_is_refused(home, tmp_path, path_with_stubs):
    write_stub(path_with_stubs, "claude")
    s = ClaudeSession(cwd=str(tmp_path / "gone"))
    s.write(home)
    p = plan(s.session_id)
    assert p["ok"] is False and "no longer exists" in p["error"]
    done = run_cli("resume", s.session_id, "--shell", "zsh")
    assert done.returncode == 1 and "no longer exists" in done.stderr and done.stdout == ""


def test_branch_mismatch_needs_consent(home, tmp_path, path_with_stubs):
    write_stub(path_with_stubs, "claude")
    repo = git_repo(tmp_path / "repo", "main")
    s = ClaudeSession(cwd=str(repo), branch="feature/x")
    s.write(home)
    p = plan(s.session_id)
    assert p["branch"] == {"recorded": "feature/x", "current": "main"}
    assert p["branch_differs"] is True and p["ok"] is False
    # no terminal to ask on: refused (exit 130), nothing printed to run
    done = subprocess.run([*run_cli_args(), "resume", s.session_id, "--shell", "bash"], capture_output=True,
                          text=True, start_new_session=True)
    assert done.returncode == 130 and done.stdout == ""
    done = run_cli("resume", s.session_id, "--shell", "bash", "--yes")
    assert done.returncode == 0 and done.stdout.startswith("\\builtin cd -- ")


def run_cli_args() -> list[str]:
    import sys

    return [sys.executable, "-m", "sessidx"]


def test_matching_and_unknown_branches_are_no_mismatch(home, tmp_path, path_with_stubs):
    write_stub(path_with_stubs, "claude")
    repo = git_repo(tmp_path / "repo", "main")
    same = ClaudeSession(cwd=str(repo), branch="main")
    unknown = ClaudeSession(cwd=str(repo), branch="HEAD")
    same.write(home)
    unknown.write(home)
    assert plan(same.session_id)["ok"] is True
    p = plan(unknown.session_id)
    assert p["ok"] is True and p["branch"]["recorded"] is None


def test_prefixes(home, tmp_path):
    a = ClaudeSession(cwd=str(tmp_path), session_id="abcd1111-0000-0000-0000-000000000000")
    b = ClaudeSession(cwd=str(tmp_path), session_id="abcd2222-0000-0000-0000-000000000000")
    a.write(home)
    b.write(home)
    assert run_cli("resume", "abcd1", "--json").returncode == 0
    ambiguous = run_cli("resume", "abcd", "--json")
    assert ambiguous.returncode == 1 and "ambiguous" in ambiguous.stderr
    short = run_cli("resume", "abc", "--json")
    assert short.returncode == 1 and "at least 4" in short.stderr
    unknown = run_cli("resume", "ffff", "--json")
    assert unknown.returncode == 1 and "no session matches" in unknown.stderr
    assert "Traceback" not in ambiguous.stderr + short.stderr + unknown.stderr
    assert run_cli("resume", f"claude:{b.session_id}", "--json").returncode == 0


def test_resume_sees_a_session_newer_than_the_cache(home, tmp_path):
    ClaudeSession(cwd=str(tmp_path), prompt="old").write(home)
    assert run_cli("build").returncode == 0
    new = ClaudeSession(cwd=str(tmp_path), prompt="started after the last build")
    new.write(home)
    assert json.loads(run_cli("resume", new.session_id[:8], "--json").stdout)["id"] == new.session_id
    assert new.session_id in run_cli("preview", new.session_id[:8]).stdout


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_recorded_value_with_a_newline_stays_one_argument(home, tmp_path, path_with_stubs, shell):
    """A model name ending in a newline once split the line: the override ran as a command of its own."""
    from tests.conftest import require

    require(shell)
    write_stub(path_with_stubs, "claude")
    cwd = tmp_path / "proj"
    cwd.mkdir()
    s = ClaudeSession(cwd=str(cwd), mode="bypassPermissions", model="claude-opus-4-5\n", effort="high")
    s.write(home)
    done = run_cli("resume", s.session_id, "--shell", shell)
    assert done.returncode == 0, done.stderr
    argv = {"bash": ["bash", "--norc", "-c"], "zsh": ["zsh", "-f", "-c"], "fish": ["fish", "--no-config", "-c"]}[shell]
    ran = subprocess.run([*argv, done.stdout], capture_output=True, text=True, timeout=30)
    assert ran.returncode == 0 and ran.stderr == "", ran.stderr
    from tests.stubs import recorded

    got = recorded(path_with_stubs, "claude")
    assert got is not None
    assert got[0] == [f"--resume={s.session_id}", "--model", "claude-opus-4-5\n", "--effort", "high",
                      "--permission-mode", "default"]
    assert got[1] == str(cwd)


@pytest.mark.parametrize(("help_key", "auto_held"), [("claude", False), ("claude-1.0", True)])
def test_claude_default_mode_follows_the_installed_version(home, tmp_path, path_with_stubs, help_key, auto_held):
    """2.1.332 defaults to `auto` (a flag-less session records it); older builds to `default`."""
    write_stub(path_with_stubs, "claude", help_key=help_key)
    s = ClaudeSession(cwd=str(tmp_path), mode="auto", effort=None)
    s.write(home)
    p = plan(s.session_id)
    if auto_held:
        assert p["argv"][-2:] == ["--permission-mode", "default"]
        assert p["held_back"][0]["flag"] == "--permission-mode auto"
        assert "claude 1.0.128's default (default)" in p["held_back"][0]["reason"]
    else:
        assert p["argv"][-2:] == ["--permission-mode", "auto"] and p["held_back"] == []
    loose = ClaudeSession(cwd=str(tmp_path), mode="acceptEdits", effort=None)
    loose.write(home)
    held = plan(loose.session_id)["held_back"][0]["reason"]
    assert ("claude 2.1.332's default (auto)" in held) is (not auto_held)


def test_root_opting_into_bypass_is_told_why_claude_refuses(home, tmp_path, path_with_stubs):
    import os

    write_stub(path_with_stubs, "claude")
    s = ClaudeSession(cwd=str(tmp_path), mode="bypassPermissions")
    s.write(home)
    warnings = plan(s.session_id, "--allow-permissive")["warnings"]
    assert any("as root" in w for w in warnings) is (os.geteuid() == 0)


def test_codex_home_restored_elsewhere_is_refused(home, tmp_path, path_with_stubs):
    """Codex looks only at the stored rollout_path: a copy found elsewhere cannot be resumed."""
    write_stub(path_with_stubs, "codex")
    t = CodexThread(cwd=str(tmp_path))
    write_codex_home(home, [t], recorded_home="/old/home")
    listed = json.loads(run_cli("list", "--json").stdout)
    assert listed["id"] == t.thread_id and listed["path"].startswith("/old/home/")
    p = plan(t.thread_id)
    assert p["ok"] is False and "only at its recorded rollout /old/home/" in p["error"]


def test_a_session_whose_files_are_gone_is_not_offered(home, tmp_path, path_with_stubs):
    write_stub(path_with_stubs, "claude")
    s = ClaudeSession(cwd=str(tmp_path))
    path = s.write(home)
    assert run_cli("list").stdout.count(s.session_id[:8]) == 1  # cached
    path.unlink()
    preview = run_cli("preview", s.session_id)  # from the cache, as fzf's preview runs
    assert "will not resume: its files are gone" in preview.stdout
    assert run_cli("resume", s.session_id).returncode == 1


def test_probes_run_in_a_throwaway_home(home, tmp_path, path_with_stubs, monkeypatch):
    """`codex resume --help` writes ~/.codex/tmp/arg0-linux/... into the home it runs with."""
    write_stub(path_with_stubs, "codex")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    t = CodexThread(cwd=str(tmp_path))
    write_codex_home(home, [t])
    assert plan(t.thread_id)["ok"] is True
    assert not (home / ".codex" / "tmp").exists()


def test_a_failed_probe_is_unknown_not_everything(home, tmp_path, path_with_stubs):
    """A CLI whose --help fails or hangs: only the safety flags go out, with a warning, and the
    next run asks again."""
    broken = path_with_stubs / "claude"
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o755)
    s = ClaudeSession(cwd=str(tmp_path), mode="acceptEdits", model="claude-opus-5-5", effort="high")
    s.write(home)
    p = plan(s.session_id)
    assert p["argv"] == ["claude", f"--resume={s.session_id}", "--permission-mode", "default"]
    assert any("flags are unknown" in w for w in p["warnings"])
    write_stub(path_with_stubs, "claude")  # fixed: learnt on the next run, nothing stale cached
    assert "--model" in plan(s.session_id)["argv"]
