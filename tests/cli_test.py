"""The command-line contract of SPEC.md: find, list filters, build's line, exit codes, pipes."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from homes import ClaudeSession, CodexThread, write_codex_home

from tests.conftest import ROOT, run_cli


@pytest.fixture
def two_apps(home, tmp_path):
    claude = ClaudeSession(cwd="/w/Payments-Service", branch="fix/Retry-Logic", prompt="Why does CHECKOUT retry?",
                           session_id="c1a0de00-0000-0000-0000-000000000001")
    claude.write(home)
    thread = CodexThread(cwd="/w/dashboard", title="Dark mode toggle", thread_id="0dec0000-0000-0000-0000-000000000002")
    write_codex_home(home, [thread])
    return claude, thread


@pytest.mark.parametrize(
    ("query", "expected"),
    [("checkout", {"c1a0de00"}), ("PAYMENTS", {"c1a0de00"}), ("retry-logic", {"c1a0de00"}), ("codex", {"0dec0000"}),
     ("0dec", {"0dec0000"}), ("dark toggle", {"0dec0000"}), ("w/", {"c1a0de00", "0dec0000"})],
)
def test_find_matches_title_folder_branch_app_and_id(two_apps, query, expected):
    done = run_cli("find", query, "--json")
    assert done.returncode == 0
    assert {json.loads(line)["id"][:8] for line in done.stdout.splitlines()} == expected


def test_find_without_a_match_exits_1(two_apps):
    done = run_cli("find", "nothing like this")
    assert done.returncode == 1 and done.stdout == ""


def test_list_app_filter_and_unknown_app(two_apps):
    assert [json.loads(x)["app"] for x in run_cli("list", "--app", "codex", "--json").stdout.splitlines()] == ["codex"]
    bad = run_cli("list", "--app", "vim")
    assert bad.returncode == 1 and "unknown app 'vim'" in bad.stderr and "claude" in bad.stderr


def test_json_objects_carry_every_field(two_apps):
    for line in run_cli("list", "--json").stdout.splitlines():
        obj = json.loads(line)
        assert {"app", "id", "cwd", "branch", "title", "mtime", "bytes", "model", "effort", "approval", "sandbox",
                "path"} <= set(obj)
        assert isinstance(obj["mtime"], int)


def test_build_prints_one_figure_per_app(two_apps):
    line = run_cli("build", check=True).stdout.strip()
    assert re.fullmatch(r"2 sessions  claude \d+ ms  codex \d+ ms(  \w+ \d+ ms)*", line), line


def test_list_into_a_closed_pipe_is_quiet(home):
    for i in range(800):  # more than a pipe holds, so the write meets the closed end
        ClaudeSession(cwd=f"/w/{i}", prompt=f"session number {i} " + "x" * 100).write(home)
    done = subprocess.run(["sh", "-c", f"{sys.executable} -m sessidx list | head -1"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stderr == "" and done.stdout.count("\n") == 1


def test_usage_errors_exit_2():
    done = run_cli("resume")
    assert done.returncode == 2 and "usage:" in done.stderr


def test_init_key_options(tmp_path):
    snippet = (ROOT / "shell" / "sessidx.zsh").read_text()
    assert run_cli("init", "zsh", "--key", "^X^A").stdout == "SESSIDX_KEY='^X^A'\n" + snippet
    assert run_cli("init", "zsh", "--no-bind").stdout == "SESSIDX_KEY=''\n" + snippet
    assert run_cli("init", "fish", "--key", "\\cx\\ca").stdout.startswith("set -g SESSIDX_KEY '\\\\cx\\\\ca'\n")


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(flag):
    from sessidx import __version__

    done = run_cli(flag)
    assert done.returncode == 0 and done.stdout == f"sessidx {__version__}\n"


def test_help_names_the_commands_a_person_uses():
    done = run_cli("help")
    assert done.returncode == 0
    for command in ("pick", "list", "find", "preview", "resume", "build", "init"):
        assert re.search(rf"^\s+{command}\s", done.stdout, re.M), command
    assert not re.search(r"^\s+(lines|copy)\s", done.stdout, re.M)  # the picker's internal ones
    assert "--allow-permissive" in run_cli("help", "resume").stdout


def test_an_unknown_command_lists_only_public_ones():
    done = run_cli("frob")
    assert done.returncode == 2 and "unknown command 'frob'" in done.stderr
    assert "lines" not in done.stderr and "copy" not in done.stderr


def test_find_without_a_match_says_so(two_apps):
    done = run_cli("find", "nosuchthing")
    assert done.returncode == 1 and done.stdout == ""
    assert "no session matches 'nosuchthing'" in done.stderr


def test_an_empty_home_names_where_it_looked(home):
    done = run_cli("list")
    assert done.returncode == 0 and done.stdout == ""
    assert "no agent sessions found; looked in" in done.stderr
    assert f"{home}/.claude" in done.stderr and f"{home}/.local/share/goose" in done.stderr
    moved = run_cli("list", env={"CODEX_HOME": "/nowhere/codex"})
    assert "$CODEX_HOME" in moved.stderr and f"{home}/.codex," not in moved.stderr
    assert "no codex sessions found" in run_cli("list", "--app", "codex").stderr


def test_the_picker_on_an_empty_home_and_on_the_demo(home, tmp_path, monkeypatch):
    """Empty: a message naming the folders instead of fzf's 0/0. Demo: the note is in fzf's
    header, not a stderr line left on the screen at every press."""
    from sessidx import commands, picker
    from sessidx.config import current_env
    from sessidx.errors import Cancelled, SessidxError

    monkeypatch.setattr(picker, "has_tty", lambda: True)
    with pytest.raises(SessidxError, match="looked in"):
        commands.pick(current_env(), print, None, "bash")
    seen = {}

    def fake_fzf(lines, query, fzf, opts, shell, note=None, tmux=None, cold=False, size=None, hosts=False, state=None, cut=None):
        seen.update(lines=lines, note=note)
        raise Cancelled()

    monkeypatch.setattr(picker, "run_fzf", fake_fzf)
    monkeypatch.delenv("SESSIDX_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "nobody"))
    with pytest.raises(Cancelled):
        commands.pick(current_env(), print, None, "bash")
    assert seen["lines"] and "demo home" in seen["note"]


def test_the_demo_homes_codex_threads_are_searched_previewed_and_exported(home, tmp_path, monkeypatch):
    """The demo's Codex threads recorded their rollouts on another machine: the listing finds
    them by id in the demo home, and so must the content index and its snippets, though the
    process's own HOME names another home (it found the demo's words in no Codex session, and
    the preview showed none of what was said; `export` knew no demo session at all)."""
    monkeypatch.delenv("SESSIDX_HOME")
    env = {"HOME": str(tmp_path / "nobody"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for attempt in ("first index", "answered from the index"):
        done = run_cli("search", "--json", "exponential", env=env)
        assert done.returncode == 0, (attempt, done.stderr)
        (hit,) = [json.loads(line) for line in done.stdout.splitlines()]
        assert hit["app"] == "codex" and "exponential" in hit["snippet"], (attempt, hit)
    # the preview (a process that lists nothing) shows what was said in it too
    shown = run_cli("preview", "--shell", "bash", f"codex:{hit['id']}", env=env).stdout
    assert "exponential backoff" in shown.partition("said lately")[2], shown
    # a row the picker and `list` show exports (Alt-E) as well; an agent is never shown the demo
    exported = run_cli("export", f"codex:{hit['id']}", env=env)
    assert exported.returncode == 0 and "exponential backoff" in exported.stdout.partition("## Conversation")[2]
    from sessidx.agent_api import Sessions
    from sessidx.config import current_env

    monkeypatch.setenv("HOME", env["HOME"])
    assert Sessions(current_env()).local() == []


def test_check_tells_fzf_what_enter_does(home, tmp_path):
    """The picker's Enter and Alt-Enter: accept what can be resumed, keep the picker with the
    reason otherwise."""
    here = tmp_path / "here"
    here.mkdir()
    ok = ClaudeSession(cwd=str(here), prompt="resumable")
    ok.write(home)
    gone = ClaudeSession(cwd=str(tmp_path / "gone"), prompt="not resumable")
    gone.write(home)
    checked = ok.session_id.encode().hex()  # fzf prints it, run_fzf compares it with the row accepted
    assert run_cli("check", ok.session_id).stdout == f"print(enter)+print({checked})+accept\n"
    assert run_cli("check", "--allow-permissive", ok.session_id).stdout == f"print(alt-enter)+print({checked})+accept\n"
    # no row yet: the key stays held (in fzf's list label) for the next result
    assert run_cli("check").stdout == "change-list-label(enter)+rebind(result)\n"
    assert run_cli("check", "--allow-permissive").stdout == "change-list-label(alt-enter)+rebind(result)\n"
    # `resume --checked HEX` (the shells' warm press) resumes only the key the check said yes to
    assert run_cli("resume", "--checked", checked, ok.session_id).returncode == 0
    other = run_cli("resume", "--checked", "6f74686572", ok.session_id)
    assert other.returncode != 0 and other.stdout == "" and "nothing was resumed" in other.stderr
    refused = run_cli("check", gone.session_id).stdout
    assert refused.startswith("change-list-label()+change-header:cannot resume: folder no longer exists")
    assert refused[-1] == "\n"
    assert run_cli("check", "nosuch").stdout.startswith("change-list-label()+change-header:cannot resume: no session")


def test_copy_under_tmux_uses_its_buffer(home, tmp_path, stub_bin):
    here = tmp_path / "here"
    here.mkdir()
    s = ClaudeSession(cwd=str(here), prompt="copy under tmux")
    s.write(home)
    fake = stub_bin / "tmux"
    fake.write_text(f"#!/bin/sh\necho \"$@\" > '{stub_bin}/tmux.args'\ncat > '{stub_bin}/tmux.buffer'\n")
    fake.chmod(0o755)
    import os

    done = run_cli("copy", "--shell", "bash", s.session_id,
                   env={"TMUX": "/tmp/tmux-0/default,1,0", "PATH": f"{stub_bin}:{os.environ['PATH']}"})
    assert done.stdout.startswith("change-header:copied (tmux buffer):")
    assert (stub_bin / "tmux.args").read_text().split() == ["load-buffer", "-w", "-"]
    assert f"--resume={s.session_id}" in (stub_bin / "tmux.buffer").read_text()


def test_the_first_press_streams_newest_first_across_apps(home, tmp_path):
    """`lines --stream` (no cache yet, what the first press's fzf reads): the column header, then
    the sessions newest first across apps (every source listed first, parsed newest first), in
    fixed columns; the cache is written for the next press."""
    import re

    # folders of other lengths per app: columns sized per batch would not line up
    old = ClaudeSession(cwd=str(tmp_path / "a-much-longer-folder"), prompt="Older claude session", mtime=1_700_000_000)
    new = ClaudeSession(cwd=str(tmp_path / "b"), prompt="Newer claude session", mtime=1_800_000_000)
    for s in (old, new):
        s.write(home)
    for folder in ("a-much-longer-folder", "b", "c"):
        (tmp_path / folder).mkdir()
    write_codex_home(home, [CodexThread(cwd=str(tmp_path / "c"), title="A codex thread")])
    lines = run_cli("lines", "--stream", env={"SESSIDX_HOME": str(home)}).stdout.splitlines()
    plain = [re.sub(r"\x1b\[[0-9;]*m", "", line).split("\t", 1)[0] for line in lines]
    titles = ["title", "Newer claude session", "A codex thread", "Older claude session"]  # the codex thread: 2026
    assert [line.rsplit("  ", 1)[-1] for line in plain] == titles
    assert len({line.index(title) for line, title in zip(plain, titles, strict=True)}) == 1  # one title column
    assert list((tmp_path / "cache" / "sessidx").glob("index-*"))  # the next press is warm


def test_each_argv_read_without_argparse_is_read_as_argparse_reads_it():
    """cli._BARE: the argvs the key press, the picker and its background work run are read
    without argparse (its import is a tenth of a key press); each must be what argparse makes."""
    from sessidx.argv import parser
    from sessidx.cli import _BARE, Args

    for argv, bare in _BARE.items():
        if not argv:
            continue  # `sessidx` alone: the picker, which argparse reads as no command
        full = parser(list(argv)).parse_args(list(argv), namespace=Args())
        assert vars(bare) == vars(full), argv


@pytest.mark.parametrize(("argv", "behind"), [(["lines", "--background"], True), (["lines"], False)])
def test_the_fresh_list_behind_the_screen_yields_the_cpu(two_apps, argv, behind):
    """`lines --background` (the warm press's fresh list, picker.fzf_command) lowers its own CPU
    priority, so that fzf and the preview come first; it lists the same rows."""
    from sessidx.cli import BACKGROUND_NICE

    code = ("import os, sys; from sessidx.cli import main; before = os.getpriority(os.PRIO_PROCESS, 0); "
            "main(sys.argv[1:]); sys.stderr.write(f'{before} {os.getpriority(os.PRIO_PROCESS, 0)}')")
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60, check=True)
    before, after = map(int, done.stderr.split()[-2:])
    assert after == (min(before + BACKGROUND_NICE, 19) if behind else before)
    assert len(done.stdout.splitlines()) == 3  # the column names and both sessions
