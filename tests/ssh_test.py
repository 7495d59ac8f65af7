"""Sessions on SSH hosts, against real sshd servers on the loopback (tests/sshd.py): listing, a
host that is down or silent, one that wants a password, hostile rows, content search over two
hosts, and resume through `ssh -t` in real bash, zsh and fish in tmux."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from homes import ClaudeSession

from tests.conftest import require, run_cli
from tests.sshd import Client, Silent, Sshd, dead_host
from tests.stubs import recorded, write_stub

PY_DIR = str(Path(sys.executable).parent)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Client]:
    c = Client(tmp_path / "ssh")
    yield c
    c.close()


def make_host(client: Client, tmp_path: Path, alias: str, **kw: object) -> Sshd:
    """A host with its own agent home (`.home`), its own sessidx cache and a PATH of stub agents."""
    folder = tmp_path / alias
    stubs = folder / "bin"
    stubs.mkdir(parents=True)
    for program in ("claude", "codex"):
        write_stub(stubs, program)
    return Sshd(client, alias, folder, folder / "home", path=f"{stubs}:{PY_DIR}:/usr/bin:/bin", **kw)  # type: ignore[arg-type]


def host_env(client: Client, hosts: str) -> dict[str, str]:
    """The client's settings, and the test interpreter as the hosts' python3 (a pyenv shim
    found first on PATH costs a third of a second per call)."""
    return {**client.env(hosts), "SESSIDX_REMOTE_PYTHON": sys.executable}


def sessidx(client: Client, hosts: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env={**host_env(client, hosts), "SESSIDX_HOSTS_TIMEOUT": "20", **env})


def rows(done: subprocess.CompletedProcess[str]) -> list[dict]:
    return [json.loads(line) for line in done.stdout.splitlines()]


# Listing -------------------------------------------------------------------------------------------


def test_list_host_is_what_sessidx_there_lists_with_a_host_field(client, tmp_path, realdata):
    alpha = make_host(client, tmp_path, "alpha")
    shutil.copytree(realdata("claude-home"), alpha.home, dirs_exist_ok=True)
    done = sessidx(client, "alpha", "list", "--host", "alpha", "--json")
    assert done.returncode == 0, done.stderr
    got = rows(done)
    there = rows(run_cli("list", "--json", "--archived", env={"SESSIDX_HOME": str(alpha.home),
                                                              "XDG_CACHE_HOME": str(tmp_path / "c2")}))
    # a host's rows say nothing of Enter's refusals: those are checked on the host, when asked
    assert got and [{k: v for k, v in r.items() if k != "host"} for r in got] == [
        {k: v for k, v in r.items() if k != "refused"} for r in there]
    assert {r["host"] for r in got} == {"alpha"}
    # nothing written on the host but sessidx's own cache: its code and its index
    assert {p.name.split("-")[0].split(".")[0] for p in (alpha.cache / "sessidx").iterdir()} <= {"remote", "index",
                                                                                                  "help"}
    # the local table has a host column
    table = sessidx(client, "alpha", "list", "--host", "all")
    assert table.returncode == 0 and all(line.split()[1] == "alpha" for line in table.stdout.splitlines())


def test_two_hosts_merge_newest_first_and_the_app_filter_applies(client, tmp_path, home):
    alpha, beta = make_host(client, tmp_path, "alpha"), make_host(client, tmp_path, "beta")
    ClaudeSession(cwd="/srv/a", prompt="on alpha", mtime=time.time() - 100).write(alpha.home)
    ClaudeSession(cwd="/srv/b", prompt="on beta", mtime=time.time() - 50).write(beta.home)
    ClaudeSession(cwd="/srv/l", prompt="local one", mtime=time.time() - 10).write(home)
    done = sessidx(client, "alpha beta", "list", "--host", "all", "--json")
    assert done.returncode == 0, done.stderr
    assert [(r["host"], r["title"]) for r in rows(done)] == [(None, "local one"), ("beta", "on beta"),
                                                              ("alpha", "on alpha")]
    assert rows(sessidx(client, "alpha beta", "list", "--host", "beta", "--app", "codex", "--json")) == []


def test_nothing_is_contacted_unless_a_host_is_named(client, tmp_path, home):
    ClaudeSession(cwd="/w").write(home)
    alpha = make_host(client, tmp_path, "alpha")
    run_cli("list", env=client.env(""), check=True)
    run_cli("lines", env=client.env(""), check=True)
    assert not alpha.cache.exists()  # no call ever reached it
    named_none = run_cli("hosts", env=client.env(""))
    assert named_none.returncode == 0 and named_none.stdout == ""
    assert named_none.stderr == "sessidx: no SSH hosts named (SESSIDX_HOSTS, or ~/.config/sessidx/hosts: one a line)\n"


def _refresh_in_process(client: Client, hosts: str, monkeypatch: pytest.MonkeyPatch) -> list:
    from sessidx import remote
    from sessidx.config import current_env
    from sessidx.hosts import configured

    for key, value in {**host_env(client, hosts), "SESSIDX_HOSTS_TIMEOUT": "20"}.items():
        monkeypatch.setenv(key, value)
    env = current_env()
    return remote.refresh(env, configured(env)[0])


def test_a_refresh_after_a_change_gets_only_what_changed_and_ends_as_a_full_listing(client, tmp_path, monkeypatch):
    from sessidx import remote
    from sessidx.config import current_env
    from sessidx.hosts import host_named, read_cache

    alpha = make_host(client, tmp_path, "alpha")
    now = time.time()
    kept = ClaudeSession(cwd="/srv/kept", prompt="kept", mtime=now - 300)
    moved = ClaudeSession(cwd="/srv/moved", prompt="moves on", mtime=now - 200)
    gone = ClaudeSession(cwd="/srv/gone", prompt="is deleted", mtime=now - 100)
    paths = {s.prompt: s.write(alpha.home) for s in (kept, moved, gone)}
    applied: list[int] = []
    real_applied = remote._applied
    monkeypatch.setattr(remote, "_applied", lambda *a: applied.append(1) or real_applied(*a))
    first = _refresh_in_process(client, "alpha", monkeypatch)[0]
    assert first.note is None and len(first.sessions) == 3 and not applied  # nothing cached: every row
    digest = first.digest
    again = _refresh_in_process(client, "alpha", monkeypatch)[0]
    assert again.digest == digest and not applied  # nothing changed there: `same`, the rows stand
    ClaudeSession(cwd="/srv/moved", prompt="moves on", session_id=moved.session_id, turns=2, mtime=now).write(
        alpha.home)
    paths["is deleted"].unlink()
    ClaudeSession(cwd="/srv/new", prompt="new there", mtime=now - 50).write(alpha.home)
    heard = _refresh_in_process(client, "alpha", monkeypatch)[0]
    assert applied and heard.note is None and heard.digest not in (None, digest)
    cached = read_cache(current_env(), host_named(current_env(), "alpha")).sessions
    assert [(s.cwd, s.title) for s in cached] == [("/srv/moved", "moves on (turn 2)"), ("/srv/new", "new there"),
                                                  ("/srv/kept", "kept")]
    full = remote.fetch(current_env(), host_named(current_env(), "alpha"))  # no digest: every row
    assert [tuple(s) for s in full.sessions] == [tuple(s) for s in cached] and full.digest == heard.digest


def test_a_quiet_host_answers_same_without_listing_and_still_sees_a_change(client, tmp_path, monkeypatch):
    import marshal

    from sessidx import remote
    from sessidx.config import current_env
    from sessidx.hosts import host_named
    from sessidx.hostside import SETTLED

    alpha = make_host(client, tmp_path, "alpha")
    sessions = [ClaudeSession(cwd=f"/srv/{n}", prompt=n, mtime=time.time() - 100 - i) for i, n in enumerate("abc")]
    for s in sessions:
        s.write(alpha.home)
    for _ in range(SETTLED + 2):  # nothing changes: after SETTLED builds, one is watched; then none is needed
        heard = _refresh_in_process(client, "alpha", monkeypatch)[0]
        assert heard.note is None and len(heard.sessions) == 3
    kept = alpha.cache / "sessidx" / "remote" / "rows" / "fresh.marshal"
    code, digest, count, settled, stamp, record, keep, total = marshal.loads(kept.read_bytes())
    assert digest == heard.digest and count == total == 3 and keep == 1000 and type(record) is bytes
    # the answer comes from what was kept (a count no build would make), not from a listing
    kept.write_bytes(marshal.dumps((code, digest, 7, settled, stamp, record, keep, total)))
    host = host_named(current_env(), "alpha")
    reply, note = remote._ask_rows(current_env(), host, 20, digest)
    assert note is None and reply.out == f"sessidx-rows same {digest} 7 3\n".encode()
    ClaudeSession(cwd="/srv/a", prompt="a", session_id=sessions[0].session_id, turns=2).write(alpha.home)
    reply, note = remote._ask_rows(current_env(), host, 20, digest)
    assert reply.out.startswith(b"sessidx-rows delta ") and reply.out.split(b"\n")[0].endswith(b" 3 3")
    heard = _refresh_in_process(client, "alpha", monkeypatch)[0]
    assert heard.note is None and ("/srv/a", "a (turn 2)") in [(s.cwd, s.title) for s in heard.sessions]


def test_a_hostile_delta_is_checked_as_every_row_and_means_a_full_listing_next(tmp_path):
    from sessidx import remote
    from sessidx.hosts import Heard, Host, Reply

    host = Host("alpha", "alpha", None)
    known = Heard(host, None, 1, rows=[["alpha", "claude", GOOD_ID, "/w", None, "t", 5, None, None, None, None, None,
                                        None, False, None]])
    known.digest = "abc"
    body = json.dumps({"gone": [["claude", GOOD_ID], "--x", [1, 2]],
                       "rows": [["claude", "--dangerously-skip-permissions", "/w", None, None, 1, None, None, None,
                                 None, None, None, False, None]]})
    heard = remote._heard(host, Reply(0, b"sessidx-rows delta def 0 0\n" + body.encode(), ""), None, known, 1000)
    assert heard.fresh and heard.sessions == [] and heard.digest is None  # the next refresh asks for every row
    assert "3 session row(s) it sent were not valid" in (heard.note or "")
    for head in (b"sessidx-rows delta de-f 0 0", b"sessidx-rows odd def 0 0", b"sessidx-rows same def", b"[]"):
        bad = remote._heard(host, Reply(0, head + b"\n", "boom"), None, known, 1000)
        assert bad.sessions == [] and not bad.fresh and "sessidx there failed" in (bad.note or "")


def test_old_code_versions_on_a_host_are_pruned_and_nothing_else(client, tmp_path):
    alpha = make_host(client, tmp_path, "alpha")
    ClaudeSession(cwd="/w").write(alpha.home)
    assert sessidx(client, "alpha", "list", "--host", "alpha").returncode == 0
    remote_dir = alpha.cache / "sessidx" / "remote"
    (current,) = [p for p in remote_dir.iterdir() if p.name != "rows"]
    old = remote_dir / ("0" * 24)
    recent = remote_dir / ("1" * 24)  # another machine's version, used an hour ago: it may be in use
    left = remote_dir / (("2" * 24) + ".x1y2")  # an unpacking that was killed, long ago
    for folder in (old, recent, left):
        (folder / "sessidx").mkdir(parents=True)
        (folder / "sessidx" / "cli.py").write_text("")
    not_code = remote_dir / "notes"
    not_code.mkdir()
    beside = alpha.cache / "sessidx" / ("3" * 24)  # not under remote/: not sessidx's code
    beside.mkdir()
    two_days = time.time() - 2 * 86400
    for path in (old, left, not_code, beside):
        os.utime(path, (two_days, two_days))
    os.utime(recent, (time.time() - 3600, time.time() - 3600))
    shutil.rmtree(current)  # this version is not on the host (yet): it is sent, and unpacked
    done = sessidx(client, "alpha", "list", "--host", "alpha")
    assert done.returncode == 0 and done.stdout, done.stderr
    assert sorted(p.name for p in remote_dir.iterdir()) == sorted([current.name, recent.name, "notes", "rows"])
    assert beside.is_dir() and (alpha.cache / "sessidx").is_dir()
    before = current.stat().st_mtime
    os.utime(current, (two_days, two_days))
    assert sessidx(client, "alpha", "list", "--host", "alpha").returncode == 0
    assert current.stat().st_mtime > before - 1  # used: stamped, so that it is never taken for an old one


# Hosts that do not answer ------------------------------------------------------------------------


def test_a_down_or_silent_host_is_named_and_never_hangs(client, tmp_path):
    dead_host(client, "dead")
    silent = Silent(client, "silent")
    try:
        started = time.monotonic()
        done = sessidx(client, "dead silent", "list", "--host", "all", SESSIDX_HOSTS_TIMEOUT="2")
        took = time.monotonic() - started
        assert done.returncode == 0
        assert "dead did not answer" in done.stderr and "refused" in done.stderr
        assert "silent did not answer within 2 s" in done.stderr
        assert took < 12  # both at once, each within its timeout (a loaded 2-core VM: generous)
    finally:
        silent.close()


def test_a_host_that_wants_a_password_is_skipped_with_a_note(client, tmp_path):
    make_host(client, tmp_path, "locked", password_only=True)
    done = sessidx(client, "locked", "list", "--host", "locked")
    assert done.returncode == 0
    assert "locked skipped: it asks for a password" in done.stderr


def test_an_unknown_host_key_is_never_accepted(client, tmp_path):
    alpha = make_host(client, tmp_path, "alpha")
    ClaudeSession(cwd="/w").write(alpha.home)
    client.known_hosts.write_text("")  # the key is no longer known
    done = sessidx(client, "alpha", "list", "--host", "alpha", "--json")
    assert rows(done) == [] and "alpha skipped: its host key is not known" in done.stderr


# Hostile rows ----------------------------------------------------------------------------------------


GOOD_ID = "0f6c2b1e-5d4a-4c3b-9a8f-7e6d5c4b3a21"  # of Claude's form: each bad row below is bad for one reason


def test_hostile_rows_from_a_host_are_checked_and_quoted(client, tmp_path, monkeypatch):
    from sessidx import remote

    bad = [
        {"app": "claude", "id": "--dangerously-skip-permissions", "mtime": 1},
        {"app": "claude", "id": "x\n-rf", "mtime": 1},
        {"app": "rm", "id": GOOD_ID, "mtime": 1},
        {"app": "claude", "id": GOOD_ID, "mtime": "soon"},
        {"app": "claude", "id": GOOD_ID, "cwd": "relative/../x", "mtime": 1},
        {"app": "claude", "id": "abcd", "mtime": 1},  # not of Claude's id form
        {"app": "claude", "id": "ab'cd", "mtime": 1},
        [1, 2],
    ]
    assert [remote.valid_session("alpha", row) for row in bad] == [None] * len(bad)
    good = remote.valid_session("alpha", {"app": "claude", "id": GOOD_ID, "cwd": "/w/$(touch x)",
                                          "title": "\x1b]0;owned\x07" + "t" * 5000, "mtime": 5})
    assert good is not None and good.key == f"@alpha/claude:{GOOD_ID}" and len(good.title or "") == 1000


def test_a_hostile_folder_on_a_host_runs_nothing_here_or_there(client, tmp_path):
    alpha = make_host(client, tmp_path, "alpha")
    pwned = tmp_path / "pwned"
    folder = tmp_path / "work" / f"$(touch {pwned}) `touch {pwned}2`; it's"
    folder.mkdir(parents=True)
    s = ClaudeSession(cwd=str(folder), prompt="hostile folder", branch="HEAD")
    s.write(alpha.home)
    listed = rows(sessidx(client, "alpha", "list", "--host", "alpha", "--json"))
    assert [r["cwd"] for r in listed] == [str(folder)]
    done = sessidx(client, "alpha", "resume", f"@alpha/claude:{s.session_id}", "--shell", "bash")
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip()
    assert line.startswith("ssh -F ") and " -t -- alpha " in line
    # the line, run by a real local bash, reaches the stub on the host, in that folder
    subprocess.run(["bash", "-c", line], env={**os.environ, "PATH": os.environ["PATH"]}, stdin=subprocess.DEVNULL,
                   capture_output=True, timeout=30)
    argv, cwd = recorded(alpha.folder / "bin", "claude")
    assert cwd == str(folder) and argv[:1] == [f"--resume={s.session_id}"]
    assert not list(tmp_path.glob("pwned*"))


def test_the_preview_names_the_host_and_shows_the_exact_command(client, tmp_path):
    alpha = make_host(client, tmp_path, "alpha")
    (tmp_path / "proj").mkdir()
    s = ClaudeSession(cwd=str(tmp_path / "proj"), prompt="preview me", mode="bypassPermissions")
    s.write(alpha.home)
    assert sessidx(client, "alpha", "hosts", "--refresh").returncode == 0
    shown = sessidx(client, "alpha", "preview", "--shell", "zsh", f"@alpha/claude:{s.session_id}")
    assert shown.returncode == 0, shown.stderr
    line = sessidx(client, "alpha", "resume", "--shell", "zsh", f"@alpha/claude:{s.session_id}").stdout.strip()
    assert "host      alpha" in shown.stdout and "✓ Enter runs:" in shown.stdout
    assert f"  {line}" in shown.stdout.splitlines()
    assert "held back: --permission-mode bypassPermissions" in shown.stdout  # the check ran on the host
    assert "preview me" in shown.stdout


def test_a_folder_gone_on_the_host_is_refused_there(client, tmp_path):
    alpha = make_host(client, tmp_path, "alpha")
    s = ClaudeSession(cwd=str(tmp_path / "gone-there"), prompt="gone")
    s.write(alpha.home)
    done = sessidx(client, "alpha", "resume", f"@alpha/claude:{s.session_id}", "--shell", "bash")
    assert done.returncode == 1 and "on alpha: folder no longer exists" in done.stderr and done.stdout == ""
    check = sessidx(client, "alpha", "check", f"@alpha/claude:{s.session_id}")
    assert check.stdout.startswith("change-list-label()+change-header:cannot resume: folder no longer exists")


def test_a_host_answers_the_five_questions_through_the_seam(client, tmp_path, monkeypatch):
    """where.place_of: a host's key gives the host's place, whose plan is the one Plan type,
    made there, its line the `ssh -t` one for whichever shell asks."""
    import io

    from sessidx.config import current_env
    from sessidx.remote import HostPlace
    from sessidx.where import place_of

    alpha = make_host(client, tmp_path, "alpha")
    (tmp_path / "proj").mkdir()
    s = ClaudeSession(cwd=str(tmp_path / "proj"), prompt="the zebra migration", mode="bypassPermissions")
    s.write(alpha.home)
    gone = ClaudeSession(cwd=str(tmp_path / "gone-there"), prompt="gone")
    gone.write(alpha.home)
    assert sessidx(client, "alpha", "hosts", "--refresh").returncode == 0
    for name, value in {**host_env(client, "alpha"), "SESSIDX_HOSTS_TIMEOUT": "20"}.items():
        monkeypatch.setenv(name, value)
    env = current_env()
    key = f"@alpha/claude:{s.session_id}"
    place = place_of(env, key)
    assert isinstance(place, HostPlace)
    assert {x.key for x in place.sessions()} == {key, f"@alpha/claude:{gone.session_id}"}
    assert place.session(key).cwd == str(tmp_path / "proj")
    plan = place.plan(key)
    assert plan.ok and plan.host == "alpha" and [h.flag for h in plan.held_back] == ["--permission-mode bypassPermissions"]
    assert plan.shell_line("fish").startswith("ssh") and plan.shell_line("bash") == sessidx(
        client, "alpha", "resume", "--shell", "bash", key).stdout.strip()
    refused = place.plan(f"@alpha/claude:{gone.session_id}")
    assert refused.refusal is not None and refused.refusal.kind == "folder_gone" and "on alpha" in refused.where
    [(_, found, snippet)] = place.search("zebra")
    assert found.key == key and "zebra" in snippet
    shown = io.StringIO()
    assert place.preview(lambda line: shown.write(line), key, "bash") == 0 and "host      alpha" in shown.getvalue()


# Content search -----------------------------------------------------------------------------------


def test_content_search_merges_two_hosts_by_rank(client, tmp_path):
    alpha, beta = make_host(client, tmp_path, "alpha"), make_host(client, tmp_path, "beta")
    for host in (alpha, beta):  # enough talk on each that a word's weight means something
        for i, topic in enumerate(["lunch plans", "the build cache", "retry logic", "a flaky test", "docs"]):
            ClaudeSession(cwd=f"/filler/{i}", prompt=f"unrelated talk about {topic}").write(host.home)
    ClaudeSession(cwd="/a", prompt="the zebra migration broke the zebra tables, zebra again",
                  mtime=time.time() - 3600).write(alpha.home)
    ClaudeSession(cwd="/b", prompt="one zebra mention in a much longer prompt about many other things "
                  "like deployments, queues, caches and retries", mtime=time.time() - 60).write(beta.home)
    done = sessidx(client, "alpha beta", "search", "zebra", "--host", "alpha", "--host", "beta", "--json")
    assert done.returncode == 0, done.stderr
    hits = rows(done)
    # the better match first although it is the older one
    assert [(h["host"], h["cwd"]) for h in hits] == [("alpha", "/a"), ("beta", "/b")]
    assert hits[0]["score"] > hits[1]["score"] and "zebra" in hits[1]["snippet"]
    table = sessidx(client, "alpha beta", "search", "zebra", "--host", "all")
    assert [line.split()[1] for line in table.stdout.splitlines()] == ["alpha", "beta"]


def zebra_hosts(client: Client, tmp_path: Path) -> tuple[Sshd, Sshd]:
    """Two hosts whose content says `zebra`, alpha's far better than beta's, amid filler."""
    alpha, beta = make_host(client, tmp_path, "alpha"), make_host(client, tmp_path, "beta")
    for host in (alpha, beta):
        for i, topic in enumerate(["lunch plans", "the build cache", "retry logic", "a flaky test", "docs"]):
            ClaudeSession(cwd=f"/filler/{i}", prompt=f"unrelated talk about {topic}").write(host.home)
    ClaudeSession(cwd="/a", prompt="the zebra migration broke the zebra tables, zebra again \x1b]0;owned\x07 $(id)",
                  mtime=time.time() - 3600).write(alpha.home)
    ClaudeSession(cwd="/b", prompt="one zebra mention in a much longer prompt about many other things "
                  "like deployments, queues, caches and retries", mtime=time.time() - 60).write(beta.home)
    return alpha, beta


def test_a_content_keystroke_asks_the_hosts_and_merges_by_rank(client, tmp_path, home):
    zebra_hosts(client, tmp_path)
    for i, topic in enumerate(["standup notes", "the release", "css grid"]):
        ClaudeSession(cwd=f"/local/{i}", prompt=f"local talk about {topic}").write(home)
    ClaudeSession(cwd="/here", prompt="a zebra crossing, and another zebra, near the office").write(home)
    assert run_cli("search", "--refresh").returncode == 0  # this machine's index (Ctrl-F starts it)
    feed = sessidx(client, "alpha beta", "lines", "--content", "zebra", SESSIDX_HOSTS_KEYSTROKE_WAIT="40")
    assert feed.returncode == 0, feed.stderr
    header, *lines = feed.stdout.splitlines()
    keys = [line.rsplit("\t", 1)[-1] for line in lines]
    assert {k.split("/")[0] for k in keys if k.startswith("@")} == {"@alpha", "@beta"} and len(keys) == 3
    assert keys.index(next(k for k in keys if k.startswith("@alpha/"))) < keys.index(
        next(k for k in keys if k.startswith("@beta/")))  # alpha's hit ranks above beta's
    alpha_row = next(line for line in lines if "\t@alpha/" in line)
    assert "alpha:/a" in alpha_row and "$(id)" in alpha_row  # the host named; its text shown, as text
    assert "\x07" not in feed.stdout and "\x1b]" not in feed.stdout  # no terminal control from a host
    assert "did not answer" not in header


HOLD_THE_INDEX = """
import sys
from sessidx.config import current_env
from sessidx.content import store
held = store.lock(current_env())
print("held", flush=True)
sys.stdin.read()
"""


def test_a_host_whose_index_an_earlier_keystroke_is_making_says_so_and_answers_after(client, tmp_path, home):
    """Each keystroke asks each host; the first one there starts its first index, and the next
    keystrokes found it under way. They answered at once from the half-made index, without a
    word: the host's hits were missing and the header said nothing (CI, 2026-12-03). Now the
    host waits part of the keystroke's budget for it, then says it is still indexing."""
    alpha, _ = zebra_hosts(client, tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", HOLD_THE_INDEX], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "SESSIDX_HOME": str(alpha.home),
                                              "XDG_CACHE_HOME": str(alpha.cache)})
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        feed = sessidx(client, "alpha beta", "lines", "--content", "zebra", SESSIDX_HOSTS_KEYSTROKE_WAIT="8")
    finally:
        holder.communicate("")
    header, *lines = feed.stdout.splitlines()
    assert "(alpha: " in header and "searching what is indexed" in header, header
    assert [line.rsplit("\t", 1)[-1].split("/")[0] for line in lines] == ["@beta"]
    after = sessidx(client, "alpha beta", "lines", "--content", "zebra", SESSIDX_HOSTS_KEYSTROKE_WAIT="40")
    header, *lines = after.stdout.splitlines()
    assert "alpha" not in header and any("\t@alpha/" in line for line in lines), after.stdout


def test_a_silent_host_never_holds_a_content_keystroke(client, tmp_path, home):
    ClaudeSession(cwd="/here", prompt="the zebra crossing near the office").write(home)
    assert run_cli("search", "--refresh").returncode == 0
    silent = Silent(client, "silent")
    try:
        started = time.monotonic()
        feed = sessidx(client, "silent", "lines", "--content", "zebra", SESSIDX_HOSTS_KEYSTROKE_WAIT="1.5")
        took = time.monotonic() - started
    finally:
        silent.close()
    header, *lines = feed.stdout.splitlines()
    assert feed.returncode == 0 and [line.rsplit("\t")[-1].startswith("claude:") for line in lines] == [True]
    assert "(silent did not answer" in header  # ssh's own connect timeout (1 s), or the keystroke's limit
    assert took < 8  # the keystroke's limit, not the host's 20 s timeout (a loaded 2-core VM: generous)


# The picker and resume in real shells -----------------------------------------------------------


def alpha_and_a_local_row(client: Client, tmp_path: Path, home: Path) -> Sshd:
    """Host alpha with one session ("remote row from alpha"), and one here ("a local row")."""
    alpha = make_host(client, tmp_path, "alpha")
    ClaudeSession(cwd="/srv/x", prompt="remote row from alpha").write(alpha.home)
    ClaudeSession(cwd="/l", prompt="a local row").write(home)
    return alpha


@pytest.mark.shell
@pytest.mark.slow  # the silent host's 12 s, waited out
def test_the_picker_opens_at_once_with_a_dead_host_and_names_it(client, tmp_path, home, stub_bin):
    from tests.shell_test import Shell

    require("tmux")
    alpha_and_a_local_row(client, tmp_path, home)
    silent = Silent(client, "silent")
    env = {**host_env(client, "alpha silent"), "SESSIDX_HOSTS_TIMEOUT": "12",
           "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],
           "XDG_DATA_HOME": str(tmp_path / "sh" / "data")}  # as the shell has it: the same local cache
    # alpha's rows cached (silent not asked: its timeout is waited out once, in the picker)
    assert run_cli("hosts", "--refresh", env={**env, "SESSIDX_HOSTS": "alpha"}).returncode == 0
    run_cli("build", env=env, check=True)  # not the first press ever
    exports = "\n".join(f"export {k}='{v}'" for k, v in env.items())
    (tmp_path / "sh").mkdir()
    sh = Shell("bash", tmp_path / "sh", home, stub_bin, rc_extra=exports)
    try:
        sh.tmux.prepare()
        started = time.monotonic()
        sh.tmux.send("C-o")
        sh.tmux.until(lambda s: "remote row from alpha" in s and "a local row" in s, "both rows")
        assert time.monotonic() - started < 8  # never waits for the silent host (12 s; the VM is slow)
        sh.tmux.until(lambda s: "silent did not answer within 12 s" in s, "the dead host named in the header",
                      timeout=40)
        sh.tmux.send("Escape")
    finally:
        sh.tmux.kill()
        silent.close()


@pytest.mark.parametrize("shell_name", ["bash", "zsh", "fish"])
def test_a_plain_folders_line_reads_with_one_level_of_quotes_and_runs_there(client, tmp_path, shell_name):
    """What lands in history for the common folder: `ssh … -t -- alpha "exec sh -c 'cd -- DIR && …'"`,
    and that line, run by the real shell, reaches the stub on the host in that folder."""
    require(shell_name)
    alpha = make_host(client, tmp_path, "alpha")
    folder = tmp_path / "work" / "shop-api"
    folder.mkdir(parents=True)
    s = ClaudeSession(cwd=str(folder), prompt="plain folder", branch="HEAD")
    s.write(alpha.home)
    done = sessidx(client, "alpha", "resume", f"@alpha/claude:{s.session_id}", "--shell", shell_name)
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip()
    assert f" -t -- alpha \"exec sh -c 'cd -- {folder} && claude --resume={s.session_id} " in line, line
    assert line.endswith("'\"") and "\\" not in line, line
    subprocess.run([shell_name, "-c", line], env={**os.environ, "PATH": os.environ["PATH"]}, stdin=subprocess.DEVNULL,
                   capture_output=True, timeout=30)
    argv, cwd = recorded(alpha.folder / "bin", "claude")
    assert cwd == str(folder) and argv[:1] == [f"--resume={s.session_id}"]


@pytest.mark.shell
@pytest.mark.parametrize("shell_name", ["bash", "zsh", "fish"])
def test_enter_resumes_on_the_host_through_ssh_t(client, tmp_path, home, stub_bin, shell_name):
    from tests.shell_test import Shell

    require("tmux")
    require(shell_name)
    alpha = make_host(client, tmp_path, "alpha")
    folder = tmp_path / "there" / "it's a $(dir)"
    folder.mkdir(parents=True)
    s = ClaudeSession(cwd=str(folder), prompt="resume me over ssh", mode="plan", branch="HEAD")
    s.write(alpha.home)
    env = {**host_env(client, "alpha"), "SESSIDX_HOSTS_TIMEOUT": "20", "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],
           "XDG_DATA_HOME": str(tmp_path / "sh" / "data")}  # as the shell has it: the same local cache
    assert run_cli("hosts", "--refresh", env=env).returncode == 0
    run_cli("build", env=env, check=True)
    if shell_name == "fish":
        exports = "\n".join(f"set -gx {k} '{v}'" for k, v in env.items())
    else:
        exports = "\n".join(f"export {k}='{v}'" for k, v in env.items())
    write_stub(stub_bin, "claude")
    (tmp_path / "sh").mkdir()
    sh = Shell(shell_name, tmp_path / "sh", home, stub_bin, rc_extra=exports, cache=Path(env["XDG_CACHE_HOME"]))
    try:
        sh.pick("resume me over ssh")
        sh.tmux.until_file(alpha.folder / "bin" / "claude.argv", "the stub claude on the host", timeout=30)
        argv, cwd = recorded(alpha.folder / "bin", "claude")
        assert argv == [f"--resume={s.session_id}", "--model", s.model, "--effort", "medium", "--permission-mode", "plan"]
        assert cwd == str(folder)
        assert recorded(stub_bin, "claude") is None  # nothing ran here
        assert "-t -- alpha " in sh.history()  # the local line is in history
    finally:
        sh.tmux.kill()


@pytest.mark.shell
def test_the_first_press_ever_refreshes_the_hosts_too(client, tmp_path, home, stub_bin):
    from tests.shell_test import Shell

    require("tmux")
    alpha_and_a_local_row(client, tmp_path, home)
    (tmp_path / "sh").mkdir()
    env = {**host_env(client, "alpha"), "SESSIDX_HOSTS_TIMEOUT": "30"}
    sh = Shell("bash", tmp_path / "sh", home, stub_bin, rc_extra="\n".join(f"export {k}='{v}'" for k, v in env.items()))
    try:
        sh.tmux.prepare()
        sh.tmux.send("C-o")  # no index, no host cache: the first press ever
        sh.tmux.until(lambda s: "a local row" in s, "this machine's rows, streamed")
        sh.tmux.until(lambda s: "remote row from alpha" in s and "a local row" in s and "first time" not in s,
                      "the host's rows too, once it answered", timeout=60)
        sh.tmux.send("Escape")
    finally:
        sh.tmux.kill()


@pytest.mark.shell
@pytest.mark.parametrize("shell_name", ["bash", "zsh", "fish", "bash-without-epochrealtime"])
def test_every_later_press_refreshes_the_hosts(client, tmp_path, home, stub_bin, shell_name):
    """Each later press (Python over the kept rows, or the shell's own warm launch) asks the
    host again in the background: a session started there since shows up in the same picker.
    bash 4.4 has no EPOCHREALTIME (unset here, as it is there): its press is timed to the second."""
    from tests.shell_test import Shell

    require("tmux")
    shell_name, _, without = shell_name.partition("-without-")
    require(shell_name)
    alpha = alpha_and_a_local_row(client, tmp_path, home)
    (tmp_path / "sh").mkdir()
    # a host slower to answer than the fresh list is to start: only a reload that waits for
    # the refresh this press began shows what the host started since
    slow_python = tmp_path / "slow-python3"
    slow_python.write_text(f"#!/bin/sh\nsleep 1\nexec {shlex.quote(sys.executable)} \"$@\"\n")
    slow_python.chmod(0o755)
    # a loaded machine's host may take longer than the 2 s a press waits for it by default
    env = {**host_env(client, "alpha"), "SESSIDX_REMOTE_PYTHON": str(slow_python), "SESSIDX_HOSTS_TIMEOUT": "30",
           "SESSIDX_HOSTS_RELOAD_WAIT": "30"}
    exports = "\n".join((f"set -gx {k} '{v}'" if shell_name == "fish" else f"export {k}='{v}'") for k, v in env.items())
    if without:
        exports += f"\nunset {without.upper()}"
    sh = Shell(shell_name, tmp_path / "sh", home, stub_bin, rc_extra=exports)
    try:
        for n in range(3):  # the first press ever, then the kept rows, then the shell's warm launch
            sh.tmux.prepare()
            sh.tmux.send("C-o")
            sh.tmux.until(lambda s: "a local row" in s, "this machine's rows")
            sh.tmux.until(lambda s, n=n: all(f"new on alpha {k}" in s for k in range(n)) and "remote row" in s,
                          "every session started on the host so far", timeout=60)
            sh.tmux.send("Escape")
            sh.tmux.until(lambda s: "session>" not in s, "the prompt again")
            ClaudeSession(cwd="/srv/x", prompt=f"new on alpha {n}").write(alpha.home)
    finally:
        sh.tmux.kill()


@pytest.mark.shell
def test_ctrl_f_searches_the_hosts_and_enter_resumes_a_hit_there(client, tmp_path, home, stub_bin):
    from tests.shell_test import Shell

    require("tmux")
    alpha, _ = zebra_hosts(client, tmp_path)
    folder = tmp_path / "there"
    folder.mkdir()
    s = ClaudeSession(cwd=str(folder), prompt="the zebra stampede in the payments service", branch="HEAD")
    s.write(alpha.home)
    ClaudeSession(cwd="/l", prompt="a local zebra sighting").write(home)
    env = {**host_env(client, "alpha beta"), "SESSIDX_HOSTS_TIMEOUT": "30", "SESSIDX_HOSTS_KEYSTROKE_WAIT": "30",
           "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"], "XDG_DATA_HOME": str(tmp_path / "sh" / "data")}
    assert run_cli("hosts", "--refresh", env=env).returncode == 0
    assert run_cli("search", "--refresh", env=env).returncode == 0
    (tmp_path / "sh").mkdir()
    write_stub(stub_bin, "claude")
    sh = Shell("bash", tmp_path / "sh", home, stub_bin, rc_extra="\n".join(f"export {k}='{v}'" for k, v in env.items()))
    try:
        sh.tmux.prepare()
        sh.tmux.send("C-o")
        sh.tmux.until(lambda sc: "session>" in sc and "a local zebra sighting" in sc, "the picker")
        sh.tmux.send("C-f")
        sh.tmux.until(lambda sc: "content>" in sc, "content mode")
        sh.tmux.type("zebra")
        sh.tmux.until(lambda sc: "alpha:/a" in sc and "beta:/b" in sc and "local zebra sighting" in sc,
                      "hits from both hosts and from here", timeout=90)
        sh.tmux.type(" stampede")
        sh.tmux.until(lambda sc: "stampede" in sc and "beta:/b" not in sc and "host      alpha" in sc,
                      "the one hit, on alpha, its preview naming the host", timeout=90)
        sh.tmux.send("Enter")
        sh.tmux.until_file(alpha.folder / "bin" / "claude.argv", "the stub claude on the host", timeout=60)
        argv, cwd = recorded(alpha.folder / "bin", "claude")
        assert argv[:1] == [f"--resume={s.session_id}"] and cwd == str(folder)
        assert recorded(stub_bin, "claude") is None
    finally:
        sh.tmux.kill()


# Without a server: host names, the hosts file, the quoting for a host's login shell -------------------


def test_host_names():
    from sessidx.hosts import parse_host

    assert [(h.target, h.port) for h in map(parse_host, ["box", "me@box", "box:2222", "[::1]:22", "::1"])] == [
        ("box", None), ("me@box", None), ("box", "2222"), ("::1", "22"), ("::1", None)]
    for bad in ["", "-oProxyCommand=x", "a b", "box/x", "box;rm", "box:99999", "@box", "me@", "box:", "a'b", "x\n"]:
        assert parse_host(bad) is None, bad


def test_hosts_come_from_the_variable_or_the_file(tmp_path, monkeypatch):
    from sessidx.config import current_env
    from sessidx.hosts import configured

    (tmp_path / "config" / "sessidx").mkdir(parents=True)
    (tmp_path / "config" / "sessidx" / "hosts").write_text("# dev boxes\nalpha\nbeta:2200  # the build box\n-x\n")
    hosts, problems = configured(current_env())
    assert [h.name for h in hosts] == ["alpha", "beta:2200"] and problems == [
        "not a host name, ignored: '-x': it starts with `-` (ssh would read an option)"]
    monkeypatch.setenv("SESSIDX_HOSTS", "gamma, alpha")
    assert [h.name for h in configured(current_env())[0]] == ["gamma", "alpha"]
    monkeypatch.setenv("SESSIDX_HOSTS", "-")
    assert configured(current_env())[0] == []


@pytest.mark.parametrize("shell", ["sh", "dash", "bash", "zsh", "fish"])
def test_the_portable_quoting_reads_alike_in_every_login_shell(shell):
    from sessidx.quoting import quote_portable

    path = shutil.which(shell)
    if path is None:
        pytest.skip(f"{shell} not installed")
    words = ["plain", "it's", "back\\slash", "\\'", "$(touch x) `y`", "new\nline", "tab\tx", "", "-rf", "%x", "=cmd",
             "a'\\'b", "~/x", "{a,b}", "*", "é日本"]
    for word in words:
        script = "printf '%s' " + quote_portable(word)
        done = subprocess.run([path, "-c", script], capture_output=True, timeout=10)
        assert done.stdout.decode() == word, (shell, word, quote_portable(word))
