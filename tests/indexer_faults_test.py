"""Faults of the content indexer (issue 16, points 3-5): an indexer stopped or killed midway,
a disk that fills during a first index, a damaged index, and a cache folder or cache files
that others could plant things in. Real processes, signals and file systems; every wait is
bounded."""

from __future__ import annotations

import fcntl
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from homes import ClaudeSession

from sessidx.apps import APPS
from sessidx.config import current_env
from sessidx.content import reading, store
from sessidx.content.query import search
from sessidx.index import build
from tests.conftest import run_cli

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima",
         "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango", "uniform", "victor", "whiskey"]


def bulky_home(home: Path, sessions: int = 240, turns: int = 40) -> None:
    """Enough text that a first index takes a while and its forked reader (over BULK sources)
    has a queue to fill."""
    rng = random.Random(7)
    for i in range(sessions):
        prompt = " ".join(rng.choice(WORDS) + str(rng.randrange(10000)) for _ in range(80))
        ClaudeSession(cwd=f"/w/p{i}", prompt=f"needleword {prompt}", turns=turns).write(home)


def children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def until(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds} s: {what}")
        time.sleep(0.02)


def lock_is_free(cache: Path) -> bool:
    with open(cache / "sessidx/content.sqlite.lock", "rb") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        fcntl.flock(f, fcntl.LOCK_UN)
        return True


def first_index_under_way(home: Path) -> tuple[subprocess.Popen[bytes], int]:
    """A first `search --refresh`, caught once its forked reader runs and it has indexed a little."""
    indexer = subprocess.Popen([sys.executable, "-m", "sessidx", "search", "--refresh"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, "SESSIDX_HOME": str(home)})
    until(lambda: children_of(indexer.pid) or indexer.poll() is not None, 60, "the forked reader starts")
    helpers = children_of(indexer.pid)
    assert indexer.poll() is None and helpers, "the first index ended before it could be caught"
    return indexer, helpers[0]


@pytest.fixture
def cleanup():
    started: list[int] = []
    yield started
    for pid in started:  # only processes this test started
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_first_index_leaves_no_reader_holding_the_lock(home, tmp_path, sig, cleanup):
    """Killed midway, a first index once left its forked reader alive (parent pid 1), blocked on
    a full queue and holding the lock: every search after it skipped its refresh."""
    bulky_home(home)
    indexer, helper = first_index_under_way(home)
    cleanup += [indexer.pid, helper]
    os.kill(indexer.pid, sig)
    indexer.wait(timeout=10)
    until(lambda: not alive(helper), 5, "the forked reader dies with its parent")
    assert lock_is_free(tmp_path / "cache")
    done = run_cli("search", "needleword", "--limit", "300")
    assert done.returncode == 0 and "indexing" not in done.stderr, done.stderr
    assert done.stdout.count("/w/p") == 240


def test_a_search_that_finds_a_first_index_under_way_waits_for_it_and_answers_in_full(home, cleanup):
    """A search that found another sessidx indexing answered at once from what it had indexed:
    through SSH, a keystroke's search reached a host whose first index an earlier keystroke had
    started, and the host's sessions were missing. It waits for a live indexer (`--wait`)."""
    bulky_home(home)
    indexer, helper = first_index_under_way(home)
    cleanup += [indexer.pid, helper]
    done = run_cli("search", "needleword", "--limit", "300", "--wait", "120")
    assert done.returncode == 0 and "indexing" not in done.stderr, done.stderr
    assert done.stdout.count("/w/p") == 240
    assert indexer.wait(timeout=10) == 0


def test_an_agent_search_that_finds_a_first_index_under_way_waits_or_says_so(home, cleanup, monkeypatch):
    """The MCP search's own half (agent_api) searched a half-made index without a word."""
    from sessidx import agent_api

    bulky_home(home)
    indexer, helper = first_index_under_way(home)
    cleanup += [indexer.pid, helper]
    monkeypatch.setattr(store, "KEYSTROKE_WAIT", 0.0)  # not waited for: what it has so far, and a note
    hurried = agent_api.search(agent_api.Sessions(current_env()), "needleword", limit=50)
    assert indexer.poll() is None, "the first index ended before it could be asked"
    assert any("searching what is indexed" in note for note in hurried["notes"]), hurried["notes"]
    monkeypatch.setattr(store, "KEYSTROKE_WAIT", 120.0)
    patient = agent_api.search(agent_api.Sessions(current_env()), "needleword", limit=50)
    assert patient["notes"] == [] and len(patient["results"]) == 50
    assert indexer.wait(timeout=10) == 0


@pytest.mark.slow  # waits out STALL_SECONDS
def test_a_stopped_first_index_stalls_no_keystroke_and_no_search(home, tmp_path, cleanup):
    """Ctrl-Z on a first index made each keystroke in content mode wait 120 s for it. Now a
    keystroke shows what is indexed and says why; so does a search."""
    bulky_home(home)
    indexer, helper = first_index_under_way(home)
    cleanup += [indexer.pid, helper]
    until(lambda: (tmp_path / "cache/sessidx/content.sqlite.progress").exists(), 30, "a first commit")
    os.kill(indexer.pid, signal.SIGSTOP)
    try:
        start = time.monotonic()
        keystroke = run_cli("lines", "--content", "needleword")
        waited = time.monotonic() - start
        assert keystroke.returncode == 0 and waited < 15, (waited, keystroke.stderr)
        header = keystroke.stdout.splitlines()[0]
        assert "searching what is indexed" in header, header
        time.sleep(store.STALL_SECONDS + 0.5)  # no sign of life since: not waited for at all
        start = time.monotonic()
        keystroke = run_cli("lines", "--content", "needleword")
        assert time.monotonic() - start < store.KEYSTROKE_WAIT + 5
        assert "without progress" in keystroke.stdout.splitlines()[0], keystroke.stdout[:300]
        start = time.monotonic()
        found = run_cli("search", "needleword")
        assert time.monotonic() - start < 15 and "without progress" in found.stderr, found.stderr
    finally:
        os.kill(indexer.pid, signal.SIGCONT)
    indexer.wait(timeout=120)
    assert run_cli("search", "needleword", "--limit", "300").stdout.count("/w/p") == 240


def test_a_keystroke_waits_a_moment_for_a_live_refresh(home, tmp_path, monkeypatch):
    """A live indexer (signs of life) is waited for, but only KEYSTROKE_WAIT: a refresh that
    finishes within it gives fresh rows, a long one what is indexed so far."""
    ClaudeSession(cwd="/w", prompt="the quokka question").write(home)
    env = current_env()
    held = store.lock(env)  # an indexer that never finishes, but keeps showing life
    try:
        start = time.monotonic()
        done = run_cli("lines", "--content", "quokka")
        waited = time.monotonic() - start
        assert store.KEYSTROKE_WAIT <= waited < store.KEYSTROKE_WAIT + 10
        assert "indexing: searching what is indexed so far" in done.stdout.splitlines()[0]
    finally:
        held.close()


# --- point 4: a half-made or damaged index ---------------------------------------------------

def half_made(cache: Path) -> None:
    """What a first index that ran out of disk space left before the schema was one transaction."""
    (cache / "sessidx").mkdir(parents=True, mode=0o700, exist_ok=True)
    with sqlite3.connect(cache / "sessidx/content.sqlite") as db:
        db.execute("CREATE TABLE source(id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL)")


def damaged(cache: Path) -> None:
    (cache / "sessidx").mkdir(parents=True, mode=0o700, exist_ok=True)
    (cache / "sessidx/content.sqlite").write_bytes(random.Random(3).randbytes(64 * 1024))


def damaged_pages(cache: Path) -> None:
    """A real index whose pages past the header were overwritten: found while reading it."""
    (cache / "sessidx").mkdir(parents=True, mode=0o700, exist_ok=True)
    run_cli("search", "anything")
    path = cache / "sessidx/content.sqlite"
    data = bytearray(path.read_bytes())
    rng = random.Random(5)
    for at in range(4096, len(data), 4096):
        data[at:at + 4096] = rng.randbytes(4096)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", [half_made, damaged, damaged_pages])
def test_a_half_made_or_damaged_index_is_made_again(home, tmp_path, damage):
    """Once: `table source already exists` on every search, until `search --drop`."""
    ClaudeSession(cwd="/w", prompt="the quokka question").write(home)
    damage(tmp_path / "cache")
    done = run_cli("search", "-v", "quokka")
    assert done.returncode == 0 and "/w" in done.stdout, done.stderr
    assert "made again" in done.stderr and "Traceback" not in done.stderr
    again = run_cli("search", "-v", "quokka")
    assert again.returncode == 0 and "made again" not in again.stderr


@pytest.mark.parametrize("damage", [half_made, damaged, damaged_pages])
def test_a_keystroke_over_a_damaged_index_says_so(home, tmp_path, damage):
    """No traceback in the picker's rows; the header says what is wrong, or the index is made again."""
    ClaudeSession(cwd="/w", prompt="the quokka question").write(home)
    damage(tmp_path / "cache")
    done = run_cli("lines", "--content", "quokka")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    header = done.stdout.splitlines()[0]
    assert "what was said" in header and ("damaged" in header or "no session says" in header), header


def test_the_schema_is_made_in_one_transaction(home, tmp_path, monkeypatch):
    """An error on any statement of the schema leaves no table behind."""
    env = current_env()
    real = store.HASH_SIZE
    monkeypatch.setattr(store, "HASH_SIZE", "'not a number'")  # the 'hashsize' statement fails, late
    with pytest.raises(sqlite3.Error):
        store.connect(env)
    monkeypatch.setattr(store, "HASH_SIZE", real)
    with sqlite3.connect(tmp_path / "cache/sessidx/content.sqlite") as db:
        assert db.execute("SELECT count(*) FROM sqlite_master").fetchone() == (0,)
    assert store.connect(env).execute("PRAGMA user_version").fetchone() == (store.SCHEMA_VERSION,)


@pytest.fixture
def small_disk(tmp_path):
    """A 512 KiB tmpfs as the cache (root only)."""
    mount = tmp_path / "small"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount)],
                                           capture_output=True).returncode != 0:
        pytest.skip("mounting a tmpfs needs root")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_during_a_first_index_leaves_nothing_half_made(home, small_disk, monkeypatch):
    """The disk fills at each point of making the index in turn; once space is back, the
    next search works (it once failed with `table source already exists` for good)."""
    ClaudeSession(cwd="/w", prompt="the quokka question").write(home)
    monkeypatch.setenv("XDG_CACHE_HOME", str(small_disk))
    env = current_env()
    filler = small_disk / "filler"
    sessions = build(env, APPS.values()).sessions
    failures = 0
    for free_pages in range(0, 64):
        store.drop(env)
        filler.unlink(missing_ok=True)
        total = os.statvfs(small_disk)
        with open(filler, "wb") as f:
            f.write(b"\0" * max(0, total.f_bavail * total.f_frsize - free_pages * 4096))
        db = None
        try:
            db = store.connect(env)
            reading.refresh(db, sessions)
        except sqlite3.OperationalError as exc:  # the disk is full, and says so
            assert "full" in str(exc) or "I/O" in str(exc), exc
            failures += 1
        finally:
            if db is not None:
                db.close()
        filler.unlink()
        db = store.connect(env)
        reading.refresh(db, sessions)
        assert [h.session.cwd for h in search(db, "quokka")] == ["/w"], free_pages
        db.close()
    assert failures > 3  # the disk did fill at several points


# --- point 5: a cache folder others can write to, links planted in it ------------------------

@pytest.mark.parametrize("how", ["group-writable", "world-writable", "not-mine"])
def test_a_cache_folder_others_can_write_to_is_refused(home, tmp_path, how):
    """As ssh refuses a ~/.ssh others can write to: anyone who can write there can plant a
    cache (folders and ids a resume acts on) or a link a write follows."""
    ClaudeSession(cwd="/w", prompt="the quokka question").write(home)
    folder = tmp_path / "cache/sessidx"
    assert run_cli("build").returncode == 0 and folder.is_dir()
    if how == "not-mine":
        if os.geteuid() != 0:
            pytest.skip("giving a folder away needs root")
        os.chown(folder, 65534, 65534)
    else:
        folder.chmod(0o770 if how == "group-writable" else 0o777)
    done = run_cli("search", "quokka")
    assert done.returncode != 0 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert str(folder) in done.stderr and ("writable by others" in done.stderr or "not by you" in done.stderr)
    keystroke = run_cli("lines", "--content", "quokka")
    assert "not used" in keystroke.stdout.splitlines()[0]
    assert not (folder / "content.sqlite").exists()
    listed = run_cli("build", "-v")
    assert listed.returncode == 0 and "not used" in listed.stderr  # the list works, uncached, and says why
    assert run_cli("list").stdout.count("/w") == 1


def test_no_cache_file_follows_a_planted_link(home, tmp_path):
    """`content.sqlite.progress` followed a planted symlink: a search overwrote its target."""
    for i in range(3):
        ClaudeSession(cwd=f"/w/{i}", prompt="the quokka question").write(home)
    folder = tmp_path / "cache/sessidx"
    folder.mkdir(parents=True, mode=0o700)
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (folder / "content.sqlite.progress").symlink_to(victim)
    done = run_cli("search", "quokka")
    assert done.returncode == 0 and done.stdout.count("/w/") == 3, done.stderr
    assert victim.read_text() == "precious"
    (folder / f"content.sqlite.progress.{os.getpid()}.tmp").symlink_to(victim)  # its temp file, in this process
    store.write_progress(current_env(), store.Progress(3, 100))
    assert victim.read_text() == "precious" and store.read_progress(current_env()) == (0, 3)
    (folder / "content.sqlite-wal").unlink(missing_ok=True)
    run_cli("search", "--drop")
    (folder / "content.sqlite-wal").symlink_to(victim)
    refused = run_cli("search", "quokka")
    assert refused.returncode != 0 and "symbolic link" in refused.stderr and victim.read_text() == "precious"


# --- point 6: a transcript that grows by a lot ---------------------------------------------------

def peak_rss_mb(*args: str) -> float:
    """Peak RSS of `sessidx ARGS`, in a process of its own (its children's peak, nobody else's)."""
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL);"
             " print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    done = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m", "sessidx", *args],
                          capture_output=True, text=True, timeout=300, check=True)
    return int(done.stdout) / 1024


def append_talk(path: Path, session: ClaudeSession, megabytes: int) -> None:
    """`megabytes` of user prompts (about 1 KB each, words of their own) at the end of a transcript."""
    import json

    rng = random.Random(11)
    with path.open("a") as f:
        for i in range(megabytes * 1024):
            text = " ".join(f"{rng.choice(WORDS)}{rng.randrange(1000)}" for _ in range(110))
            f.write(json.dumps({"type": "user", "sessionId": session.session_id, "cwd": session.cwd,
                                "uuid": f"u{i}", "message": {"role": "user", "content": text}}) + "\n")
        f.write(json.dumps({"type": "user", "sessionId": session.session_id, "cwd": session.cwd,
                            "message": {"role": "user", "content": "the final zanzibarword"}}) + "\n")


def test_a_large_append_is_read_in_bounded_windows(home):
    """A transcript that grew by 1 GB once made a refresh hold all of it: 2.09 GB peak (256 MB:
    536 MB). 64 MB here; `make bench` measures the 1 GB."""
    s = ClaudeSession(cwd="/w", prompt="the quokka question")
    path = s.write(home)
    assert run_cli("search", "quokka").returncode == 0
    append_talk(path, s, 64)
    peak = peak_rss_mb("search", "--refresh")
    assert peak < 100, f"{peak:.0f} MB"
    found = run_cli("search", "-v", "zanzibarword")
    assert found.returncode == 0 and "/w" in found.stdout, found.stderr


# --- point 7: a pasted page as a query ------------------------------------------------------

def test_a_pasted_page_is_cut_to_what_a_query_may_hold_and_says_so(home):
    """A pasted 8,000-word query cost 4.6-9.2 s a keystroke. Its first distinct words are
    searched (the session that said them is found) and the header and stderr say so."""
    from sessidx.content.query import MAX_CHARS, MAX_WORDS, parse_query

    said = " ".join(f"{w}{i}" for i, w in enumerate(WORDS[:MAX_WORDS]))
    ClaudeSession(cwd="/w", prompt=f"{said} and so on").write(home)
    pasted = said + " " + " ".join(f"{WORDS[i % len(WORDS)]}x{i % 700}" for i in range(8000))
    assert len(parse_query(pasted)) == MAX_WORDS and len("".join(parse_query("x" * 50 + " " + "y" * 8000))) <= MAX_CHARS + 10
    assert sum(len(t.split()) for t in parse_query(f'"{pasted}"')) == MAX_WORDS
    done = run_cli("search", pasted)
    assert done.returncode == 0 and "/w" in done.stdout, done.stderr
    assert f"first {MAX_WORDS} distinct words" in done.stderr
    header = run_cli("lines", "--content", pasted).stdout.splitlines()
    assert f"first {MAX_WORDS} distinct words" in header[0] and len(header) == 2
    long_word = run_cli("lines", "--content", "y" * (MAX_CHARS + 1)).stdout.splitlines()[0]
    assert f"first {MAX_CHARS:,} characters" in long_word
    plain = run_cli("lines", "--content", said).stdout.splitlines()
    assert "query is long" not in plain[0] and len(plain) == 2
