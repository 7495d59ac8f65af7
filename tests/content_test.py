"""The content index (issue 11): what was said is found, for every app's real format, and the
index follows appends, rewrites and deletions without reading more than it must."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
from homes import ClaudeSession, CodexThread, write_codex_home

from sessidx.apps import APPS
from sessidx.config import current_env
from sessidx.content import query as content_query
from sessidx.content import reading, store
from sessidx.content.query import search
from sessidx.conversation import recent
from sessidx.index import build
from sessidx.model import Session
from tests.conftest import run_cli

APPS_WITH_DATA = ["claude", "codex", "qwen", "gemini", "droid", "copilot", "kimi", "kimicode", "cline", "cn", "auggie", "amp",
                  "vibe", "opencode", "crush", "goose"]
FILLER_BYTES = 700 * 1024  # more than the tail the list reads (512 KiB), on each side


REAL_HOMES = [*APPS_WITH_DATA, "pi", "hermes", "openhands", "gptme"]  # fixtures/realdata, written by the real CLIs
SYNTHETIC = ["cursor", "kiro", "q", "qoder", "aider"]  # fixtures/synthetic_apps.py: no real CLI ran here


def home_for(app: str, realdata, tmp_path: Path) -> Path:
    """The app's real home, copied so it can be changed; Codex's rollout paths pointed at it. Kilo,
    opencode's fork, gets opencode's real database under its own name; the apps that cannot run here
    get their synthetic homes (fresh, so nothing to copy)."""
    from synthetic_apps import make_home

    from tests.apps.realhome_documents import home_of

    home = tmp_path / f"{app}-home"
    if app in SYNTHETIC:
        make_home(tmp_path / "syn")
        return tmp_path / "syn/home"
    if app == "kilo":
        shutil.copytree(realdata("opencode-home") / ".local/share/opencode", home / ".local/share/kilo")
        (home / ".local/share/kilo/opencode.db").rename(home / ".local/share/kilo/kilo.db")
        return home
    assert app in REAL_HOMES, f"{app}: no home to test it with"
    shutil.copytree(home_of(app, realdata, tmp_path), home, symlinks=True)
    if app == "codex":
        db = home / ".codex/state_5.sqlite"
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE threads SET rollout_path = replace(rollout_path, '/home/alex', ?)", (str(home),))
    return home


def sessions_of(home: Path, monkeypatch, app: str | None = None) -> list:
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    return [s for s in build(current_env(), APPS.values()).sessions if not s.archived and app in (None, s.app)]


def a_plain_prompt(sessions: list[Session]) -> tuple[Session, str]:
    """A session and plain words of one of its prompts (easy to find in their stored form)."""
    for s in sessions:
        for role, said in recent(s, APPS[s.app], exchanges=50):
            if role == "user" and (words := re.search(r"[A-Za-z][A-Za-z ,.?-]{8,}", said)):
                return s, words.group()
    raise AssertionError("no plain prompt in this home")


def plant(app: str, session, prompt: str, needle: str) -> None:
    """A copy of the record holding `prompt`, saying `needle` instead, placed in the middle of
    the session's transcript between copies saying filler, in the app's own stored format."""
    stored = Path(session.path)
    candidates = sorted((stored.parent / "chunks").glob("*.json")) if app == "vibe" else (
        sorted(stored.glob("*.json")) if stored.is_dir() else [stored])
    for path in candidates:
        data = path.read_bytes()
        if prompt.encode() not in data:
            continue
        if stored.is_dir():  # a file per record (OpenHands' events): a copy, named to sort next
            path.with_name(f"{path.stem}x.json").write_bytes(data.replace(prompt.encode(), needle.encode()))
            return
        if path.suffix == ".jsonl":
            lines = data.splitlines(keepends=True)
            said = getattr(APPS[app], "said", bool)  # an app without it keeps no other lines than messages
            line = next(ln for ln in lines if prompt.encode() in ln and said(json.loads(ln)))
            filler = [line.replace(prompt.encode(), f"filler number {i}".encode())
                      for i in range(FILLER_BYTES // len(line) + 1)]
            at = lines.index(line) + 1
            lines[at:at] = [*filler, line.replace(prompt.encode(), needle.encode()), *filler]
            path.write_bytes(b"".join(lines))
            return
        if path.suffix == ".json":
            doc = json.loads(data)
            items = doc if isinstance(doc, list) else next(
                v for v in doc.values() if isinstance(v, list) and prompt in json.dumps(v, ensure_ascii=False))
            entry = next(e for e in items if prompt in json.dumps(e, ensure_ascii=False))
            text = json.dumps(entry, ensure_ascii=False)
            filler = [json.loads(text.replace(prompt, f"filler number {i}")) for i in range(300)]
            at = items.index(entry) + 1
            items[at:at] = [*filler, json.loads(text.replace(prompt, needle)), *filler]
            path.write_text(json.dumps(doc, ensure_ascii=False))
            return
        if data.startswith(b"SQLite format 3"):
            _plant_row(path, prompt, needle)
            return
        if path.suffix == ".md":  # Aider's history: the prompt's own line says the needle
            path.write_bytes(data.replace(prompt.encode(), needle.encode(), 1))
            return
    raise AssertionError(f"{app}: {session.path} does not hold {prompt!r}")


def _plant_row(db: Path, prompt: str, needle: str) -> None:
    """The row saying `prompt` says `needle` instead, in place: one table keeps a message a row
    (opencode's `part`), another a whole conversation a row (Amazon Q's), as text or bytes (Cursor's blobs)."""
    with sqlite3.connect(db) as conn:
        tables = [t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in sorted(tables, key=lambda t: t not in ("part", "messages", "blobs")):  # messages, not titles
            columns = [c[1] for c in conn.execute(f"PRAGMA table_info({table})")]
            for rowid, *row in conn.execute(f"SELECT rowid, * FROM {table}").fetchall():
                for column, value in zip(columns, row, strict=True):
                    was, said = (prompt, needle) if isinstance(value, str) else (prompt.encode(), needle.encode())
                    if isinstance(value, str | bytes) and was in value:
                        conn.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = ?", (value.replace(was, said), rowid))
                        return
    raise AssertionError(f"no row of {db} holds {prompt!r}")


def search_json(home: Path, *words: str) -> list[dict]:
    done = run_cli("search", *words, "--json", env={"SESSIDX_HOME": str(home)})
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.parametrize("app", APPS_WITH_DATA)
def test_a_word_said_mid_transcript_is_found_in_every_format(app, realdata, tmp_path, monkeypatch):
    home = home_for(app, realdata, tmp_path)
    session, prompt = a_plain_prompt(sessions_of(home, monkeypatch))
    needle = f"zqx{app}needle"
    plant(app, session, prompt, f"we spoke of the {needle} here")
    hits = search_json(home, needle)
    assert [(h["app"], h["id"]) for h in hits] == [(app, session.id)]
    assert needle in hits[0]["snippet"] and hits[0]["score"] > 0
    assert search_json(home, needle, "spoke", "here")  # all three words, one session
    assert not search_json(home, needle, "nowhere-said-word")


def claude_home(home: Path, *prompts: str) -> list[ClaudeSession]:
    sessions = [ClaudeSession(cwd=f"/w/p{i}", prompt=p) for i, p in enumerate(prompts)]
    for s in sessions:
        s.write(home)
    return sessions


def transcript(home: Path, s: ClaudeSession) -> Path:
    return next(home.rglob(f"{s.session_id}.jsonl"))


def refresh(home: Path, monkeypatch) -> tuple[dict[str, int], sqlite3.Connection]:
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    env = current_env()
    db = store.connect(env)
    return reading.refresh(db, build(env, APPS.values()).sessions), db


def found(db: sqlite3.Connection, query: str) -> list[str]:
    return [h.session.id for h in search(db, query)]


def test_an_append_is_read_alone_and_found(home, monkeypatch):
    a, b = claude_home(home, "Fix the flaky login test", "Draft the release notes")
    stats, db = refresh(home, monkeypatch)
    assert stats["sources"] == 2 and stats["reindexed"] == 0
    path = transcript(home, a)
    size = path.stat().st_size
    appended = json.dumps({"type": "user", "sessionId": a.session_id, "cwd": a.cwd,
                           "message": {"role": "user", "content": "also bump the frobnicator"}}).encode() + b"\n"
    with path.open("ab") as f:
        f.write(appended)
    stats, db = refresh(home, monkeypatch)
    assert (stats["sources"], stats["appended"], stats["bytes"]) == (1, 1, len(appended))  # only the new bytes
    assert found(db, "frobnicator") == [a.session_id] and found(db, "flaky login") == [a.session_id]
    assert path.stat().st_size == size + len(appended)


def test_a_line_being_written_waits_for_its_newline(home, monkeypatch):
    (a,) = claude_home(home, "Fix the flaky login test")
    path = transcript(home, a)
    half = json.dumps({"type": "user", "message": {"role": "user", "content": "halfwritten words"}}).encode()
    with path.open("ab") as f:
        f.write(half[:20])
    _, db = refresh(home, monkeypatch)
    with path.open("ab") as f:
        f.write(half[20:] + b"\n")
    stats, db = refresh(home, monkeypatch)
    assert stats["appended"] == 1 and found(db, "halfwritten") == [a.session_id]


def test_a_rewrite_or_truncation_is_indexed_again_and_a_deletion_leaves(home, monkeypatch):
    a, b = claude_home(home, "Fix the flaky login test", "Draft the release notes")
    refresh(home, monkeypatch)
    ClaudeSession(cwd=a.cwd, prompt="Rewritten about kumquats", session_id=a.session_id).write(home)  # shorter
    stats, db = refresh(home, monkeypatch)
    assert stats["reindexed"] == 1
    assert found(db, "kumquats") == [a.session_id] and found(db, "flaky") == []
    transcript(home, b).unlink()
    stats, db = refresh(home, monkeypatch)
    assert stats["removed"] == 1 and found(db, "release") == []


def test_same_length_rewrite_is_seen_by_its_fingerprint(home, monkeypatch):
    (a,) = claude_home(home, "Fix the flaky login test")
    refresh(home, monkeypatch)
    path = transcript(home, a)
    data = path.read_bytes()
    path.write_bytes(data.replace(b"flaky login", b"wonky logout"))
    os.utime(path, ns=(0, path.stat().st_mtime_ns + 10**9))
    stats, db = refresh(home, monkeypatch)
    assert stats["reindexed"] == 1 and found(db, "wonky") == [a.session_id] and found(db, "flaky") == []


def test_secrets_are_not_indexed(home, monkeypatch):
    prompt = ("deploy with key sk-proj-AbCdEf0123456789xYz and token ghp_0123456789abcdefghijABCDEFGHIJ0123 "
              "then Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N then pinecone "
              '{"api_key":"Zq9rT4wLm2Xc8VbN"} -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAkeyMaterialQ\n'
              "-----END RSA PRIVATE KEY----- afterward")
    (a,) = claude_home(home, prompt)
    _, db = refresh(home, monkeypatch)
    assert found(db, "pinecone") == [a.session_id]
    for secret in ("sk-proj-AbCdEf0123456789xYz", "AbCdEf0123456789xYz", "ghp_0123456789abcdefghijABCDEFGHIJ0123",
                   "eyJhbGciOiJIUzI1NiJ9", "Zq9rT4wLm2Xc8VbN", "MIIEowIBAAKCAQEAkeyMaterialQ"):
        assert found(db, secret) == [], secret
    assert found(db, "afterward") == [a.session_id]
    snippet = search(db, "pinecone")[0].snippet
    assert "AbCdEf" not in snippet and "Zq9rT4" not in snippet


def test_non_ascii_words_and_phrases(home, monkeypatch):
    a, b, c = claude_home(home, "Add ümlaut support to the parser", "これは日本語のテストです",
                          "Загрузите данные checkout retry logic")
    _, db = refresh(home, monkeypatch)
    assert found(db, "ümlaut") == [a.session_id] and found(db, "UMLAUT") == [a.session_id]
    assert found(db, "日本語") == [b.session_id] and found(db, "本語の") == [b.session_id]
    assert found(db, "данные") == [c.session_id] and found(db, "ДАННЫЕ") == [c.session_id]
    assert found(db, '"checkout retry"') == [c.session_id] and found(db, '"retry checkout"') == []
    assert found(db, "retr") == [c.session_id]  # the word being typed matches as a prefix
    assert found(db, 'AND OR NOT ( ) * : ^ "') == []  # FTS5 syntax is only ever words


def test_bad_input_never_stops_the_rest(home, monkeypatch):
    from sessidx import conversation

    a, b = claude_home(home, "Fix the flaky login test", "Draft the release notes")
    path = transcript(home, a)
    with path.open("ab") as f:
        f.write(b"\x00\xff\xfe binary junk\n{broken json\n")
        f.write(b'{"type":"user","message":{"content":"' + b"x" * (conversation.LINE_CAP + 1) + b'"}}\n')
        f.write(json.dumps({"type": "user", "message": {"role": "user", "content": "after the junk"}}).encode() + b"\n")
    _, db = refresh(home, monkeypatch)
    assert found(db, "junk") == [a.session_id] and found(db, "release") == [b.session_id]


def test_a_huge_line_is_skipped_without_being_held(home, monkeypatch):
    from sessidx import conversation

    (a,) = claude_home(home, "Fix the flaky login test")
    path = transcript(home, a)
    with path.open("ab") as f:
        f.write(b'{"type":"user","message":{"role":"user","content":"hugeword ')
        f.truncate(f.tell() + 4 * conversation.LINE_CAP)  # a sparse line four times the cap
        f.seek(0, os.SEEK_END)
        f.write(b'"}}\n' + json.dumps({"type": "user", "message": {"role": "user", "content": "tailword"}}).encode()
                + b"\n")
    import tracemalloc

    tracemalloc.start()
    try:
        _, db = refresh(home, monkeypatch)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found(db, "tailword") == [a.session_id] and found(db, "hugeword") == []
    assert peak < 3 * conversation.LINE_CAP  # the line is 4 caps long: never held whole


def test_search_command_and_drop(home, tmp_path):
    claude_home(home, "Fix the flaky login test")
    env = {"SESSIDX_HOME": str(home)}
    done = run_cli("search", "flaky", env=env)
    assert done.returncode == 0 and "flaky login" in done.stdout
    missing = run_cli("search", "nosuchword", env=env)
    assert missing.returncode == 1 and "no session says 'nosuchword'" in missing.stderr
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "sessidx"
    assert oct((cache / "content.sqlite").stat().st_mode & 0o777) == "0o600"
    assert oct(cache.stat().st_mode & 0o777) == "0o700"
    assert run_cli("search", "--drop", env=env).returncode == 0
    assert not (cache / "content.sqlite").exists()
    off = run_cli("search", "flaky", env={**env, "SESSIDX_CONTENT": "0"})
    assert off.returncode != 0 and "content search is off" in off.stderr


def test_the_preview_shows_the_conversation_and_the_best_match(home):
    (a,) = claude_home(home, "Fix the flaky login test")
    env = {"SESSIDX_HOME": str(home), "FZF_PREVIEW_COLUMNS": "60"}
    plain = run_cli("preview", "--shell", "bash", f"claude:{a.session_id}", env=env).stdout
    assert "said lately" in plain and "you   Fix the flaky login test" in plain
    run_cli("search", "flaky", env=env)
    hit = run_cli("preview", "--shell", "bash", f"claude:{a.session_id}",
                  env={**env, "FZF_PROMPT": "content> ", "FZF_QUERY": "flaky"}).stdout
    assert "best match" in hit and "\x1b[1;33mflaky\x1b[0m" in hit


def test_a_rebuild_starts_over_and_finds_everything_again(home, monkeypatch):
    a, b = claude_home(home, "Fix the flaky login test", "Draft the release notes")
    _, db = refresh(home, monkeypatch)
    ClaudeSession(cwd=a.cwd, prompt="Rewritten about kumquats", session_id=a.session_id).write(home)
    refresh(home, monkeypatch)
    store.rebuild_if_mostly_dead(db, force=True)  # as when dead rows outnumber live ones
    assert found(db, "release") == []
    stats, db = refresh(home, monkeypatch)
    assert stats["sources"] == 2 and stats["reindexed"] == 0
    assert found(db, "kumquats") == [a.session_id] and found(db, "release") == [b.session_id]
    assert found(db, "flaky") == []  # the rows of the first reading are gone for good


def test_row_ids_of_a_gone_source_never_come_back(home, monkeypatch):
    (a,) = claude_home(home, "Fix the flaky login test")
    _, db = refresh(home, monkeypatch)
    transcript(home, a).unlink()
    refresh(home, monkeypatch)
    (c,) = claude_home(home, "Draft the release notes")
    _, db = refresh(home, monkeypatch)
    assert found(db, "flaky") == [] and found(db, "release") == [c.session_id]


def _test_log(lines: int, error: str, at_end: bool = True) -> str:
    body = [f"tests/test_cart.py::test_case_{i} PASSED middleword{i}" for i in range(lines)]
    return "\n".join([*body, error] if at_end else [error, *body])


def test_tool_outputs_are_indexed_by_the_parts_people_search_for(home, monkeypatch):
    """Short outputs whole; of long ones (parsed, or too long to parse) the error lines and the
    first and last lines, for Claude's tool_result and Codex's function_call_output alike."""
    (a,) = claude_home(home, "Run the test suite")
    outputs = [("smalloutputword", "t1"), (_test_log(200, "E   KeyError: 'discount_code'"), "t2"),  # 9 KB: parsed
               (_test_log(1500, "ModuleNotFoundError: No module named 'yaml_loader'"), "t3"),  # 70 KB: raw
               (_test_log(1500, "npm ERR! code ERESOLVE", at_end=False), "t4")]
    with transcript(home, a).open("a") as f:
        for text, tool_id in outputs:
            f.write(json.dumps({"type": "user", "sessionId": a.session_id, "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": tool_id, "content": text}]},
                "toolUseResult": {"stdout": text, "stderr": ""}}) + "\n")
        f.write(json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t5", "name": "Bash", "input": {"command": "pytest -q tests/test_frobs.py"}}]}})
                + "\n")
    thread = CodexThread(cwd="/w/codex", title="Build the crate")
    write_codex_home(home, [thread])
    rollout = next(home.rglob(f"*{thread.thread_id}.jsonl"))
    with rollout.open("a") as f:
        for text in ("error[E0382]: borrow of moved value: `session_pool`",
                     _test_log(1500, "thread 'main' panicked at src/pool.rs:12:5")):
            f.write(json.dumps({"type": "response_item", "payload": {
                "type": "function_call_output", "call_id": "c1",
                "output": f"Chunk ID: ab12\nProcess exited with code 101\nOutput:\n{text}"}}) + "\n")
    _, db = refresh(home, monkeypatch)
    for words in ("smalloutputword", "KeyError discount_code", "ModuleNotFoundError yaml_loader", "ERESOLVE",
                  "test_frobs"):
        assert found(db, words) == [a.session_id], words
    assert set(found(db, "middleword0")) == {a.session_id, thread.thread_id}  # a first line, in both
    assert found(db, "middleword700") == []  # the middle of a long log is not indexed
    for words in ("E0382 session_pool", "panicked pool.rs", "exited 101"):
        assert found(db, words) == [thread.thread_id], words
    assert found(db, "middleword500") == []


def test_a_store_that_cannot_be_read_now_is_tried_again(realdata, tmp_path, monkeypatch):
    """A database that fails to read (locked, damaged) costs its sessions this refresh only."""
    from sessidx.apps import opencode

    home = home_for("opencode", realdata, tmp_path)
    session, prompt = a_plain_prompt(sessions_of(home, monkeypatch))
    real = opencode.OpenCode.conversation

    def broken(self, s):
        raise OSError("database is locked")

    monkeypatch.setattr(opencode.OpenCode, "conversation", broken)
    stats, db = refresh(home, monkeypatch)
    assert stats["failed"] == 3 and found(db, prompt.split()[0]) == []
    monkeypatch.setattr(opencode.OpenCode, "conversation", real)
    stats, db = refresh(home, monkeypatch)
    assert stats["sources"] == 3 and session.id in found(db, prompt)


def test_search_arguments_are_checked(home):
    claude_home(home, "Fix the flaky login test")
    env = {"SESSIDX_HOME": str(home)}
    assert run_cli("search", "--limit", "0", "flaky", env=env).returncode == 2
    assert run_cli("search", "--app", "nosuch", "flaky", env=env).returncode == 1
    assert run_cli("search", env=env).returncode == 1  # no words
    unquoted = run_cli("search", "flaky", "login", "--json", env=env)
    assert unquoted.returncode == 0 and len(unquoted.stdout.splitlines()) == 1


def test_the_preview_takes_any_pane_width_fzf_may_pass(home):
    (a,) = claude_home(home, "Fix the flaky login test")
    for columns in ("abc", "0", "-5", "", "12"):
        done = run_cli("preview", "--shell", "bash", f"claude:{a.session_id}",
                       env={"SESSIDX_HOME": str(home), "FZF_PREVIEW_COLUMNS": columns})
        assert done.returncode == 0 and "Fix the flaky login test" in done.stdout, (columns, done.stderr)


@pytest.mark.parametrize("cores", [2, 4])
def test_many_sources_are_read_by_two_processes_and_all_found(home, tmp_path, monkeypatch, cores):
    """A first index of many sessions is read by two processes at once: with two cores, this
    one and a forked reader; with more, two forked readers while this one writes."""
    sessions = claude_home(home, *(f"talk about topic{i} and shared words" for i in range(40)))
    readers = tmp_path / "readers"
    readers.touch()
    read = reading._read
    parent = os.getpid()
    two_cores = len(os.sched_getaffinity(0)) > 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)))

    def another_has_read() -> bool:
        return any(pid != str(os.getpid()) for pid in readers.read_text().split())

    def read_and_note(source, start):  # the readers are forked: they run this
        with readers.open("a") as f:
            f.write(f"{os.getpid()}\n")
        deadline = time.monotonic() + 5  # each waits until another has read one: both surely read
        while two_cores and not another_has_read() and time.monotonic() < deadline:
            time.sleep(0.01)
        return read(source, start)

    monkeypatch.setattr(reading, "_read", read_and_note)
    monkeypatch.setattr(reading, "BULK", 10)
    stats, db = refresh(home, monkeypatch)
    assert stats["sources"] == 40 and stats["messages"] >= 40
    assert db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL again after the load without fsync
    assert len(readers.read_text().split()) == 40  # each read once
    pids = set(readers.read_text().split())
    if two_cores and cores > reading.READERS:  # this process only writes
        assert len(pids) == reading.READERS and str(parent) not in pids
    elif two_cores:  # a reader, and this process reads too
        assert str(parent) in pids and len(pids) == 2
    for i in (0, 17, 39):
        assert found(db, f"topic{i}") == [sessions[i].session_id]
    assert len(found(db, "shared words")) == 40


def index_terms(db: sqlite3.Connection) -> set[str]:
    """FTS5's own vocabulary, without the identifier parts' terms (near.PART: no typo is looked
    up among those)."""
    from sessidx.content.near import PART

    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.said_terms USING fts5vocab(main, said, row)")
    return {t for (t,) in db.execute("SELECT term FROM temp.said_terms") if PART not in t}


@pytest.mark.parametrize("bulk", [True, False], ids=["first index, read by two processes", "a few sources"])
def test_the_typo_tiers_term_table_holds_every_term_of_the_index(home, monkeypatch, bulk):
    """The `term` table (every term, spelt backwards: a typo early in a word is looked up by its
    end) holds every term of FTS5's vocabulary, after a first index (taken from that
    vocabulary) as after a few sources (from their text); and after an append, the new words too."""
    prompts = [f"Refactor theWidgetFactory {i} über naïve café Straße token{i % 7} x_{i}-y" for i in range(30)]
    sessions = claude_home(home, *prompts)
    monkeypatch.setattr(reading, "BULK", 10 if bulk else 1000)
    _, db = refresh(home, monkeypatch)
    held = {t[::-1] for (t,) in db.execute("SELECT rev FROM term")}
    assert index_terms(db) <= held and {"thewidgetfactory", "uber", "token6", "x_29"} - held == {"x_29"}
    path = transcript(home, sessions[0])
    with path.open("ab") as f:
        f.write(json.dumps({"type": "user", "sessionId": sessions[0].session_id, "cwd": sessions[0].cwd,
                            "message": {"role": "user", "content": "also the Frobnicator"}}).encode() + b"\n")
    _, db = refresh(home, monkeypatch)
    held = {t[::-1] for (t,) in db.execute("SELECT rev FROM term")}
    assert "frobnicator" in held and index_terms(db) <= held


def test_records_are_read_as_json_loads_reads_them():
    from sessidx.readers import json_value as loads

    for line in (b'{"a": [1, 2.5, -1e3, null, true, "\\u00fc x"]}', b' {"a": 1} \n', b"\xef\xbb\xbf{\"b\": 2}",
                 b'{"a": "\\ud800"}', b"[NaN, Infinity]", b"null", b"\xef\xbb\xbf {\"b\": 2}", '{"s": "str"}'):
        assert repr(loads(line)) == repr(json.loads(line)), line
    for broken in (b'{"a": 1} x', b"", b"nope", b"\xff\xfe", b'{"a": "\x01"}', b'{"a": ', b"[" * 100_000,
                   b'\x0c{"a": 1}', '\ufeff{"a": 1}'):
        assert loads(broken) is None, broken


def test_an_interrupt_keeps_what_was_committed_and_stops_the_helper(home, monkeypatch):
    """Ctrl-C during a first index (forked readers reading): what was committed stays, the
    helpers are gone, and the next refresh reads only the rest."""
    claude_home(home, *(f"talk about subject{i}" for i in range(30)))
    stored = reading._store
    seen = []

    def interrupted_store(db, source, *args, **kwargs):
        seen.append(source.key)
        if len(seen) == 5:
            raise KeyboardInterrupt
        return stored(db, source, *args, **kwargs)

    monkeypatch.setattr(reading, "_store", interrupted_store)
    monkeypatch.setattr(reading, "BULK", 10)
    monkeypatch.setattr(reading, "COMMIT_SECONDS", 0)  # a commit after each session
    with pytest.raises(KeyboardInterrupt):
        refresh(home, monkeypatch)
    assert children() == []  # killed and reaped: no zombie either
    db = store.connect(current_env())
    kept = db.execute("SELECT count(*) FROM source WHERE stamp != ''").fetchone()[0]
    assert 4 <= kept < 30
    monkeypatch.setattr(reading, "_store", stored)
    stats, db = refresh(home, monkeypatch)
    assert stats["sources"] == 30 - kept and stats["reindexed"] == 0
    assert len(found(db, "talk")) == 30


def test_a_first_index_cut_short_gets_its_typo_terms_from_the_next_refresh(home, monkeypatch):
    """A first index takes the typo tier's terms from FTS5 at its end. Interrupted after some
    commits, with fewer sources left than a first index reads at once, the next refresh (one
    source at a time, noting only its own sources' terms) still leaves every term of the index
    in `term`: the early-typo lookup would otherwise never find the sessions read before."""
    claude_home(home, *(f"talk about subject{i} Reconnecting{i}" for i in range(30)))
    stored = reading._store
    seen = []

    def interrupted_store(db, source, *args, **kwargs):
        seen.append(source.key)
        if len(seen) == 26:
            raise KeyboardInterrupt
        return stored(db, source, *args, **kwargs)

    monkeypatch.setattr(reading, "_store", interrupted_store)
    monkeypatch.setattr(reading, "BULK", 10)
    monkeypatch.setattr(reading, "COMMIT_SECONDS", 0)  # a commit after each session
    with pytest.raises(KeyboardInterrupt):
        refresh(home, monkeypatch)
    monkeypatch.setattr(reading, "_store", stored)
    stats, db = refresh(home, monkeypatch)
    assert 0 < stats["sources"] < reading.BULK  # the rest, read as a few sources are
    held = {t[::-1] for (t,) in db.execute("SELECT rev FROM term")}
    assert index_terms(db) <= held and {"subject0", "reconnecting0"} <= held
    assert db.execute("SELECT count(*) FROM unfinished").fetchone()[0] == 0


def test_words_far_apart_are_found_every_way_the_index_is_asked(home, monkeypatch):
    """Words in one row rank first; words in different rows of a session are found too, whether
    a common word is looked up in each candidate or listed whole, ranked or newest first."""
    monkeypatch.setattr(reading, "CHUNK_TEXT", 1)  # a row per record: two records are far apart
    apart, elsewhere, together = claude_home(home, "alpha words here", "beta only", "alpha and beta together")
    with transcript(home, apart).open("a") as f:
        f.write(json.dumps({"type": "user", "message": {"role": "user", "content": "later beta came"}}) + "\n")
    _, db = refresh(home, monkeypatch)
    for ranked, ranked_rows, most_variables in ((5000, 1000, 30_000), (0, 1000, 30_000), (5000, 0, 30_000), (0, 0, 30_000),
                                                (5000, 1000, 0)):
        monkeypatch.setattr(content_query, "RANKED", ranked)
        monkeypatch.setattr(content_query, "RANKED_ROWS", ranked_rows)
        monkeypatch.setattr(content_query, "MOST_VARIABLES", most_variables)  # candidates named in SQL, or not
        ids = found(db, "alpha beta")
        assert sorted(ids) == sorted([apart.session_id, together.session_id]), (ranked, ranked_rows, most_variables)
        if ranked_rows:
            assert ids[0] == together.session_id
        hit = next(h for h in search(db, "alpha beta") if h.session.id == apart.session_id)
        assert "alpha" in hit.snippet or "beta" in hit.snippet


def test_a_first_index_is_read_alone_where_no_helper_can_start(home, monkeypatch):
    """No fork or no shared memory (a sandbox): the first index is read by this process alone."""
    import mmap

    def refused(*args, **kwargs):
        raise OSError(38, "Function not implemented")

    claude_home(home, *(f"talk about item{i}" for i in range(12)))
    monkeypatch.setattr(reading, "BULK", 10)
    for module, name in ((os, "fork"), (mmap, "mmap")):
        with monkeypatch.context() as m:
            m.setattr(module, name, refused)
            stats, db = refresh(home, monkeypatch)
        assert stats["sources"] == 12 and len(found(db, "talk")) == 12, name
        store.rebuild_if_mostly_dead(db, force=True)


def test_what_a_helper_that_died_took_is_read_by_this_process(home, monkeypatch):
    """A helper killed while reading (out of memory): the sources it took are read here, none lost."""
    claude_home(home, *(f"talk about piece{i}" for i in range(30)))
    read = reading._read
    parent = os.getpid()

    def dying_read(source, start):
        if os.getpid() != parent:
            os._exit(9)  # the helper, at its first source
        time.sleep(0.01)  # the helper surely takes one
        return read(source, start)

    monkeypatch.setattr(reading, "_read", dying_read)
    monkeypatch.setattr(reading, "BULK", 10)
    stats, db = refresh(home, monkeypatch)
    assert stats["sources"] == 30 and len(found(db, "talk")) == 30
    assert children() == []


def test_a_reader_that_died_holding_the_token_stops_nobody(home, tmp_path, monkeypatch):
    """Two readers (three cores or more): one killed while it holds the token that guards the
    shared counter; the other goes on without it, and every session is indexed once."""
    claude_home(home, *(f"talk about part{i}" for i in range(30)))
    parent = os.getpid()
    died = tmp_path / "died"
    take = reading._Helpers.take

    def take_or_die(self):
        if os.getpid() != parent:
            try:
                os.close(os.open(died, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                return take(self)
            self._token()
            os._exit(9)  # the first reader to get here, the token in hand
        return take(self)

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(4)))
    monkeypatch.setattr(reading._Helpers, "take", take_or_die)
    monkeypatch.setattr(reading, "BULK", 10)
    started = time.monotonic()
    stats, db = refresh(home, monkeypatch)
    assert time.monotonic() - started < 30  # it waited once (5 s), not at each session
    assert died.exists() and stats["sources"] == 30
    assert len(found(db, "talk")) == 30 and db.execute("SELECT count(*) FROM chunk").fetchone()[0] == 30
    assert children() == []


def children() -> list[str]:
    """This process's child processes, zombies too (Linux)."""
    return [pid for task in os.listdir(f"/proc/{os.getpid()}/task")
            for pid in open(f"/proc/{os.getpid()}/task/{task}/children").read().split()]


def test_the_prompt_holds_the_pickers_filters():
    from sessidx.render import prompt_of, prompt_state

    for state in [(c, app, scope) for c in (False, True) for app in (None, "codex") for scope in (None, "here", "repo")]:
        assert prompt_state(prompt_of(*state)) == state, state
    assert prompt_of(False, None, None) == "session> " and prompt_of(True, "codex", "here") == "content:codex@here> "
    assert prompt_of(False, None, "repo") == "session@repo> "


def test_ctrl_a_and_ctrl_s_narrow_the_content_mode_and_ctrl_f_keeps_them(home, tmp_path):
    claude_home(home, "the shared kumquat question")
    here = tmp_path / "here"
    here.mkdir()
    write_codex_home(home, [CodexThread(cwd=str(here), title="the shared kumquat thread")])
    env = {"SESSIDX_HOME": str(home)}
    run_cli("search", "--refresh", env=env, check=True)

    def rows(prompt: str, pwd: str = "/") -> list[str]:
        out = run_cli("lines", "--content", "kumquat", env={**env, "FZF_PROMPT": prompt, "PWD": pwd}).stdout
        return sorted(line.rsplit("\t", 1)[-1].split(":")[0] for line in out.splitlines()[1:])

    assert rows("content> ") == ["claude", "codex"]
    assert rows("content:codex> ") == ["codex"]
    assert rows("content@here> ", str(here)) == ["codex"] and rows("content:claude@here> ", str(here)) == []
    cycled = run_cli("cycle", "app", env={**env, "FZF_PROMPT": "content> "}).stdout
    assert "change-prompt(content:claude> )" in cycled and cycled.rstrip().endswith("lines --content {q}")
    scoped = run_cli("cycle", "scope", env={**env, "FZF_PROMPT": "content:codex> ", "PWD": str(here)}).stdout
    assert "change-prompt(content:codex@here> )" in scoped and "scope: this folder" in scoped
    to_titles = run_cli("cycle", "mode", env={**env, "FZF_PROMPT": "content:codex@here> "}).stdout
    assert "change-prompt(codex@here> )" in to_titles and to_titles.rstrip().endswith("lines --app codex --here)")
    to_content = run_cli("cycle", "mode", env={**env, "FZF_PROMPT": "codex> "}).stdout
    assert "rebind(change)" in to_content
    if "cycle index-start" in to_content:  # the refresh Ctrl-F started is under way: the prompt once the list is empty
        to_content = run_cli("cycle", "index-start", env={**env, "FZF_PROMPT": "codex> "}).stdout
    assert "change-prompt(content:codex> )" in to_content


def test_a_first_search_on_a_terminal_shows_its_progress_then_clears_it(home):
    """The progress line (sessions, MB) is drawn on stderr when it is a terminal, and wiped
    before the results."""
    import pty
    import subprocess
    import sys

    claude_home(home, "Fix the flaky login test", "Draft the release notes", "Tune the flaky cache")
    leader, follower = pty.openpty()
    done = subprocess.run([sys.executable, "-m", "sessidx", "search", "flaky"], stdout=subprocess.PIPE,
                          stderr=follower, env={**os.environ, "SESSIDX_HOME": str(home)}, timeout=60)
    os.close(follower)
    shown = b""
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the terminal's other end is closed: all was read
            break
        if not data:
            break
        shown += data
    os.close(leader)
    assert done.returncode == 0 and done.stdout.count(b"flaky") == 2
    assert b"indexing what was said: 0/3 sessions" in shown and b"3/3 sessions" in shown
    assert shown.rstrip().endswith(b"\r\x1b[K") and b"Traceback" not in shown


def test_a_common_word_is_listed_newest_first_within_the_app_asked(home, monkeypatch):
    claude_home(home, "the shared kumquat question", "an older kumquat question")
    write_codex_home(home, [CodexThread(cwd="/w/codex", title="the shared kumquat thread")])
    _, db = refresh(home, monkeypatch)
    monkeypatch.setattr(content_query, "RANKED_ROWS", 0)  # every word counts as common: newest first, in SQL
    assert [h.session.app for h in search(db, "kumquat", app="codex")] == ["codex"]
    claude = search(db, "kumquat", app="claude")
    assert [h.session.app for h in claude] == ["claude", "claude"]
    assert claude[0].session.mtime >= claude[1].session.mtime
    assert len(search(db, "kumquat", limit=2)) == 2 and len(search(db, "kumquat")) == 3


def test_a_word_far_into_a_long_message_is_shown_in_its_snippet(home, monkeypatch):
    """A glance (the first 8 KiB of each record) does not hold the word: the long records are
    read on, and the snippet shows it."""
    (a,) = claude_home(home, "A short opening question")
    with transcript(home, a).open("a") as f:
        for text in (*(f"a short note {i}" for i in range(4)), "padding " * 1500 + "the zanzibarword at last"):
            f.write(json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n")
    _, db = refresh(home, monkeypatch)
    (hit,) = search(db, "zanzibarword")
    assert "zanzibarword" in hit.snippet and hit.role == "user"


def test_broken_lines_are_skipped_where_json_was_never_loaded(home):
    """The C scanner raises its errors through `json.decoder`, found only if already loaded: a
    process that never loaded `json` (a warm list, then the index) must skip them all the same."""
    import subprocess
    import sys

    probe = ("import sys; from sessidx.readers import json_value; "
             "print([json_value(b) for b in (b'{\"trunc', b'{\"a\": \"\\x01\"}', b'{\"a\" 1}', b'[1,]')], "
             "'json' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.split("]")[0] == "[None, None, None, None" and done.stdout.strip().endswith("False"), done
    (a,) = claude_home(home, "Fix the flaky login test")
    with transcript(home, a).open("a") as f:
        f.write('{"type": "user", "message": {"role": "user", "content": "half a line\n{"type": "user", "trunc\n')
    env = {"SESSIDX_HOME": str(home)}
    run_cli("build", env=env, check=True)  # warm: the search's own list parses nothing
    found = run_cli("search", "flaky", env=env)
    assert found.returncode == 0 and "Traceback" not in found.stderr and "flaky" in found.stdout, found.stderr


def test_the_bytes_before_a_reads_end_are_what_the_file_holds_there(tmp_path, monkeypatch):
    """records_from keeps the last bytes it read (the index compares them before an append), across
    reads of its buffer and lines too long to hold, as a read of the file at that place finds them."""
    from sessidx import conversation

    monkeypatch.setattr(conversation, "CHUNK", 50)
    monkeypatch.setattr(conversation, "LINE_CAP", 120)
    path = tmp_path / "t.jsonl"
    lines = [json.dumps({"type": "user", "n": i, "pad": "x" * (i * 7 % 90)}) for i in range(30)]
    lines.insert(12, json.dumps({"type": "user", "blob": "y" * 400}))  # skipped, never held
    path.write_bytes(("\n".join(lines) + "\n" + '{"type": "user", "half').encode())
    data = path.read_bytes()
    for start in (0, len(lines[0]) + 1, data.index(b"\n", 900) + 1):
        *records, (end, before) = conversation.records_from(str(path), start, (b'"type"',))
        assert -end == data.rindex(b"\n") + 1
        assert before == data[-end - conversation.FINGERPRINT:-end], start
        assert records and all(pos >= start and "blob" not in record for pos, record in records)
