"""Bad input is skipped or explained, never a traceback or a hang, and never hides other sessions."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from homes import ClaudeSession, CodexThread, write_codex_home

from tests.conftest import run_cli

WRONG_TYPES = [None, 1, 2.5, True, [], {}, "x" * 3, ["list"], {"nested": 1}]


def claude_folder(home: Path) -> Path:
    folder = home / ".claude/projects/-w-bad"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def good_sessions(home: Path) -> set[str]:
    ids = {ClaudeSession(cwd="/w/good", prompt="good claude").write(home).stem}
    t = CodexThread(cwd="/w/good", title="good codex")
    write_codex_home(home, [t])
    return ids | {t.thread_id}


def listed(*extra: str) -> tuple[set[str], str]:
    done = run_cli("list", "--json", *extra)
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    return {json.loads(line)["id"] for line in done.stdout.splitlines()}, done.stderr


BAD_FILES = {
    "empty": b"",
    "binary": bytes(range(256)) * 50,
    "nuls": b"\x00" * 5000,
    "invalid-utf8": b'{"type":"user","cwd":"/w/\xff\xfe","message":{"content":"hi \xc3"}}\n',
    "truncated": b'{"type":"user","cwd":"/w","sessionId":"x","message":{"content":"cut',
    "non-object-lines": b'[1,2,3]\n"just a string"\n42\nnull\ntrue\n',
    "bom-crlf": b'\xef\xbb\xbf{"type":"user","cwd":"/w/bom","message":{"content":"bom"}}\r\n',
    "huge-head-line": b'{"type":"user","cwd":"/w/huge","message":{"content":"' + b"x" * (3 << 20) + b'"}}\n',
    "huge-tail-no-newline": b'{"type":"user","cwd":"/w/t","message":{"content":"a"}}\n{"x":"' + b"y" * (3 << 20),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_bad_claude_transcripts(home, name):
    expected = good_sessions(home)
    (claude_folder(home) / f"{name}.jsonl").write_bytes(BAD_FILES[name])
    ids, _ = listed()
    assert expected <= ids


@pytest.mark.parametrize("value", WRONG_TYPES)
def test_wrong_types_in_every_field(home, value):
    expected = good_sessions(home)
    fields = ["type", "cwd", "gitBranch", "permissionMode", "isSidechain", "message", "requestedModel", "effort",
              "customTitle", "aiTitle", "lastPrompt", "summary", "entrypoint", "sessionId", "timestamp"]
    records = [{"type": "user", "cwd": "/w/typed", "message": {"content": "ok"}}]
    for f in fields:
        records.append({"type": "user", "cwd": "/w/typed", f: value})
        records.append({"type": "assistant", f: value, "message": value})
        records.append({"type": "custom-title", f: value})
    (claude_folder(home) / "5e55a1d0-0000-4000-8000-00000000717e.jsonl").write_text("\n".join(json.dumps(r) for r in records))
    ids, _ = listed()
    assert expected | {"5e55a1d0-0000-4000-8000-00000000717e"} <= ids


def test_odd_folder_entries(home):
    expected = good_sessions(home)
    folder = claude_folder(home)
    (folder / "dir.jsonl").mkdir()
    os.mkfifo(folder / "fifo.jsonl")
    (folder / "dev.jsonl").symlink_to("/dev/zero")
    (folder / "dangling.jsonl").symlink_to(folder / "nowhere")
    (folder / "loop").symlink_to(folder)
    (home / ".claude/projects/looped").symlink_to(home / ".claude/projects")
    (folder / "notes.txt").write_text("stray")
    (home / ".claude/projects/stray-file.jsonl").write_text("{}")
    unreadable = folder / "secret.jsonl"
    unreadable.write_text('{"type":"user","cwd":"/w"}')
    unreadable.chmod(0)
    ids, _ = listed()
    assert expected <= ids


@pytest.mark.parametrize(
    "damage",
    ["truncate", "junk", "no-table", "no-columns", "empty-file", "directory"],
)
def test_bad_codex_database_other_sessions_still_listed(home, damage):
    claude_id = ClaudeSession(cwd="/w", prompt="still listed").write(home).stem
    thread = CodexThread(cwd="/w")
    write_codex_home(home, [thread])
    db = home / ".codex/state_5.sqlite"
    wal = Path(f"{db}-wal")
    if damage == "truncate":
        wal.unlink()
        db.write_bytes(db.read_bytes()[:100])
    elif damage == "junk":
        wal.unlink()
        db.write_bytes(b"SQLite format 3\x00" + os.urandom(4000))
    elif damage in ("no-table", "no-columns"):
        wal.unlink()
        db.unlink()
        conn = sqlite3.connect(db)
        conn.execute("create table threads (unrelated text)" if damage == "no-columns" else "create table other (a)")
        conn.commit()
        conn.close()
    elif damage == "empty-file":
        wal.unlink()
        db.write_bytes(b"")
    elif damage == "directory":
        wal.unlink()
        db.unlink()
        db.mkdir()
    ids, _ = listed()
    assert {claude_id, thread.thread_id} <= ids  # the rollouts are walked instead
    done = run_cli("build", "-v")
    assert done.returncode == 0 and "Traceback" not in done.stderr


def test_database_held_by_a_writer(home):
    t = CodexThread(cwd="/w", title="locked but readable")
    write_codex_home(home, [t], wal=False)
    conn = sqlite3.connect(home / ".codex/state_5.sqlite")
    conn.execute("begin exclusive")
    try:
        ids, _ = listed()
    finally:
        conn.rollback()
        conn.close()
    assert t.thread_id in ids


def test_control_characters_never_reach_the_terminal(home):
    ClaudeSession(cwd="/w/\x1b[31mred", prompt="title \x1b]52;c;ZXZpbA==\x07 with\ttab\nnewline",
                  branch="b\x1bx").write(home)
    done = run_cli("list")
    assert done.returncode == 0 and "\x1b" not in done.stdout and "\x07" not in done.stdout
    sid = json.loads(run_cli("list", "--json").stdout)["id"]
    preview = run_cli("preview", sid)
    assert "\x1b" not in preview.stdout and "\x07" not in preview.stdout


def test_missing_homes_are_fine(home):
    done = run_cli("list", "--json")
    assert done.returncode == 0 and done.stdout == "" and "Traceback" not in done.stderr
