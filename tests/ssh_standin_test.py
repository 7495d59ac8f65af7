"""Hosts against a stand-in for ssh on PATH (no sshd): it logs its argv and plays a host that is
this machine (it runs the command after the host word with `sh -c`), or one that closes its
output and lives on. What no real ssh would let a test see: every word sessidx hands ssh."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from homes import ClaudeSession, big_host_answer

from tests.conftest import require, run_cli
from tests.stubs import recorded, write_stub

STANDIN = r'''#!{python}
import json, os, sys
args = sys.argv[1:]
with open({log!r}, "a") as f:
    f.write(json.dumps(args) + "\n")
if os.environ.get("STANDIN_HANG"):  # the host end closes its output and lives on (and so does a child of it)
    import subprocess
    child = subprocess.Popen(["sleep", "60"])
    with open({pids!r}, "a") as f:
        f.write(f"{{os.getpid()}} {{child.pid}}\n")
    os.close(1)
    os.close(2)
    child.wait()
    sys.exit(0)
if "-G" in args:  # `ssh -G`: no ControlPath of the user's
    sys.exit(0)
if os.environ.get("STANDIN_ROWS"):  # a host (not this code) that answers every row it has, whatever is asked
    with open(os.environ["STANDIN_ROWS"], "rb") as f:
        sys.stdout.buffer.write(f.read())
    sys.exit(0)
end = args.index("--")  # a host that is this machine: what follows the host word, run by sh
os.execvp("sh", ["sh", "-c", " ".join(args[end + 2:])])
'''


class StandIn:
    def __init__(self, folder: Path) -> None:
        self.bin = folder / "bin"
        self.bin.mkdir(parents=True, exist_ok=True)
        self.log = folder / "ssh.log"
        self.pids = folder / "ssh.pids"
        script = self.bin / "ssh"
        script.write_text(STANDIN.format(python=sys.executable, log=str(self.log), pids=str(self.pids)))
        script.chmod(0o755)
        write_stub(self.bin, "claude")
        self.path = f"{self.bin}:{os.environ['PATH']}"

    def calls(self) -> list[list[str]]:
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []

    def run(self, hosts: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, env={"PATH": self.path, "SESSIDX_HOSTS": hosts, "SESSIDX_REMOTE_PYTHON": sys.executable,
                                   "XDG_RUNTIME_DIR": str(self.bin.parent / "run"), **env})


@pytest.fixture
def standin(tmp_path: Path) -> StandIn:
    return StandIn(tmp_path / "standin")


def one_line_refusal(done: subprocess.CompletedProcess[str], name: str) -> None:
    lines = done.stderr.strip().splitlines()
    assert done.returncode != 0 and len(lines) == 1, done.stderr
    assert f"not a host name: {name!r}" in lines[0] and "Traceback" not in done.stderr


# Host names are host names: nothing of one reaches ssh as an option ---------------------------------

BRACKETS = ["[-F.x]", "[-Elogfile]", "[-D1080]", "[-G]", "[-oProxyCommand=x]", "[box]", "[::1]x", "[::1]:-1",
            "me@-oProxyCommand=x", "-F.x@box", "box]", "[::1"]


@pytest.mark.parametrize("name", BRACKETS)
def test_a_bracketed_or_dashed_host_name_is_refused_in_one_line_and_never_reaches_ssh(standin, name):
    refreshed = standin.run(name, "hosts", "--refresh")
    assert refreshed.returncode == 0 and refreshed.stderr.count("\n") == 1, refreshed.stderr
    assert f"not a host name, ignored: {name!r}: " in refreshed.stderr
    for args in (["list", f"--host={name}"], ["search", f"--host={name}", "--", "retry"],
                 ["resume", "--shell", "bash", f"@{name}/claude:0f6c2b1e-5d4a-4c3b-9a8f-7e6d5c4b3a21"]):
        one_line_refusal(standin.run(name, *args), name)
    listed = standin.run(name, "list", "--host", "all", "--json")
    assert listed.returncode == 0 and f"ignored: {name!r}" in listed.stderr
    assert standin.calls() == []


def ssh_options(argv: list[str]) -> list[str]:
    """The words ssh reads as options: those before the first `--`."""
    assert "--" in argv, argv
    return argv[:argv.index("--")]


@pytest.mark.parametrize("name,target,port", [("[::1]:2222", "::1", "2222"), ("me@box", "me@box", None),
                                              ("box:2200", "box", "2200"), ("fe80::1%lo", "fe80::1%lo", None)])
def test_every_call_ends_ssh_options_before_the_host_and_the_resume_line_too(standin, home, tmp_path, name, target,
                                                                             port):
    folder = tmp_path / "work"
    folder.mkdir()
    session = ClaudeSession(cwd=str(folder), prompt="retry logic")
    session.write(home)
    listed = standin.run(name, "list", "--host", name, "--json")
    assert listed.returncode == 0, listed.stderr
    assert [json.loads(line)["host"] for line in listed.stdout.splitlines()] == [name]
    lines = {}
    for shell in ("bash", "zsh", "fish"):
        done = standin.run(name, "resume", "--shell", shell, f"@{name}/claude:{session.session_id}")
        assert done.returncode == 0, done.stderr
        lines[shell] = done.stdout.strip()
    calls = standin.calls()
    assert len(calls) >= 4
    for argv in calls:  # the background calls: the host word right after `--`, the port alone an option's value
        options = ssh_options(argv)
        assert argv[len(options) + 1] == target
        assert not [w for w in options if target in w or (w.startswith("-") and name in w)], argv
        assert (options[options.index("-p") + 1] == port) if port else "-p" not in options
    for shell, line in lines.items():  # the resume line, read by the shell it is for
        require(shell)
        standin.log.unlink()
        (standin.bin / "claude.argv").unlink(missing_ok=True)
        subprocess.run([shell, "-c", line], env={**os.environ, "PATH": standin.path}, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=30)
        [argv] = standin.calls()
        options = ssh_options(argv)
        assert options == ["-t", *(["-p", port] if port else [])] and argv[len(options) + 1] == target, argv
        ran = recorded(standin.bin, "claude")
        assert ran is not None and ran[1] == str(folder) and ran[0][:1] == [f"--resume={session.session_id}"]


# Every host call within its timeout, however the host end behaves ----------------------------------


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")  # (a zombie no init reaped is gone all the same)


@pytest.mark.slow  # six commands, each waiting out a real 3 s timeout
def test_a_host_that_closes_its_output_and_lives_on_is_cut_off_at_the_timeout(standin, home, tmp_path):
    session = ClaudeSession(cwd=str(tmp_path), prompt="retry logic")
    session.write(home)
    bound = 3.0
    took = {}
    for args in (["hosts", "--refresh"], ["list", "--host", "hang"], ["list", "--host", "all"],
                 ["resume", "--shell", "bash", f"@hang/claude:{session.session_id}"],
                 ["search", "--host", "all", "--", "retry"], ["search", "--host", "hang", "--", "retry"]):
        started = time.monotonic()
        done = standin.run("hang", *args, STANDIN_HANG="1", SESSIDX_HOSTS_TIMEOUT=f"{bound:g}")
        took[" ".join(args[:3])] = elapsed = time.monotonic() - started
        assert "Traceback" not in done.stderr
        assert "hang did not answer within 3 s" in done.stdout + done.stderr, (args, done.stderr)
        assert elapsed < bound + 3, (args, elapsed)  # the goal is + 1 s; + 3 for a loaded 2-core machine
    print("host that closes its output and sleeps, SESSIDX_HOSTS_TIMEOUT=3:",
          ", ".join(f"{name} {t:.2f} s" for name, t in took.items()))
    pids = [int(p) for line in standin.pids.read_text().splitlines() for p in line.split()]
    assert pids  # ssh (the stand-in) and the child it left behind: the whole group ended at the bound
    deadline = time.monotonic() + 10
    while any(map(alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in pids if alive(p)]


# A host's size does not reach the key press ----------------------------------------------------------


def test_a_host_of_60_mib_is_cut_to_its_newest_sessions_before_any_key_press(standin, home, tmp_path):
    ClaudeSession(cwd="/w/local", prompt="a local one").write(home)
    size = big_host_answer(tmp_path / "answer")
    assert 60 << 20 <= size < 64 << 20  # under the output cap: every row valid, all of them sent
    done = standin.run("big", "hosts", "--refresh", STANDIN_ROWS=str(tmp_path / "answer"), SESSIDX_HOSTS_TIMEOUT="60")
    said = re.search(r"^big  (\d+) sessions \(the newest ([\d,]+) of 63,000 kept: SESSIDX_HOST_ROWS", done.stdout, re.M)
    assert done.returncode == 0 and said, done.stdout
    kept = int(said[1])
    assert said[2].replace(",", "") == said[1] and 400 < kept <= 1000  # a row of 1 KB: the text budget, 512 KiB
    cached = list((tmp_path / "cache" / "sessidx").glob("host-*.marshal"))
    assert len(cached) == 1 and cached[0].stat().st_size < 1 << 20
    lines = standin.run("big", "lines").stdout.splitlines()
    host_lines = [line for line in lines if "\t@big/claude:" in line]
    assert len(host_lines) == kept and any("a local one" in line for line in lines)
    newest = json.loads((tmp_path / "answer").read_bytes().split(b"\n")[1])[0][1]
    assert host_lines[0].endswith(f"@big/claude:{newest}")


def test_a_host_of_this_code_sends_only_its_newest_and_says_how_many_it_has(standin, home, tmp_path):
    sessions = [ClaudeSession(cwd=f"/w/{n}", prompt=f"session {n}", mtime=time.time() - 100 * i)
                for i, n in enumerate("abcde")]
    for s in sessions:
        s.write(home)
    for _ in range(3):  # a full answer, then `same` (or a delta) from the rows kept on each side
        listed = standin.run("here", "list", "--host", "here", "--json", SESSIDX_HOST_ROWS="3")
        assert listed.returncode == 0 and "here: the newest 3 of 5 kept" in listed.stderr, listed.stderr
        ids = [json.loads(line)["id"] for line in listed.stdout.splitlines() if json.loads(line)["host"] == "here"]
        assert ids == [s.session_id for s in sessions[:3]]
    said = standin.run("here", "hosts", SESSIDX_HOST_ROWS="3").stdout
    assert "here  3 sessions (the newest 3 of 5 kept: SESSIDX_HOST_ROWS keeps more)" in said
    asked = [argv[argv.index("--") + 2] for argv in standin.calls() if "-G" not in argv]
    assert len(asked) >= 3 and all(" - --rows 3" in command for command in asked), asked


def test_a_full_answer_past_the_bound_is_read_only_as_far_as_the_kept_rows_reach():
    from sessidx.remote import _first_rows

    rows = [["claude", f"id-{i}", "/w", "x" * 3000] for i in range(5000)]  # 15 MB
    body = json.dumps(rows).encode()
    first, whole = _first_rows(body, 10)
    assert first == rows[:10] and not whole
    assert _first_rows(json.dumps(rows[:3]).encode(), 10) == (rows[:3], True)
    assert _first_rows(b" {" + body, 10) == (None, False)  # not an array: no rows
    assert _first_rows(body[:-1], 10_000) == (None, True)  # within the bound and damaged: no rows (a note)
