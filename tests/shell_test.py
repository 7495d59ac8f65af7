"""The shell snippets in real bash, zsh and fish: load-and-lint, then driven in tmux with stub agents."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from homes import ClaudeSession, CodexThread, write_codex_home

from sessidx.commands import INDEXING_NOTE
from tests.conftest import ROOT, require, run_cli
from tests.stubs import recorded, write_stub
from tests.tmux import Tmux

SHELLS = ["bash", "zsh", "fish"]
LOAD = {
    "bash": ["bash", "--noprofile", "--norc", "-i", "-c"],
    "zsh": ["zsh", "-f", "-i", "-c"],
    "fish": ["fish", "--no-config", "-i", "-c"],
}
HOSTILE_DIR = "-it's $(touch pwned) `touch pwned2`; & * \\ \tx\nend"


# Tier 1: load and lint -------------------------------------------------------------------------


def run_in_shell(shell: str, script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`script` in an interactive shell that reads no user configuration."""
    return subprocess.run([*LOAD[shell], script], capture_output=True, text=True, timeout=30,
                          env={**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)},
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("shell", SHELLS)
def test_init_prints_the_file_byte_for_byte(shell):
    done = run_cli("init", shell, check=True)
    assert done.stdout == (ROOT / "shell" / f"sessidx.{shell}").read_text()


@pytest.mark.parametrize("shell", SHELLS)
def test_init_detects_the_shell(shell):
    done = run_cli("init", env={"SESSIDX_SHELL": shell}, check=True)
    assert done.stdout == (ROOT / "shell" / f"sessidx.{shell}").read_text()


@pytest.mark.parametrize("shell", SHELLS)
def test_snippet_loads_silently_twice(shell, tmp_path):
    require(shell)
    snippet = ROOT / "shell" / f"sessidx.{shell}"
    source = f"source {snippet}; source {snippet}"
    done = run_in_shell(shell, source, tmp_path)
    assert done.returncode == 0 and done.stdout == ""
    # bash -i without a terminal warns about job control; nothing of ours may be printed
    assert "sessidx" not in done.stderr


@pytest.mark.parametrize("shell", SHELLS)
def test_non_interactive_shells_get_nothing(shell, tmp_path):
    require(shell)
    snippet = ROOT / "shell" / f"sessidx.{shell}"
    argv = [a for a in LOAD[shell] if a != "-i"]
    check = {"bash": "type sessidx-widget", "zsh": "whence -w sessidx-widget",
             "fish": "functions -q sessidx-widget"}[shell]
    done = subprocess.run([*argv, f"source {snippet}; {check}"], capture_output=True, text=True, timeout=30,
                          env={**os.environ, "HOME": str(tmp_path)})
    assert done.returncode != 0  # the widget was not defined


@pytest.mark.parametrize("shell", SHELLS)
def test_syntax_and_lint(shell):
    require(shell)
    snippet = str(ROOT / "shell" / f"sessidx.{shell}")
    check = {"bash": ["bash", "-n", snippet], "zsh": ["zsh", "-n", snippet],
             "fish": ["fish", "--no-execute", snippet]}[shell]
    assert subprocess.run(check, capture_output=True, timeout=30).returncode == 0
    if shell == "bash":
        require("shellcheck")
        done = subprocess.run(["shellcheck", "-s", "bash", snippet], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout


@pytest.mark.parametrize("shell", SHELLS)
def test_empty_key_binds_nothing_but_defines_the_widget(shell, tmp_path):
    require(shell)
    snippet = ROOT / "shell" / f"sessidx.{shell}"
    probe = {
        "bash": f"SESSIDX_KEY=; source {snippet}; type sessidx-widget >/dev/null && ! bind -X | grep -q sessidx",
        "zsh": f"SESSIDX_KEY=; source {snippet}; whence -w sessidx-widget >/dev/null && ! bindkey | grep -q sessidx",
        "fish": f"set -g SESSIDX_KEY; source {snippet}; functions -q sessidx-widget; and not bind | grep -q sessidx",
    }[shell]
    done = run_in_shell(shell, probe, tmp_path)
    assert done.returncode == 0, done.stderr


# Tier 2: interactive, in tmux ------------------------------------------------------------------


class Shell:
    """One interactive shell in tmux with sessidx loaded, stub agents on PATH and a test home."""

    def __init__(self, name: str, tmp: Path, home: Path, stub_bin: Path, rc_extra: str = "",
                 cache: Path | None = None) -> None:
        self.name, self.tmp, self.stubs = name, tmp, stub_bin
        self.cache = cache or tmp / "cache"  # where the shell's sessidx keeps its rows (rc_extra may move it)
        self.out = tmp / "out"
        self.out.mkdir()
        env = {
            "PATH": f"{stub_bin}:{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(tmp), "TERM": "xterm-256color", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "SESSIDX_HOME": str(home), "XDG_CACHE_HOME": str(tmp / "cache"),
            "XDG_CONFIG_HOME": str(tmp / "config"), "XDG_DATA_HOME": str(tmp / "data"),
        }
        rc = tmp / "rc"
        rc.mkdir()
        if name == "bash":
            (rc / "bashrc").write_text(f"PS1='$ '\nPROMPT_COMMAND=\nHISTFILE=\n{rc_extra}\n"
                                       'eval "$(sessidx init bash)"\n')
            command = f"bash --noprofile --rcfile {rc}/bashrc -i"
        elif name == "zsh":
            (rc / ".zshrc").write_text(f"PS1='$ '\nHISTSIZE=100\nunsetopt beep\n{rc_extra}\n"
                                       'eval "$(sessidx init zsh)"\n')
            env["ZDOTDIR"] = str(rc)
            command = "zsh -i"
        else:
            conf = tmp / "config" / "fish"
            conf.mkdir(parents=True)
            # fish's first interactive start makes man-page completions (create_manpage_completions.py,
            # seconds of CPU) unless this folder exists: they count as made
            (tmp / "data" / "fish" / "generated_completions").mkdir(parents=True)
            (conf / "config.fish").write_text(f"set -g fish_greeting\nfunction fish_prompt; echo -n '$ '; end\n"
                                              f"{rc_extra}\nsessidx init fish | source\n")
            command = "fish -i"
        self.tmux = Tmux(command, env, cwd=tmp)
        self.tmux.prepare()

    def until_fresh_list(self) -> str:
        """The picker is up with its whole list: a key's action sent while fzf's reload-sync is
        under way can be dropped by fzf. A press over kept rows or the index reloads the fresh
        list (`sessidx lines`), which keeps its rows in a `picker-*.rows` file; the first press
        ever streams its rows instead and keeps none while fzf is open: there the list is whole
        when the first-press note has left the header (fzf's load event, after the stream put
        down its `index-*.marshal.first` marker) and the index is written (the marker gone).
        Either way fzf runs no child by then (fzf_busy): over kept rows their file is there from
        the press before, and the fresh list's feed may still be on its way (pressed away, it went
        on writing what the next press reads: under load that press was Python's)."""
        def whole(screen: str) -> bool:
            if "session>" not in screen or self.tmux.fzf_busy():
                return False
            if list(self.cache.rglob("picker-*.rows.first")):  # the last file `lines` writes
                return True
            return (INDEXING_NOTE not in screen and not list(self.cache.rglob("index-*.marshal.first"))
                    and bool(list(self.cache.rglob("index-*.marshal"))))

        return self.tmux.until(whole, "the picker's whole list")

    def run(self, line: str) -> None:
        self.tmux.type(line)
        self.tmux.send("Enter")

    def ask(self, expression_to_file: str, name: str) -> str:
        """Run a command that writes to out/NAME; return what it wrote."""
        target = self.out / name
        self.tmux.prepare()
        self.run(expression_to_file.format(out=target))
        self.tmux.until_file(target, name)
        return target.read_bytes().decode("utf-8", "surrogateescape")

    def pwd(self) -> str:
        return self.ask("builtin pwd > {out}", "pwd").rstrip("\n")

    def history(self) -> str:
        command = {"bash": "history > {out}", "zsh": "fc -ln 1 > {out}", "fish": "history > {out}"}[self.name]
        return self.ask(command, "history")

    def pick(self, query: str, key: str = "Enter", prepare: bool = True) -> None:
        if prepare:  # an empty, live line (prepare ends with Ctrl-U)
            self.tmux.prepare()
        self.tmux.send("C-o")
        self.until_fresh_list()
        self.tmux.type(query)
        self.tmux.until(lambda s: matches(s) == 1, f"one match for {query!r}")
        self.tmux.send(key)


def matches(screen: str) -> int | None:
    """fzf's count of matches, at the end of its prompt line (`session> q   1/6`), not the
    preview's scroll position."""
    found = re.search(r"(?m)^\S+> .*?\s(\d+)/\d+(?:\s|$)", screen)
    return int(found.group(1)) if found else None


@pytest.fixture(params=SHELLS)
def shell(request, tmp_path, home, stub_bin) -> Iterator[Shell]:
    require("tmux")
    require(request.param)
    for program in ("claude", "codex"):
        write_stub(stub_bin, program)
    sh = Shell(request.param, tmp_path, home, stub_bin)
    yield sh
    sh.tmux.kill()


def session_in(folder: Path, home: Path, **kw: object) -> ClaudeSession:
    folder.mkdir(parents=True, exist_ok=True)
    s = ClaudeSession(cwd=str(folder), **kw)  # type: ignore[arg-type]
    s.write(home)
    return s


@pytest.mark.shell
def test_ctrl_o_resumes_in_the_folder_and_stays_there(shell, home, tmp_path):
    folder = tmp_path / "work" / HOSTILE_DIR
    s = session_in(folder, home, prompt="Fix the flaky payment test", mode="plan", branch="HEAD")
    session_in(tmp_path / "work" / "other", home, prompt="Unrelated session")
    shell.pick("flaky payment")
    shell.tmux.until_file(shell.stubs / "claude.argv", "the stub claude")
    argv, cwd = recorded(shell.stubs, "claude")
    assert argv == [f"--resume={s.session_id}", "--model", s.model, "--effort", "medium", "--permission-mode", "plan"]
    assert cwd == str(folder)
    assert shell.pwd() == str(folder)  # the cd persists after the agent exits
    assert f"--resume={s.session_id}" in shell.history()
    assert not list((tmp_path / "work").rglob("pwned*")) and not list(tmp_path.glob("pwned*"))


@pytest.mark.shell
def test_missing_folder_runs_nothing(shell, home, tmp_path):
    session_in(tmp_path / "gone", home, prompt="Session whose folder was deleted")
    (tmp_path / "gone").rmdir()
    shell.pick("folder was deleted")
    # the picker stays open with the reason in its header; Esc leaves
    screen = shell.tmux.until(lambda s: "cannot resume: folder no longer exists" in s, "the refusal")
    assert "session>" in screen
    shell.tmux.send("Escape")
    shell.tmux.until(lambda s: "session>" not in s, "the picker to close")
    assert recorded(shell.stubs, "claude") is None
    assert shell.pwd() == str(tmp_path)


@pytest.mark.shell
@pytest.mark.parametrize("answer", ["no", "yes"])
def test_branch_mismatch_asks(shell, home, tmp_path, answer):
    """The answer is a line: a typed `yes` once left `es` for the shell (`es: command not found`)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    s = session_in(repo, home, prompt="Work on the feature branch", branch="feature/x")
    shell.pick("feature branch")
    shell.tmux.until(lambda scr: "[y/N]" in scr, "the branch question")
    shell.tmux.type(answer)
    shell.tmux.send("Enter")
    if answer == "yes":
        shell.tmux.until_file(shell.stubs / "claude.argv", "the stub claude")
        assert recorded(shell.stubs, "claude")[0][:1] == [f"--resume={s.session_id}"]
        assert shell.pwd() == str(repo)
    else:
        shell.tmux.until(lambda scr: "no" in scr.split("[y/N]")[-1], "the answer echoed")
        assert shell.pwd() == str(tmp_path)
        assert recorded(shell.stubs, "claude") is None
    assert "command not found" not in shell.tmux.screen() and "Unknown command" not in shell.tmux.screen()


@pytest.mark.shell
def test_alt_enter_carries_the_permissive_mode(shell, home, tmp_path):
    s = session_in(tmp_path / "p", home, prompt="Loose mode session", mode="bypassPermissions")
    shell.pick("Loose mode", key="M-Enter")
    shell.tmux.until_file(shell.stubs / "claude.argv", "the stub claude")
    argv, _ = recorded(shell.stubs, "claude")
    assert argv[-2:] == ["--permission-mode", "bypassPermissions"] and f"--resume={s.session_id}" in argv


@pytest.mark.shell
def test_enter_holds_the_permissive_mode_back(shell, home, tmp_path):
    session_in(tmp_path / "p", home, prompt="Loose mode session", mode="bypassPermissions")
    shell.pick("Loose mode")
    shell.tmux.until_file(shell.stubs / "claude.argv", "the stub claude")
    assert recorded(shell.stubs, "claude")[0][-2:] == ["--permission-mode", "default"]


@pytest.mark.shell
def test_codex_gets_explicit_strict_flags(shell, home, tmp_path):
    folder = tmp_path / "codex work"
    folder.mkdir()
    t = CodexThread(cwd=str(folder), title="Yolo codex thread", approval="never", sandbox="danger-full-access",
                    model="gpt-5.2", effort="low")
    write_codex_home(home, [t])
    shell.pick("Yolo codex")
    shell.tmux.until_file(shell.stubs / "codex.argv", "the stub codex")
    argv, cwd = recorded(shell.stubs, "codex")
    assert argv == ["resume", "-m", "gpt-5.2", "-a", "on-request", "-s", "workspace-write", "-C", str(folder),
                    "--", t.thread_id]
    assert cwd == str(folder)


@pytest.mark.shell
def test_escape_cancels_quietly(shell, home, tmp_path):
    session_in(tmp_path / "p", home, prompt="Never picked")
    shell.tmux.prepare()
    shell.tmux.send("C-o")
    shell.tmux.until(lambda s: "session>" in s, "the picker")
    shell.tmux.send("Escape")
    shell.tmux.until(lambda s: "session>" not in s, "the picker to close")
    assert "Traceback" not in shell.tmux.screen()
    assert shell.pwd() == str(tmp_path) and recorded(shell.stubs, "claude") is None


@pytest.mark.shell
def test_typed_resume_cds_this_shell(shell, home, tmp_path):
    folder = tmp_path / "typed it's"
    s = session_in(folder, home, prompt="Typed by hand")
    shell.tmux.prepare()
    shell.run(f"sessidx resume {s.session_id[:8]}")
    shell.tmux.until_file(shell.stubs / "claude.argv", "the stub claude")
    assert recorded(shell.stubs, "claude")[1] == str(folder)
    assert shell.pwd() == str(folder)


@pytest.mark.shell
def test_accept_zero_leaves_the_line_for_editing(shell, home, tmp_path):
    s = session_in(tmp_path / "edit", home, prompt="Edit before running")
    shell.tmux.prepare()
    shell.run("set -gx SESSIDX_ACCEPT 0" if shell.name == "fish" else "export SESSIDX_ACCEPT=0")
    shell.pick("Edit before")
    shell.tmux.until(lambda scr: f"--resume={s.session_id}" in scr and "session>" not in scr, "the line on the prompt")
    assert recorded(shell.stubs, "claude") is None
    shell.tmux.send("Enter")
    shell.tmux.until_file(shell.stubs / "claude.argv", "the stub claude after Enter")


@pytest.mark.shell
def test_user_aliases_cannot_break_it(request, tmp_path, home, stub_bin):
    """`cd`, `git` and `command` aliased or wrapped by the user: the widget still works."""
    for name in SHELLS:
        require(name)
    require("tmux")
    write_stub(stub_bin, "claude")
    extras = {
        "bash": "alias cd='echo BROKEN'; alias git=false; alias builtin='echo BROKEN'; alias command='echo BROKEN'",
        "zsh": "alias cd='echo BROKEN'; alias git=false; alias builtin='echo BROKEN'; alias -g pick=BROKEN",
        "fish": "function cd; echo BROKEN; end; function git; false; end",
    }
    for name in SHELLS:
        sub = tmp_path / name
        sub.mkdir()
        folder = sub / "aliased"
        s = session_in(folder, home, prompt=f"Aliases in {name}", session_id=f"a11a5000-0000-4000-8000-{SHELLS.index(name):012d}")
        sh = Shell(name, sub, home, stub_bin, extras[name])
        try:
            sh.pick(f"Aliases in {name}")
            sh.tmux.until_file(stub_bin / "claude.argv", f"the stub claude in {name}")
            assert recorded(stub_bin, "claude") == (
                [f"--resume={s.session_id}", "--model", s.model, "--effort", "medium", "--permission-mode", "default"],
                str(folder))
            (stub_bin / "claude.argv").unlink()
        finally:
            sh.tmux.kill()


@pytest.mark.shell
def test_ctrl_y_copies_the_command_and_stays_open(shell, home, tmp_path):
    s = session_in(tmp_path / "copy me", home, prompt="Copy this one")
    clip = shell.stubs / "wl-copy"
    clip.write_text(f"#!/bin/sh\ncat > '{shell.stubs}/clipboard'\n")
    clip.chmod(0o755)
    shell.pick("Copy this one", key="C-y")
    shell.tmux.until_file(shell.stubs / "clipboard", "the clipboard stub")
    copied = (shell.stubs / "clipboard").read_text()
    assert f"--resume={s.session_id}" in copied and copied.startswith(("\\builtin cd -- ", "builtin cd -- "))
    screen = shell.tmux.until(lambda scr: "copied (wl-copy):" in scr, "the feedback in the header")
    assert "session>" in screen  # the picker is still open
    shell.tmux.send("Escape")
    assert recorded(shell.stubs, "claude") is None


@pytest.mark.shell
def test_sessions_changed_since_the_cache_appear(shell, home, tmp_path):
    session_in(tmp_path / "old", home, prompt="Cached before")
    assert run_cli("build", env={"SESSIDX_HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache")}).returncode == 0
    session_in(tmp_path / "new", home, prompt="Written after the cache")
    shell.tmux.prepare()
    shell.tmux.send("C-o")
    shell.tmux.until(lambda s: "Cached before" in s and "Written after the cache" in s, "both sessions")
    shell.tmux.send("Escape")


@pytest.mark.parametrize("shell_name", SHELLS)
def test_custom_key_is_bound_in_every_keymap(shell_name, tmp_path):
    require(shell_name)
    snippet = ROOT / "shell" / f"sessidx.{shell_name}"
    probe = {
        "bash": f"SESSIDX_KEY='\\C-x\\C-a'; source {snippet}; "
                "for m in emacs-standard vi-command vi-insert; do "
                "bind -m $m -s | grep -qF '\"\\C-x\\C-a\": \"\\e[9970~' || exit 1; done; "
                "! bind -m emacs-standard -s | grep -qF '\"\\C-o\"'",
        "zsh": f"SESSIDX_KEY='^X^A'; source {snippet}; "
               "for m in emacs viins vicmd; do [[ $(bindkey -M $m '^X^A') == *sessidx-widget ]] || exit 1; done; "
               "[[ $(bindkey -M emacs '^O') != *sessidx-widget ]]",
        "fish": f"set -g SESSIDX_KEY \\cx\\ca; source {snippet}; bind \\cx\\ca | grep -q sessidx-widget; "
                "and bind -M insert \\cx\\ca | grep -q sessidx-widget",
    }[shell_name]
    done = run_in_shell(shell_name, probe, tmp_path)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("shell_name", SHELLS)
def test_default_key_is_ctrl_o_in_every_keymap(shell_name, tmp_path):
    require(shell_name)
    snippet = ROOT / "shell" / f"sessidx.{shell_name}"
    probe = {
        "bash": f"source {snippet}; for m in emacs-standard vi-command vi-insert; do "
                "bind -m $m -s | grep -qF '\"\\C-o\": \"\\e[9970~' || exit 1; done",
        "zsh": f"source {snippet}; for m in emacs viins vicmd; do [[ $(bindkey -M $m '^O') == *sessidx-widget ]] || exit 1; done",
        "fish": f"source {snippet}; bind \\co | grep -q sessidx-widget; and bind -M insert \\co | grep -q sessidx-widget",
    }[shell_name]
    done = run_in_shell(shell_name, probe, tmp_path)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("shell_name", SHELLS)
def test_init_without_a_name_detects_the_calling_shell(shell_name, tmp_path):
    """shellingham looks at the parent process: `sessidx init` run from zsh prints the zsh snippet."""
    require(shell_name)
    env = {k: v for k, v in os.environ.items() if k not in ("SESSIDX_SHELL", "SHELL")}
    command = f"{sys.executable} -m sessidx init"
    argv = {"bash": ["bash", "--norc", "-c", f"{command}; true"], "zsh": ["zsh", "-f", "-c", f"{command}; true"],
            "fish": ["fish", "--no-config", "-c", f"{command}; true"]}[shell_name]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, env={**env, "HOME": str(tmp_path)})
    assert done.stdout == (ROOT / "shell" / f"sessidx.{shell_name}").read_text(), done.stderr


@pytest.mark.shell
@pytest.mark.parametrize("keys", [["no such session anywhere", "Enter", "Escape"], ["C-c"]],
                         ids=["no-match", "ctrl-c"])
def test_no_match_and_ctrl_c_return_quietly(shell, home, tmp_path, keys):
    """With nothing matching, Enter keeps the picker (there is nothing to check); Esc leaves."""
    session_in(tmp_path / "p", home, prompt="Never picked either")
    shell.tmux.prepare()
    shell.tmux.send("C-o")
    shell.tmux.until(lambda s: "session>" in s, "the picker")
    for key in keys:
        if key in ("Enter", "C-c", "Escape"):
            shell.tmux.send(key)
            if key == "Enter":
                shell.tmux.until(lambda s: "session>" in s, "the picker, still open")
        else:
            shell.tmux.type(key)
            shell.tmux.until(lambda s: matches(s) == 0, "no match")
    shell.tmux.until(lambda s: "session>" not in s, "the picker to close")
    assert "Traceback" not in shell.tmux.screen()
    assert shell.pwd() == str(tmp_path) and recorded(shell.stubs, "claude") is None


def test_picker_wiring_with_a_stub_fzf(tmp_path, home, stub_bin):
    """SESSIDX_FZF and SESSIDX_FZF_OPTS: the options fzf gets, and what its answer turns into."""
    require("tmux")
    folder = tmp_path / "wired"
    s = session_in(folder, home, prompt="Wired session", mode="auto")
    write_stub(stub_bin, "claude")
    fzf = stub_bin / "fake-fzf"
    # Records its argv, then answers as fzf does after `print(alt-enter)+print(HEX)+accept`: the key
    # line, the checked key in hex, then the picked line.
    fzf.write_text(f"#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > '{stub_bin}/fzf.args'\n"
                   "cat > /dev/null\nhex=$(printf 'claude:%s' \"$PICK\" | od -An -tx1 | tr -d ' \\n')\n"
                   "printf 'alt-enter\\n%s\\nshown\\tclaude:%s\\n' \"$hex\" \"$PICK\"\n")
    fzf.chmod(0o755)
    sh = Shell("bash", tmp_path, home, stub_bin,
               f"export SESSIDX_FZF={fzf} SESSIDX_FZF_OPTS='--height=40% --no-mouse' PICK={s.session_id}")
    try:
        sh.tmux.prepare()
        sh.tmux.send("C-o")
        sh.tmux.until_file(stub_bin / "claude.argv", "the stub claude")
    finally:
        sh.tmux.kill()
    args = (stub_bin / "fzf.args").read_text().splitlines()
    assert args[-2:] == ["--height=40%", "--no-mouse"]  # the user's options come last and win
    assert "--delimiter=\t" in args and "--nth=1" in args and not any(a.startswith("--with-nth") for a in args)
    # Enter and Alt-Enter are held until fzf has matched the query, then checked (picker.hold)
    assert any(a.startswith("--bind=enter:change-list-label(enter)+rebind(result)+transform:") for a in args)
    assert any(a.startswith("--bind=alt-enter:change-list-label(alt-enter)+rebind(result)+transform:")
               for a in args)
    assert any(a.startswith("--bind=result:unbind(result)+transform:SESSIDX_ROW={1}; export SESSIDX_ROW; "
                            "case $FZF_LIST_LABEL in enter|enter-again) exec ")
               and " check {-1};; alt-enter|alt-enter-again) exec " in a
               and a.endswith(" check --allow-permissive {-1};; esac") for a in args)
    assert any(a.startswith("--preview=") and a.endswith(" preview --shell bash {-1}") for a in args)
    # no cache yet: the rows stream in on fzf's stdin (no reload), and the note leaves at its end
    assert not any("lines --stream" in a for a in args) and "--bind=start:unbind(result)" in args
    assert any(a.startswith("--bind=load:transform:") and "change-header(Enter resume" in a for a in args)
    assert any(a.startswith("--bind=ctrl-f:change-list-label()+unbind(result)+transform(") and a.endswith(" cycle mode)")
               for a in args)
    # a keystroke: the content search in content mode, the app:/since: words in title mode
    assert any(a.startswith("--bind=change:change-list-label()+unbind(result)+transform:") and "lines --content {%s" in a
               for a in args)
    argv, cwd = recorded(stub_bin, "claude")
    assert argv[-2:] == ["--permission-mode", "auto"] and cwd == str(folder)  # alt-enter: carried


@pytest.mark.shell
def test_other_apps_resume_through_the_same_widget(shell, home, tmp_path):
    """A Qwen Code session (issue 4): the picker and the snippets know no app by name."""

    folder = tmp_path / "qwen project"
    folder.mkdir()
    sid = "74ae506b-4b3c-49a5-9929-21313abcaab4"
    base = {"sessionId": sid, "cwd": str(folder), "gitBranch": "HEAD", "timestamp": "2026-11-29T22:27:09.839Z"}
    chat = home / ".qwen/projects/-qwen/chats" / f"{sid}.jsonl"
    chat.parent.mkdir(parents=True)
    chat.write_text(json.dumps({**base, "type": "user", "message": {"parts": [{"text": "Refresh tokens please"}]}})
                    + "\n" + json.dumps({**base, "type": "assistant", "model": "qwen3-max"}) + "\n")
    write_stub(shell.stubs, "qwen")
    shell.pick("Refresh tokens")
    shell.tmux.until_file(shell.stubs / "qwen.argv", "the stub qwen")
    assert recorded(shell.stubs, "qwen") == (["--resume", sid, "-m", "qwen3-max"], str(folder))


@pytest.mark.shell
def test_the_prompt_stays_and_typed_text_comes_back(shell, home, tmp_path):
    """The resume line shows after the prompt, as if typed (zsh once drew it at column 0), and
    what was typed before Ctrl-O is on the next prompt's line (bash and fish once dropped it)."""
    folder = tmp_path / "proj"
    session_in(folder, home, prompt="Half typed session")
    shell.tmux.prepare()
    typed = "echo half-typed  'a  b' $HOME"  # spaces, quotes and a $ come back as they were
    shell.tmux.type(typed)
    shell.tmux.until(lambda s: typed in s, "the typed text")
    shell.pick("Half typed", prepare=False)
    shell.tmux.until_file(shell.stubs / "claude.argv", "the stub claude")
    screen = shell.tmux.until(lambda s: re.search(rf"(?m)^\$ {re.escape(typed)}\s*$", s) is not None,
                              "the typed text back on the next prompt")
    assert re.search(r"(?m)^\$ \\?builtin cd -- ", screen), screen


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_an_alias_named_sessidx_does_not_break_loading(shell, tmp_path):
    """`sessidx() {` under an alias of that name was a syntax error in bash and zsh."""
    require(shell)
    snippet = ROOT / "shell" / f"sessidx.{shell}"
    setup = "shopt -s expand_aliases; " if shell == "bash" else ""
    probe = {"bash": "type -t sessidx-widget && declare -F sessidx", "zsh": "whence -w sessidx-widget"}[shell]
    done = run_in_shell(shell, f"{setup}alias sessidx='echo aliased'\nsource {snippet}\n{probe}", tmp_path)
    assert done.returncode == 0 and "sessidx" in done.stdout, done.stderr
    assert "syntax error" not in done.stderr and "parse error" not in done.stderr


@pytest.mark.shell
def test_fish_vi_mode_is_back_in_insert_after_a_resume(tmp_path, home, stub_bin):
    require("tmux")
    require("fish")
    write_stub(stub_bin, "claude")
    sh = Shell("fish", tmp_path, home, stub_bin, rc_extra="fish_vi_key_bindings")
    try:
        folder = tmp_path / "vi"
        session_in(folder, home, prompt="Vi mode session")
        sh.tmux.prepare()
        sh.tmux.send("Escape")  # Ctrl-O pressed in normal mode
        sh.pick("Vi mode", prepare=False)
        sh.tmux.until_file(stub_bin / "claude.argv", "the stub claude")
        # typed straight away, as a person would: lost if the line editor were in normal mode
        target = sh.out / "mode"
        sh.tmux.until(lambda s: s.rstrip().endswith("$"), "the next prompt")
        sh.run(f"echo $fish_bind_mode > {target}")
        sh.tmux.until_file(target, "the mode")
        assert target.read_text().strip() == "insert"
    finally:
        sh.tmux.kill()


@pytest.mark.shell
def test_ctrl_c_at_the_branch_question_is_quiet(shell, home, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    session_in(repo, home, prompt="Interrupted question", branch="feature/y")
    shell.pick("Interrupted question")
    shell.tmux.until(lambda scr: "[y/N]" in scr, "the branch question")
    shell.tmux.send("C-c")
    shell.tmux.until(lambda scr: re.search(r"(?m)^\$[ \t]*$", scr.split("[y/N]")[-1]) is not None, "a fresh prompt")
    assert shell.pwd() == str(tmp_path)  # the line editor is usable, and nothing ran
    assert recorded(shell.stubs, "claude") is None
    assert "Traceback" not in shell.tmux.screen()


@pytest.mark.shell
def test_ctrl_a_cycles_the_app_and_ctrl_s_this_folder(shell, home, tmp_path):
    session_in(tmp_path / "elsewhere", home, prompt="A claude session elsewhere")
    write_codex_home(home, [CodexThread(cwd=str(tmp_path), title="A codex thread here")])
    shell.tmux.prepare()
    shell.tmux.send("C-o")
    shell.tmux.until(lambda s: "A claude session elsewhere" in s and "A codex thread here" in s, "both apps")
    shell.tmux.send("C-a")
    # (the prompt and the header change in one action, but a capture can fall between their draws)
    screen = shell.tmux.until(lambda s: "claude>" in s and "A codex thread here" not in s and "app claude" in s,
                              "claude only")
    assert "app claude: 1 of 2" in screen and "claude 1 codex 1" in screen
    shell.tmux.send("C-a")
    shell.tmux.until(lambda s: "codex>" in s and "A claude session elsewhere" not in s, "codex only")
    shell.tmux.send("C-a")
    shell.tmux.until(lambda s: "session>" in s and "A claude session elsewhere" in s, "all apps again")
    shell.tmux.send("M-a")  # and back the other way: the last app first
    shell.tmux.until(lambda s: "codex>" in s and "A claude session elsewhere" not in s, "codex, backwards")
    shell.tmux.send("M-a")
    shell.tmux.until(lambda s: "claude>" in s and "A codex thread here" not in s, "claude, backwards")
    shell.tmux.send("M-a")
    shell.tmux.until(lambda s: "session>" in s and "A codex thread here" in s, "all apps, backwards")
    shell.tmux.send("C-s")  # the shell's folder is tmp_path: the codex thread's
    screen = shell.tmux.until(lambda s: "session@here>" in s and "A claude session elsewhere" not in s,
                              "this folder only")
    assert "A codex thread here" in screen and "scope: this folder" in screen
    shell.tmux.send("Escape")


@pytest.mark.shell
def test_ctrl_s_steps_to_this_repository_with_its_worktrees(shell, home, tmp_path):
    """Issue 18: Ctrl-S was this exact folder only; the repository's other folders and its
    worktrees (`.claude/worktrees/…`, or anywhere else) were left out."""
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                    "--allow-empty", "-m", "first"], check=True)
    for name, where in (("inside", repo / ".claude" / "worktrees" / "fix"), ("outside", tmp_path / "wt-out")):
        subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", "-b", name, str(where)], check=True)
    session_in(repo, home, prompt="Session at the top", branch="main")
    session_in(repo / "src", home, prompt="Session in a subfolder", branch="main")
    session_in(repo / ".claude" / "worktrees" / "fix", home, prompt="Session in a claude worktree", branch="inside")
    session_in(tmp_path / "wt-out", home, prompt="Session in an outside worktree", branch="outside")
    session_in(tmp_path / "unrelated", home, prompt="Session somewhere else")
    shell.run(f"cd {repo}")
    shell.tmux.prepare()
    shell.tmux.send("C-o")
    shell.tmux.until(lambda s: "Session somewhere else" in s and "Session at the top" in s, "every session")
    shell.tmux.send("C-s")
    shell.tmux.until(lambda s: "session@here>" in s and "Session in a subfolder" not in s, "this folder")
    shell.tmux.send("C-s")
    screen = shell.tmux.until(lambda s: "session@repo>" in s and "Session in an outside worktree" in s,
                              "this repository")
    assert all(t in screen for t in ("Session at the top", "Session in a subfolder", "Session in a claude worktree"))
    assert "Session somewhere else" not in screen and "scope: this repository" in screen
    shell.tmux.send("C-s")
    shell.tmux.until(lambda s: "session>" in s and "Session somewhere else" in s, "everywhere again")
    shell.tmux.send("Escape")


@pytest.mark.shell
def test_alt_n_steps_the_preview_through_the_matches(shell, home, tmp_path):
    """Content mode: the preview opens at the best match, words marked; Alt-N shows the next
    matching message and Alt-P the previous one, round and round (issue 19 point 4)."""
    s = session_in(tmp_path / "ops", home, prompt="Run the test suite", turns=1)
    path = next(home.rglob(f"{s.session_id}.jsonl"))
    with path.open("a") as f:
        for marker in ("alphaword", "betaword", "gammaword"):  # 10 KB apart: rows of their own
            for i in range(120):
                f.write(json.dumps({"type": "user", "sessionId": s.session_id, "cwd": s.cwd, "message": {
                    "role": "user", "content": f"Unrelated filler message number {i} about nothing at all"}}) + "\n")
            f.write(json.dumps({"type": "user", "sessionId": s.session_id, "cwd": s.cwd, "message": {
                "role": "user", "content": f"the nginx upstream timeout again, {marker}"}}) + "\n")
    shell.tmux.prepare()
    shell.tmux.send("C-o")
    shell.tmux.until(lambda sc: "session>" in sc and "Run the test suite" in sc, "the picker")
    shell.tmux.send("C-f")
    shell.tmux.until(lambda sc: "content>" in sc and "what was said" in sc, "content mode")
    shell.tmux.type("upstream timeout")
    # the content index's end (picker.INDEX_DONE: a mark put into the query and taken out again,
    # each a search) and the last keystroke's search in: a list made after Alt-N is a new focus,
    # which starts the matches again. So nothing on its way either (fzf_busy): under load the
    # screen showed 1/1 while the mark's last search still ran, and its list came after Alt-N
    # (2 runs in 180, three at once beside two busy loops)
    def settled(screen: str) -> bool:
        return (not shell.tmux.fzf_busy()
                and bool(re.search(r"(?m)^content> upstream timeout +1/1 *$", screen)))

    shell.tmux.until(settled, "the index done and the search settled")
    markers = ("alphaword", "betaword", "gammaword")

    def under(screen: str, title: str) -> str | None:
        """The marker in the message under the preview's own title (not fzf's label on its border)."""
        lines = screen.split("\n")
        at = next((i for i, line in enumerate(lines) if f"│ ── {title} ·" in line), None)
        said = lines[at + 1] if at is not None and at + 1 < len(lines) else ""
        return next((w for w in markers if w in said), None)

    shown = []
    for key, title in (("", "best match"), ("M-n", "match 2 of 3"), ("M-n", "match 3 of 3"), ("M-n", "best match"),
                       ("M-p", "match 3 of 3")):
        if key:
            shell.tmux.send(key)
        shown.append(under(shell.tmux.until(lambda sc, t=title: under(sc, t) is not None, title), title))
    assert len(set(shown[:3])) == 3 and shown[3] == shown[0] and shown[4] == shown[2], shown
    colour = shell.tmux._tmux("capture-pane", "-p", "-e", "-t", "t")
    assert re.search(r"33m(\x1b\[[0-9;]*m)*upstream", colour), colour  # the words marked
    shell.tmux.send("Escape")


@pytest.mark.shell
def test_the_first_press_opens_at_once_and_fills_in(shell, home, tmp_path):
    """No cache yet (a first run): the picker opens with a note instead of a blank screen while
    indexing, and the rows arrive through fzf's own reload."""
    session_in(tmp_path / "first", home, prompt="Seen on the very first press")
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").rglob("index-*"))
    shell.tmux.prepare()
    shell.tmux.send("C-o")
    # (the note, there while the rows stream in, may be gone before a screen is read: one
    # session streams in at once; picker_states_test watches it over 600)
    shell.tmux.until(lambda s: "session>" in s, "the frame")
    shell.tmux.until(lambda s: "Seen on the very first press" in s and "for the first time" not in s,
                     "the rows, once indexed, and the note gone")
    shell.tmux.send("Escape")


@pytest.mark.shell
def test_ctrl_f_finds_a_session_by_what_was_said_and_resumes_it(shell, home, tmp_path):
    """Issue 11's user: Ctrl-O, Ctrl-F, three words from an old conversation, Enter."""
    said = [f"Unrelated filler message number {i}" for i in range(40)]
    said[20] = "Paste of the nginx config: the upstream timeout is 30s"
    s = session_in(tmp_path / "ops", home, prompt="Run the test suite", turns=1)
    path = next(home.rglob(f"{s.session_id}.jsonl"))
    with path.open("a") as f:
        for text in said:
            f.write(json.dumps({"type": "user", "sessionId": s.session_id, "cwd": s.cwd,
                                "message": {"role": "user", "content": text}}) + "\n")
    other = session_in(tmp_path / "other", home, prompt="Run the test suite")
    shell.tmux.prepare()
    shell.tmux.send("C-o")
    shell.tmux.until(lambda sc: "session>" in sc and "Run the test suite" in sc, "the picker")
    shell.tmux.send("C-f")
    shell.tmux.until(lambda sc: "content>" in sc and "what was said" in sc, "content mode")
    shell.tmux.type("nginx upstream timeo")
    # one row, and the preview showing the hit in context
    shell.tmux.until(lambda sc: "upstream" in sc and matches(sc) == 1
                     and "best match" in sc, "the one session that said it")
    shell.tmux.send("C-a")  # Claude's sessions only: the same one, the query kept
    shell.tmux.until(lambda sc: "content:claude>" in sc and "upstream" in sc and "app claude:" in sc,
                     "content mode, narrowed to Claude")
    shell.tmux.send("Enter")
    shell.tmux.until_file(shell.stubs / "claude.argv", "the stub claude")
    argv, cwd = recorded(shell.stubs, "claude")
    assert argv[:1] == [f"--resume={s.session_id}"] and cwd == str(tmp_path / "ops")
    assert other.session_id not in argv
