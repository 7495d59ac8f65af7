"""SQLite stores read through a consistent private copy: live writers, hot journals, damage."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from homes import CodexThread, write_codex_home

from sessidx import sqlite_snapshot
from sessidx.apps import APPS
from sessidx.config import current_env
from sessidx.index import build
from tests.conftest import run_cli


def codex_titles(index_problems: list[str] | None = None) -> dict[str, str | None]:
    index = build(current_env(), [APPS["codex"]])
    if index_problems is not None:
        index_problems += index.problems
    return {s.id: s.title for s in index.sessions}


def test_a_truncate_checkpoint_during_the_copy_is_not_a_torn_snapshot(home, monkeypatch):
    """Once: the database copied, then a writer moved the WAL into it and emptied the WAL, then the
    empty WAL copied: every row that lived in the WAL was gone, silently."""
    threads = [CodexThread(cwd=f"/w/{i}", title=f"before {i}") for i in range(3)]
    codex = write_codex_home(home, threads)  # the rows live in the WAL, as Codex leaves them
    db = codex / "state_5.sqlite"
    real_copy = sqlite_snapshot._copy
    writes = []

    def copy_then_write(source: str, target: Path) -> None:
        real_copy(source, target)
        if source == str(db) and not writes:  # the main file is copied; its WAL is next
            writer = sqlite3.connect(db)
            writer.execute("update threads set title = 'after' where id = ?", (threads[0].thread_id,))
            writer.commit()
            assert writer.execute("pragma wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
            writer.close()
            writes.append(1)

    monkeypatch.setattr(sqlite_snapshot, "_copy", copy_then_write)
    problems: list[str] = []
    titles = codex_titles(problems)
    assert writes and titles == {threads[0].thread_id: "after", threads[1].thread_id: "before 1",
                                 threads[2].thread_id: "before 2"}
    assert problems == []


def test_a_writer_busy_during_every_pause_still_leaves_a_consistent_copy(home, monkeypatch):
    """A writer that commits and checkpoints while the first copy is taken and again during each
    pause after it (Codex at work): each retry is judged by the files as they were when that
    copy began, so the second copy counts. (Judged against the files before the pause, every
    retry failed, and the store was read in place, stale, or torn under a live writer.)"""
    threads = [CodexThread(cwd=f"/w/{i}", title=f"before {i}") for i in range(3)]
    codex = write_codex_home(home, threads)
    db = codex / "state_5.sqlite"
    real_copy = sqlite_snapshot._copy
    commits = []

    def commit() -> None:
        writer = sqlite3.connect(db)
        writer.execute("update threads set title = ? where id = ?", (f"after {len(commits)}", threads[0].thread_id))
        writer.commit()
        writer.execute("pragma wal_checkpoint(TRUNCATE)")
        writer.close()
        commits.append(1)

    def copy_with_a_commit_first(source: str, target: Path) -> None:
        real_copy(source, target)
        if source == str(db) and not commits:
            commit()  # during the first copy: it must not count

    monkeypatch.setattr(sqlite_snapshot, "_copy", copy_with_a_commit_first)
    monkeypatch.setattr(sqlite_snapshot.time, "sleep", lambda seconds: commit())
    notes: list[str] = []
    with sqlite_snapshot.snapshot(db, notes) as conn:
        title = conn.execute("select title from threads where id = ?", (threads[0].thread_id,)).fetchone()[0]
    assert notes == []
    assert len(commits) == 2 and title == "after 1"


def test_a_live_writer_checkpointing_with_truncate(home):
    """A real writer process inserting a thread and checkpointing (TRUNCATE) every millisecond or
    so: every snapshot sees at least the threads committed before it began."""
    codex = write_codex_home(home, [CodexThread(cwd="/w/0")])
    db = codex / "state_5.sqlite"
    committed = codex.parent / "committed"
    writer = subprocess.Popen([sys.executable, "-c", f"""
import sqlite3, time, uuid
db = sqlite3.connect({str(db)!r})
row = list(db.execute("select * from threads").fetchone())
deadline = time.time() + 3
n = 1
while time.time() < deadline:
    row[0] = str(uuid.uuid4())
    db.execute(f"insert into threads values ({{','.join('?' * len(row))}})", row)
    db.commit()
    n += 1
    open({str(committed)!r} + ".tmp", "w").write(str(n))
    __import__("os").replace({str(committed)!r} + ".tmp", {str(committed)!r})
    db.execute("pragma wal_checkpoint(TRUNCATE)")
    time.sleep(0.001)
"""])
    try:
        seen = []
        deadline = time.time() + 2.5
        while time.time() < deadline:
            floor = int(committed.read_text()) if committed.exists() else 1
            with sqlite_snapshot.snapshot(db) as conn:
                count = conn.execute("select count(*) from threads").fetchone()[0]
            assert count >= floor
            seen.append(count)
    finally:
        writer.wait(timeout=10)
    assert len(seen) > 10 and seen[-1] > seen[0]


def test_a_hot_rollback_journal_is_rolled_back_in_the_copy(home):
    """A writer died mid-transaction in rollback-journal mode: its pages are in the database
    file, the originals in `-journal`. Its uncommitted titles must not be listed."""
    threads = [CodexThread(cwd=f"/w/{i}", title=f"committed {i}") for i in range(200)]
    codex = write_codex_home(home, threads, wal=False)
    db = codex / "state_5.sqlite"
    subprocess.run([sys.executable, "-c", f"""
import os, sqlite3
c = sqlite3.connect({str(db)!r}, isolation_level=None)
c.execute("pragma cache_size=2")  # spill dirty pages into the database file before the commit
c.execute("begin")
c.execute("update threads set title = 'uncommitted ' || substr(title, 11)")
os._exit(0)
"""], check=True)
    assert Path(f"{db}-journal").stat().st_size > 0
    titles = codex_titles()
    assert len(titles) == 200 and not [t for t in titles.values() if t and t.startswith("uncommitted")]
    assert Path(f"{db}-journal").exists()  # the original is left as it was


def damage_text(db: Path, old: bytes) -> None:
    data = db.read_bytes()
    assert old in data
    db.write_bytes(data.replace(old, b"\xff\xfe" + old[2:], 1))


def test_a_damaged_codex_database_falls_back_to_the_rollouts_loudly(home):
    threads = [CodexThread(cwd=f"/w/{i}", title=f"thread title {i}") for i in range(8)]
    codex = write_codex_home(home, threads, wal=False)
    damage_text(codex / "state_5.sqlite", b"thread title 3")
    listed = [json.loads(line) for line in run_cli("list", "--json").stdout.splitlines()]
    assert sorted(s["id"] for s in listed) == sorted(t.thread_id for t in threads)
    done = run_cli("build", "-v")
    assert "listed from the rollout files instead" in done.stderr


def test_a_page_of_junk_falls_back_to_the_rollouts(home):
    threads = [CodexThread(cwd=f"/w/{i}", title=f"t{i}" * 200) for i in range(40)]
    codex = write_codex_home(home, threads, wal=False)
    db = codex / "state_5.sqlite"
    data = bytearray(db.read_bytes())
    page = 4096
    data[2 * page: 3 * page] = os.urandom(page)
    db.write_bytes(bytes(data))
    ids = {json.loads(line)["id"] for line in run_cli("list", "--json").stdout.splitlines()}
    assert ids == {t.thread_id for t in threads}


def test_bad_text_in_a_store_without_fallback_keeps_its_other_sessions(home, realdata):
    """opencode has no files to fall back on: a title that is not UTF-8 costs that title only."""
    import shutil

    source = realdata("opencode-home")
    shutil.copytree(source, home, dirs_exist_ok=True)
    before = {json.loads(line)["id"] for line in run_cli("list", "--json", "--app", "opencode").stdout.splitlines()}
    db = next(home.rglob("opencode.db"))
    conn = sqlite3.connect(db)
    title = conn.execute("select title from session where parent_id is null limit 1").fetchone()[0]
    conn.execute("pragma wal_checkpoint(TRUNCATE)")
    conn.close()
    damage_text(db, title.encode())
    after = [json.loads(line) for line in run_cli("list", "--json", "--app", "opencode").stdout.splitlines()]
    assert {s["id"] for s in after} == before and len(before) > 1


def test_a_store_over_the_copy_cap_is_read_in_place_and_said(home, monkeypatch):
    write_codex_home(home, [CodexThread(cwd="/w", title="capped")], wal=False)
    monkeypatch.setattr(sqlite_snapshot, "COPY_CAP", 1024)
    problems: list[str] = []
    assert list(codex_titles(problems).values()) == ["capped"]
    assert any("not copied" in p for p in problems)


def rollout_ids(codex: Path) -> set[str]:
    return {p.stem[-36:] for p in codex.rglob("rollout-*.jsonl")}


def damage(db: Path, seed: int) -> str:
    """One of several kinds of damage, chosen and placed by `seed`."""
    import random

    rng = random.Random(seed)
    data = bytearray(db.read_bytes())
    kind = ("schema-text", "schema-page", "junk-page", "truncated", "header", "wal")[seed % 6]
    if kind == "schema-text":  # a schema entry's name not UTF-8 and its SQL broken: SQLite's error
        # message quotes the name, and decoding the message raises UnicodeDecodeError
        import re

        entries = [m for m in re.finditer(rb"(table|index)([a-z_]{4,})\2", data) if m.start() >= 4096]
        entry = entries[rng.randrange(len(entries))]
        data[entry.start(2) + 1] = data[entry.end(2) + 1] = 0xFF
        at = data.find(b"CREATE", entry.end())
        data[at:at + 6] = b"CREATX"
    elif kind == "schema-page":
        start = rng.randrange(100, 4096 - 64)
        data[start:start + rng.randrange(8, 64)] = bytes(rng.randrange(256) for _ in range(64))[: 64]
    elif kind == "junk-page":
        page = rng.randrange(1, max(2, len(data) // 4096))
        data[page * 4096:(page + 1) * 4096] = rng.randbytes(4096)
    elif kind == "truncated":
        data = data[: rng.randrange(100, len(data))]
    elif kind == "header":
        data[rng.randrange(16, 100)] ^= 0xFF
    else:
        wal = Path(f"{db}-wal")
        raw = bytearray(wal.read_bytes())
        at = rng.randrange(32, len(raw) - 64)
        raw[at:at + 64] = rng.randbytes(64)
        wal.write_bytes(bytes(raw))
    db.write_bytes(bytes(data))
    return kind


@pytest.mark.parametrize("seed", range(12))
def test_any_damage_to_the_real_codex_database_falls_back_to_its_rollouts(home, realdata, seed):
    """Once: a schema that is not UTF-8 raised UnicodeDecodeError while the copy was opened,
    outside quick_check, and Codex listed 0 of its 8 rollouts."""
    import shutil

    shutil.copytree(realdata("codex-home"), home, dirs_exist_ok=True)
    codex = home / ".codex"
    assert len(rollout_ids(codex)) == 9  # 8 live, 1 archived
    hidden = home.parent / "db-aside"
    hidden.mkdir()
    for db in codex.glob("state_5.sqlite*"):
        db.rename(hidden / db.name)
    rollouts = set(codex_titles())  # what the rollouts alone list (sub-agents' are not listed)
    assert len(rollouts) == 7
    for db in hidden.iterdir():
        db.rename(codex / db.name)
    kind = damage(codex / "state_5.sqlite", seed)
    problems: list[str] = []
    listed = set(codex_titles(problems))
    assert rollouts <= listed, (kind, problems)
    done = run_cli("list", "--app", "codex", "--json", "--archived")
    assert done.returncode == 0 and "Traceback" not in done.stderr, (kind, done.stderr)
    assert rollouts <= {json.loads(line)["id"] for line in done.stdout.splitlines()}, kind


def test_a_live_writer_on_a_100_mb_database_never_hides_its_wal_only_threads(home):
    """A real writer committing every 50 ms to a 100 MB Codex database: the copy of the database
    takes longer than that, the WAL grows during every copy, and that must not count as a torn
    copy (once the copy never held still, the fallback read in place without the WAL, and 12 of
    60 lists showed none of the threads that lived only in the WAL)."""
    codex = write_codex_home(home, [CodexThread(cwd="/w/on-disk", title="has a rollout")])
    db = codex / "state_5.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("create table padding (b blob)")
    for _ in range(100):
        conn.execute("insert into padding values (zeroblob(1024 * 1024))")
    conn.commit()
    conn.execute("pragma wal_checkpoint(TRUNCATE)")
    conn.close()
    assert db.stat().st_size >= 100 << 20
    ready = home / "ready"
    only_in_wal = [f"0d000000-0000-4000-8000-{i:012d}" for i in range(5)]
    writer = subprocess.Popen([sys.executable, "-c", f"""
import os, sqlite3, time
db = sqlite3.connect({str(db)!r})
db.execute("pragma wal_autocheckpoint=0")  # as Codex leaves it: the new threads only in the WAL
row = list(db.execute("select * from threads").fetchone())
for ident in {only_in_wal!r}:
    row[0] = ident
    db.execute(f"insert into threads values ({{','.join('?' * len(row))}})", row)
db.commit()
open({str(ready)!r}, "w").close()
# bounded by the test's life (it kills this at its end), not by a time a loaded machine outlasts
parent, deadline = os.getppid(), time.time() + 1800
while os.getppid() == parent and time.time() < deadline:
    db.execute("update threads set updated_at = updated_at + 1 where id = ?", ({only_in_wal[0]!r},))
    db.commit()
    time.sleep(0.05)
"""])
    try:
        deadline = time.time() + 20
        while not ready.exists():
            assert time.time() < deadline and writer.poll() is None, "the writer did not start"
            time.sleep(0.05)
        for _ in range(6):
            problems: list[str] = []
            listed = codex_titles(problems)
            assert set(only_in_wal) <= set(listed), problems
            assert not any("without its WAL" in p for p in problems), problems
        assert writer.poll() is None  # it wrote during every list
    finally:
        writer.kill()
        writer.wait(timeout=10)


def test_the_private_copy_is_closed_without_an_fsync(home):
    """Closing the copy checkpoints its WAL into it; with SQLite's default `synchronous` that
    fsyncs a file deleted right after (10-50 ms of a cold build over Codex's store)."""
    codex = write_codex_home(home, [CodexThread(cwd="/w/0")])
    with sqlite_snapshot.snapshot(codex / "state_5.sqlite") as conn:
        assert conn.execute("pragma synchronous").fetchone()[0] == 0  # off
        assert conn.execute("select count(*) from threads").fetchone()[0] == 1


def test_thirty_lists_beside_a_writer_checkpointing_with_truncate_miss_no_thread(home):
    """Round four: a writer inserting threads that exist only in the database and running a
    TRUNCATE checkpoint after each commit. The file copies never held still, the store was read
    in place without its WAL, found "damaged (invalid page number)" and listed from the rollouts:
    18 of 30 lists showed none of the database's own threads. SQLite's read-only backup takes
    the readers' lock, so every list holds every thread committed before it began."""
    codex = write_codex_home(home, [CodexThread(cwd="/w/on-disk", title="has a rollout")])
    db = codex / "state_5.sqlite"
    conn = sqlite3.connect(db)  # 16 MB: each copy takes long enough for a commit and a checkpoint
    conn.execute("create table padding (b blob)")
    conn.executemany("insert into padding values (zeroblob(1024 * 1024))", [()] * 16)
    conn.commit()
    conn.close()
    committed = home.parent / "committed"
    writer = subprocess.Popen([sys.executable, "-c", f"""
import os, sqlite3, time
db = sqlite3.connect({str(db)!r})
row = list(db.execute("select * from threads").fetchone())
# bounded by the test's life (it kills this at its end), not by a time a loaded machine outlasts
parent, deadline, n = os.getppid(), time.time() + 1800, 0
while os.getppid() == parent and time.time() < deadline:
    n += 1
    row[0] = f"0e000000-0000-4000-8000-{{n:012d}}"
    row[1] = f"/nowhere/rollout-{{n}}.jsonl"  # only in the database
    db.execute(f"insert into threads values ({{','.join('?' * len(row))}})", row)
    db.commit()
    with open({str(committed)!r} + ".tmp", "w") as f:
        f.write(str(n))
    os.replace({str(committed)!r} + ".tmp", {str(committed)!r})
    db.execute("pragma wal_checkpoint(TRUNCATE)")
"""])
    missing = []
    try:
        deadline = time.time() + 20
        while not committed.exists():
            assert time.time() < deadline and writer.poll() is None, "the writer did not start"
            time.sleep(0.02)
        for _ in range(30):
            floor = int(committed.read_text())
            done = run_cli("list", "--json", "--app", "codex")
            ids = {json.loads(line)["id"] for line in done.stdout.splitlines()}
            wanted = {f"0e000000-0000-4000-8000-{n:012d}" for n in range(1, floor + 1)}
            missing.append(len(wanted - ids))
        problems = run_cli("build", "-v").stderr
        assert writer.poll() is None  # it wrote during every list
        assert int(committed.read_text()) > floor  # and kept committing
    finally:
        writer.kill()
        writer.wait(timeout=10)
    assert missing == [0] * 30, f"{sum(n > 0 for n in missing)} of 30 lists missed threads: {missing}"
    assert not [p for p in problems.splitlines() if "state_5.sqlite" in p], problems


def test_a_store_left_open_is_copied_under_the_readers_lock_without_a_byte_written_beside_it(home):
    """A writer killed with its WAL and -shm left behind: the copy takes read lock 0 through the
    -shm opened read-only, and the three files stay as they were, to the ctime (SQLite's own
    read-only open would have opened the -wal to write, made one where there was none, and as
    root fchowned both)."""
    codex = write_codex_home(home, [CodexThread(cwd="/w/0", title="in the database")])
    db = codex / "state_5.sqlite"
    subprocess.run([sys.executable, "-c", f"""
import os, sqlite3
c = sqlite3.connect({str(db)!r})
c.execute("pragma wal_autocheckpoint=0")
c.execute("update threads set title = 'only in the WAL'")
c.commit()
os._exit(0)  # no close: the WAL and the -shm stay
"""], check=True)
    assert {"state_5.sqlite-wal", "state_5.sqlite-shm"} <= {p.name for p in codex.iterdir()}

    def stats() -> list[tuple[str, int, int, int, int]]:
        return [(p.name, p.stat().st_ino, p.stat().st_size, p.stat().st_mtime_ns, p.stat().st_ctime_ns)
                for p in sorted(codex.iterdir())]

    before = stats()
    held = []
    real_copy = sqlite_snapshot._copy

    def copy_noting_the_lock(source: str, target: Path) -> None:
        probe = subprocess.run([sys.executable, "-c", f"""
import fcntl, sys
f = open({str(db)!r} + "-shm", "r+b")  # as a writer opens it (opening changes nothing)
try:
    fcntl.lockf(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 123, 0)
except (BlockingIOError, PermissionError):
    sys.exit(3)  # what a checkpoint finds: it may not copy frames into the database now
"""], check=False)
        held.append(probe.returncode)
        real_copy(source, target)

    problems: list[str] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sqlite_snapshot, "_copy", copy_noting_the_lock)
        assert list(codex_titles(problems).values()) == ["only in the WAL"]
    assert problems == [] and held == [3, 3]  # the database and its WAL copied under the lock
    assert stats() == before


def test_a_store_that_never_holds_still_lists_its_last_good_read(home, monkeypatch):
    """When no copy can be had consistent, the rows of the last good read are listed, with a
    note, rather than none of the threads that live only in the database; the source is read
    again next time. With no earlier read, its rollouts are listed."""
    codex = write_codex_home(home, [CodexThread(cwd="/w/0", title="has a rollout")])
    db = codex / "state_5.sqlite"
    only_in_db = "0f000000-0000-4000-8000-000000000001"
    conn = sqlite3.connect(db)
    row = list(conn.execute("select * from threads").fetchone())
    conn.execute(f"insert into threads values ({','.join('?' * len(row))})", [only_in_db, "/nowhere", *row[2:]])
    conn.commit()
    conn.close()
    assert only_in_db in codex_titles()  # a good read, cached

    conn = sqlite3.connect(db)  # the store changes (its stamp with it), and every copy of it is torn
    conn.execute("update threads set title = 'renamed'")
    conn.commit()
    conn.close()

    def torn(patch: pytest.MonkeyPatch) -> None:
        patch.setattr(sqlite_snapshot, "_held_still", lambda *args: False)
        patch.setattr(sqlite_snapshot.time, "sleep", lambda seconds: None)

    problems: list[str] = []
    with pytest.MonkeyPatch.context() as patch:
        torn(patch)
        titles = codex_titles(problems)
    assert titles[only_in_db] == "has a rollout"  # as last read
    assert any("changed during every one of" in p for p in problems)
    assert any("the last good read is listed (2 session(s))" in p for p in problems), problems

    problems = []  # the writer is done: read again, though the files did not change since
    assert codex_titles(problems)[only_in_db] == "renamed" and problems == []

    (home.parent / "cache").rename(home.parent / "cache-aside")  # no earlier read: the rollouts are listed
    problems = []
    with pytest.MonkeyPatch.context() as patch:
        torn(patch)
        assert set(codex_titles(problems)) == set(titles) - {only_in_db}
    assert any("no earlier read; 1 session(s) listed from its files" in p for p in problems), problems


def test_while_a_checkpoint_holds_read_lock_0_the_copy_is_judged_by_the_files(home):
    """A checkpoint copying frames into the database holds read lock 0 exclusively: the lock is
    not had, and the copy counts only if the files held still (as without a -shm)."""
    codex = write_codex_home(home, [CodexThread(cwd="/w/0", title="in the database")])
    db = codex / "state_5.sqlite"
    (codex / "state_5.sqlite-shm").write_bytes(bytes(32768))  # as a writer's, but only this test's
    ready = home.parent / "locked"
    holder = subprocess.Popen([sys.executable, "-c", f"""
import fcntl, time
f = open({str(db)!r} + "-shm", "r+b")
fcntl.lockf(f.fileno(), fcntl.LOCK_EX, 1, 123, 0)
open({str(ready)!r}, "w").close()
time.sleep(60)
"""])
    try:
        deadline = time.time() + 20
        while not ready.exists():
            assert time.time() < deadline and holder.poll() is None, "the holder did not start"
            time.sleep(0.02)
        with sqlite_snapshot.ReadersLock(str(db)) as lock:
            assert not lock.held
        problems: list[str] = []
        assert list(codex_titles(problems).values()) == ["in the database"] and problems == []
    finally:
        holder.kill()
        holder.wait(timeout=10)
    with sqlite_snapshot.ReadersLock(str(db)) as lock:
        assert lock.held
