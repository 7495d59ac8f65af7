"""Hostile and broken input, round two: what reaches a terminal, odd streams and locales."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from homes import ClaudeSession

from tests.conftest import run_cli

ESCAPES = "\x1b[31mred\x1b]0;title\x07\x9b2J\x7f\u202e"


def unsafe(text: str) -> list[str]:
    """The characters of `text` that must never reach a terminal raw."""
    return [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) < 0xA0 or c == "\u202e"]


def test_escape_sequences_from_session_data_never_reach_the_terminal(home, tmp_path):
    missing = tmp_path / f"gone{ESCAPES}"
    s = ClaudeSession(cwd=str(missing), prompt=f"title {ESCAPES}", mode=f"acceptEdits{ESCAPES}",
                      model=f"m{ESCAPES}", branch=f"b{ESCAPES}")
    s.write(home)
    preview = run_cli("preview", s.session_id, "--shell", "bash")
    assert preview.returncode == 0, preview.stderr
    assert "will not resume" in preview.stdout and "held back" in preview.stdout
    assert unsafe(preview.stdout) == []
    resume = run_cli("resume", s.session_id, "--shell", "bash")
    assert resume.returncode == 1 and "folder no longer exists" in resume.stderr
    assert unsafe(resume.stderr) == [] and resume.stdout == ""
    for args in (["list"], ["list", "--json"], ["resume", s.session_id, "--json"]):
        done = run_cli(*args)
        assert unsafe(done.stdout) == [] and unsafe(done.stderr) == [], args
    listed = json.loads(run_cli("list", "--json").stdout)
    assert listed["title"] == f"title {ESCAPES}"  # JSON escapes them; the value is intact


def test_an_unknown_id_is_echoed_cleaned(home):
    done = run_cli("resume", f"abcd{ESCAPES}")
    assert done.returncode == 1 and "no session matches" in done.stderr
    assert unsafe(done.stderr) == []


def sessidx_in_shell(line: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """`sessidx ARGS` with the redirections of `line`, run by sh, as a user would type them."""
    me = f"'{sys.executable}' -m sessidx"
    return subprocess.run(["sh", "-c", line.replace("sessidx", me, 1)], capture_output=True, timeout=60,
                          env={**os.environ, **(env or {})})


def test_closed_standard_streams(home, tmp_path):
    gone = ClaudeSession(cwd=str(tmp_path / "gone"), mode="bypassPermissions")
    gone.write(home)
    closed_out = sessidx_in_shell("sessidx list >&-")
    assert closed_out.returncode == 0 and b"Traceback" not in closed_out.stderr, closed_out.stderr
    # stderr closed: the refusal goes nowhere, and above all not to stdout, which the shell runs
    closed_err = sessidx_in_shell(f"sessidx resume {gone.session_id} 2>&-")
    assert closed_err.returncode == 1 and closed_err.stdout == b""
    here = tmp_path / "here"
    here.mkdir()
    ok = ClaudeSession(cwd=str(here), mode="bypassPermissions")
    ok.write(home)
    runs = sessidx_in_shell(f"sessidx resume {ok.session_id} --shell bash 2>&- <&-")
    assert runs.returncode == 0 and runs.stdout.startswith(b"\\builtin cd -- ")
    assert b"held back" not in runs.stdout


@pytest.fixture
def latin1_locale(tmp_path: Path) -> dict[str, str]:
    """A Latin-1 locale built into a temp folder (glibc's localedef and LOCPATH)."""
    from tests.conftest import require

    require("localedef")
    if not Path("/usr/share/i18n/charmaps").is_dir():
        if os.environ.get("CI"):
            raise AssertionError("glibc locale sources missing: .ci/run must install 'locales'")
        pytest.skip("no glibc locale sources")
    folder = tmp_path / "locales"
    folder.mkdir()
    subprocess.run(["localedef", "-i", "en_US", "-f", "ISO-8859-1", str(folder / "en_US.ISO-8859-1")],
                   check=True, capture_output=True)
    env = {"LOCPATH": str(folder), "LC_ALL": "en_US.ISO-8859-1", "LANG": "en_US.ISO-8859-1"}
    probe = subprocess.run([sys.executable, "-c", "import sys; print(sys.getfilesystemencoding())"],
                           capture_output=True, text=True, env={**os.environ, **env})
    assert probe.stdout.strip() == "iso8859-1"
    return env


def test_a_latin1_locale_lists_previews_and_finds_unicode_folders(home, tmp_path, latin1_locale):
    folder = tmp_path / "café-日本"
    folder.mkdir()
    s = ClaudeSession(cwd=str(folder), prompt="ünïcode 日本 title")
    s.write(home)
    for args in (["list"], ["lines"], ["list", "--json"], ["preview", s.session_id, "--shell", "bash"]):
        done = run_cli(*args, env=latin1_locale)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (args, done.stderr)
        assert "日本" in done.stdout, args
    plan = json.loads(run_cli("resume", s.session_id, "--json", env=latin1_locale).stdout)
    assert plan["ok"] is True and plan["error"] is None
    line = run_cli("resume", s.session_id, "--shell", "bash", env=latin1_locale).stdout
    bash = shutil.which("bash")
    assert bash
    ran = subprocess.run([bash, "--norc", "-c", line.replace("&& claude", "&& pwd #")], capture_output=True)
    assert ran.stdout.decode().strip() == str(folder)


def test_a_newline_in_a_session_id_is_skipped_and_said(home):
    """Once: the picker row split in two (3 rows for 2 sessions) and Enter failed."""
    good = ClaudeSession(cwd="/w/good", prompt="good one")
    good.write(home)
    odd = ClaudeSession(cwd="/w/odd", prompt="odd one", session_id="nl\nid")
    odd.write(home)
    rows = run_cli("lines").stdout.splitlines()[1:]  # after the column header
    assert len(rows) == 1 and rows[0].endswith(f"\tclaude:{good.session_id}")
    done = run_cli("build", "-v")
    assert "whose id holds control characters" in done.stderr and unsafe(done.stderr) == []


@pytest.mark.parametrize("opts", ["--bind 'ctrl-a:abort", '--header "open', "--prompt \\"])
def test_unbalanced_quotes_in_fzf_opts_are_a_clear_error(opts):
    from sessidx.errors import SessidxError
    from sessidx.picker import run_fzf

    with pytest.raises(SessidxError, match="SESSIDX_FZF_OPTS is not a list of shell words"):
        run_fzf(["x\tclaude:x"], "", "/bin/false", opts, "bash")


def test_children_of_a_latin1_run_are_utf8_too(latin1_locale):
    """fzf's preview and reload are children of sessidx: after the re-run in UTF-8 mode they
    must be in UTF-8 mode too (a guard variable once kept them in the Latin-1 locale)."""
    code = ("import subprocess, sys; from sessidx.cli import _utf8_mode; _utf8_mode(); "
            "child = subprocess.run([sys.executable, '-c', 'import sys; print(sys.flags.utf8_mode)'], "
            "capture_output=True, text=True).stdout.strip(); print(sys.flags.utf8_mode, child)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, **latin1_locale}, timeout=60)
    assert done.stdout.split() == ["1", "1"], (done.stdout, done.stderr)
