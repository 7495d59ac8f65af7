"""A transcript rewritten in place at the same size, its mtime put back (`touch -r`, as backup
and sync tools do), is read again: the listing, the content index and the nothing-changed
search judge a file by its ctime and inode too, which a rewrite cannot put back (issue 28). The
search answers from the index first: the one just after the rewrite says what it may have
missed (content/kept.py), the one after it has it."""

from __future__ import annotations

import json
import os
from pathlib import Path

from homes import ClaudeSession, CodexThread, write_codex_home

from tests.conftest import run_cli


def rewrite_keeping_size_and_mtime(path: Path, old: dict[bytes, bytes]) -> None:
    """Each old word replaced by a new one of its length, in place (the same inode), and the
    mtime put back as `touch -r` would."""
    before = path.stat()
    data = path.read_bytes()
    for word, new in old.items():
        assert len(word) == len(new) and word in data
        data = data.replace(word, new)
    with path.open("r+b") as f:
        f.write(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)


def listed(home: Path) -> dict[str, str]:
    done = run_cli("list", "--json", env={"SESSIDX_HOME": str(home)})
    return {s["id"]: s["title"] for s in map(json.loads, done.stdout.splitlines())}


def searched(home: Path, word: str) -> set[str]:
    done = run_cli("search", word, "--json", env={"SESSIDX_HOME": str(home)})
    return {hit["id"] for hit in map(json.loads, done.stdout.splitlines())}


def told(home: Path) -> str:
    """What the search just after a change says on stderr (it answered from the index before its check)."""
    return run_cli("search", "anything", env={"SESSIDX_HOME": str(home)}).stderr


def test_a_same_size_rewrite_with_its_mtime_put_back_is_read_again(home):
    claude = ClaudeSession(cwd="/w/claude", prompt="Explain zqoldprompt please", custom_title="Alpha title")
    claude_path = claude.write(home)
    thread = CodexThread(cwd="/w/codex", title="Build the crate")
    write_codex_home(home, [thread])
    rollout = next(home.rglob(f"*{thread.thread_id}.jsonl"))
    with rollout.open("a") as f:
        f.write(json.dumps({"type": "response_item", "payload": {"type": "message", "role": "assistant",
                                                                  "content": [{"type": "output_text",
                                                                               "text": "the zqoldanswer is here"}]}})
                + "\n")
    assert listed(home)[claude.session_id] == "Alpha title"
    assert searched(home, "zqoldprompt") == {claude.session_id} and searched(home, "zqoldanswer") == {thread.thread_id}
    assert searched(home, "zqoldprompt") == {claude.session_id}  # nothing changed: the kept path answers

    rewrite_keeping_size_and_mtime(claude_path, {b"zqoldprompt": b"zqnewprompt", b"Alpha title": b"Omega title"})
    rewrite_keeping_size_and_mtime(rollout, {b"zqoldanswer": b"zqnewanswer"})
    assert "2 sessions changed since" in told(home)
    assert searched(home, "zqnewprompt") == {claude.session_id}
    assert searched(home, "zqoldprompt") == set()
    assert searched(home, "zqnewanswer") == {thread.thread_id} and searched(home, "zqoldanswer") == set()
    assert listed(home)[claude.session_id] == "Omega title"


def test_a_file_replaced_by_another_of_its_size_and_mtime_is_read_again(home):
    """The other way a copy keeps both: a new file renamed over the old one (a new inode)."""
    claude = ClaudeSession(cwd="/w/claude", prompt="Explain zqoldprompt please", custom_title="Alpha title")
    path = claude.write(home)
    assert searched(home, "zqoldprompt") == {claude.session_id}
    before = path.stat()
    replacement = path.with_suffix(".new")
    replacement.write_bytes(path.read_bytes().replace(b"zqoldprompt", b"zqnewprompt"))
    os.utime(replacement, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(replacement, path)
    assert "1 session changed since" in told(home)
    assert searched(home, "zqnewprompt") == {claude.session_id} and searched(home, "zqoldprompt") == set()
