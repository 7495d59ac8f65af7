"""Claude Code adapter: the real 2.1.332 and legacy homes, indexed exactly as their README states."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from homes import ClaudeSession

from sessidx.apps import APPS
from sessidx.apps.claude import escape_cwd, names_folder, parse_transcript
from sessidx.config import current_env
from sessidx.index import build

CLAUDE = [APPS["claude"]]
MONO = ("/home/alex/code/monorepo/services/payments-reconciliation-service/internal/adapters/outbound/persistence/"
        "postgresql/repositories/implementations/transaction-ledger-entries/generated/migrations/v2024")

# id: (cwd, branch, model, effort, approval, title, origin), from realdata/README.md (2.1.332 table).
# Title without a custom/ai title is the newest last-prompt (SPEC's order, which is the CLI's own).
EXPECTED_2_1 = {
    "77540cd0-77aa-452c-a758-e4eb2f3b15fc": ("/home/alex/code/café-ünïcode-日本", None, "claude-sonnet-5-5", "medium",
                                             "plan", "Translate NOTES.md to English", "sdk-cli"),
    "2f72ad87-54a3-4f4c-b8c0-0c902056d79e": ("/home/alex/code/it's a test", "main", "claude-haiku-5-5", "medium",
                                             "default", "Resume from the home folder: anything else in that README?",
                                             "sdk-cli"),
    "a1cdb0a8-a4ad-4e71-8b23-4b3306d47d81": (MONO + "/seed-data-fixtures", "main", "claude-sonnet-5-5", "medium",
                                             "plan", "What belongs in seed-data-fixtures?", "sdk-cli"),
    "9eff8a9b-7994-4238-94c2-0d73edf60dca": (MONO + "/seed-data-fixtures-extra", "main", "claude-sonnet-5-5", "medium",
                                             "plan", "What belongs in seed-data-fixtures-extra?", "sdk-cli"),
    "ed10862b-7e1c-416e-be72-2f48fd457ac6": (MONO, "main", "claude-sonnet-5-5", "medium", "default",
                                             "What is in this migrations folder?", "sdk-cli"),
    "3cc40bdd-05de-4787-acb5-0601f39416fb": ("/home/alex/code/my-app", "main", "claude-sonnet-5-5", "low", "plan",
                                             "Session Where Is The", "cli"),
    "8976dcfa-6de6-496e-84da-8b7f5bcfe3b6": ("/home/alex/code/my.app", "develop", "claude-opus-5-5", "medium",
                                             "acceptEdits", "What does app.js print?", "sdk-cli"),
    "c0b2ec66-ce02-423c-8ec7-e5ee1b696cdd": ("/home/alex/code/my-app", "main", "claude-sonnet-5-5", "medium",
                                             "default", "What does app.js print?", "sdk-cli"),
    "8b612efe-9f41-4c90-ac05-bd71a08b6e10": ("/home/alex/code/naïve-café", None, "claude-opus-5-5", "max", "default",
                                             "Explain the encoding helper", "sdk-cli"),
    "9358af1a-7be2-4d70-a9d9-48ccbd1e694f": ("/home/alex/code/notes-🚀", None, "claude-haiku-5-5", "medium", "default",
                                             "List the todo items", "sdk-cli"),
    "1e355892-62f4-414c-95c7-a0865d51cace": ("/home/alex/code/shop-api/app", "fix/checkout-retry", "claude-sonnet-5-5",
                                             "medium", "default", "Payments module tour", "sdk-cli"),
    "06bafeac-7046-4412-905d-e16a863647aa": ("/home/alex/code/shop-api", "fix/checkout-retry", "claude-sonnet-5-5",
                                             "medium", "default", "Checkout retry investigation", "sdk-cli"),
    "3b7c395c-9df4-4ddc-b4b8-79cda7c21981": ("/home/alex/code/shop-api", "fix/checkout-retry", "claude-sonnet-5-5",
                                             "medium", "default", "and what about idempotency keys?", "sdk-cli"),
    "50c520d9-91cb-45b8-bde5-40df8d839ba5": ("/home/alex/code/shop-api", "fix/checkout-retry", "claude-haiku-4-5", None,
                                             "bypassPermissions", "Show me the last commits [[bash: git log --oneline -3]]",
                                             "sdk-cli"),
    "7d928a45-904e-47b1-bcf0-c5c3d26f85ec": ("/home/alex/code/shop-api", "fix/checkout-retry", "claude-sonnet-5-5",
                                             "medium", "auto", "Session Please Explain How", "cli"),
    "c6ba83a1-3981-4e50-a6b2-d335f190e3b1": ("/home/alex/code/shop-api", "fix/checkout-retry", "claude-sonnet-5-5",
                                             "medium", "default", "Checkout retry investigation", "sdk-cli"),
    "d772bacd-31f7-4c30-ba6b-b3e5fed547c1": ("/home/alex/code/shop-api", "fix/checkout-retry", "claude-opus-5-5", "high",
                                             "acceptEdits",
                                             "[[agent]] Survey the repository layout before we refactor payments",
                                             "sdk-cli"),
}

# The legacy home (1.0.128, 2.0.77; 04ba6103 continued by 2.1.332): agent-* and the
# summary-only 024779da are not sessions; old builds record no mode, entrypoint or effort.
EXPECTED_LEGACY = {
    "463de926-537d-4069-9918-553f823b0e0d": ("/home/alex/code/it's a test", "main", "claude-3-5-haiku-20241022", None, None),
    "d8fe7008-2c01-4472-a549-14eb1cbd92c6": (MONO + "/seed-data-fixtures", "main", "claude-sonnet-4-5-20250929", None, None),
    "04ba6103-ab86-4bfe-84d6-3f1434a2e704": ("/home/alex/code/my.app", "develop", "claude-sonnet-4-5-20250929", None,
                                             "default"),
    "4d2d5d0a-d87e-4b7b-bb8b-198c5bc36880": ("/home/alex/code/notes-🚀", None, "claude-haiku-4-5-20251001", None, None),
    "3daf6955-587d-40b6-8aff-ac9ef81f878c": ("/home/alex/code/shop-api", "fix/checkout-retry", "claude-opus-4-5-20251101",
                                             None, None),
    "bd114db3-896d-4b6d-b2e0-ba17cf2a0fb5": ("/home/alex/code/shop-api", "fix/checkout-retry", "claude-sonnet-4-20250514",
                                             None, None),
    "d8ef5d85-efc1-41b2-b6e3-8b31af24f2ed": ("/home/alex/code/shop-api", "fix/checkout-retry",
                                             "claude-sonnet-4-5-20250929", None, None),
}


def index_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    return {s.id: s for s in build(current_env(), CLAUDE).sessions}


def test_real_2_1_home_is_indexed_exactly(realdata, monkeypatch):
    sessions = index_home(realdata("claude-home"), monkeypatch)
    assert set(sessions) == set(EXPECTED_2_1)  # the sub-agent transcript and memory/ folders are not sessions
    for sid, (cwd, branch, model, effort, approval, title, origin) in EXPECTED_2_1.items():
        s = sessions[sid]
        got = (s.cwd, s.branch, s.model, s.effort, s.approval, s.title, s.origin)
        assert got == (cwd, branch, model, effort, approval, title, origin), sid
        assert s.app == "claude" and s.path and s.path.endswith(f"{sid}.jsonl")
        assert s.bytes == os.path.getsize(s.path)
        assert s.mtime == os.stat(s.path).st_mtime_ns // 1_000_000


def test_real_2_1_home_matches_the_facts_file(realdata, monkeypatch):
    """Cross-check against claude-facts.json: newest model/effort, and a cwd its folder names."""
    home = realdata("claude-home")
    sessions = index_home(home, monkeypatch)
    from tests.conftest import REALDATA

    for fact in json.loads((REALDATA / "claude-facts.json").read_text()):
        if fact["kind"] != "session":
            assert fact["file_stem"] not in sessions
            continue
        s = sessions[fact["file_stem"]]
        assert s.model == fact["models"][-1]
        assert s.cwd in fact["cwds"]
        assert names_folder(s.cwd, Path(fact["path"]).parent.name)


def test_legacy_home(realdata, monkeypatch):
    sessions = index_home(realdata("claude-home-legacy"), monkeypatch)
    assert set(sessions) == set(EXPECTED_LEGACY)
    for sid, expected in EXPECTED_LEGACY.items():
        s = sessions[sid]
        assert (s.cwd, s.branch, s.model, s.effort, s.approval) == expected, sid


def test_the_folder_name_rule_is_claudes_regex_on_any_text():
    """Claude Code names a project folder by `cwd.replace(/[^a-zA-Z0-9]/g, "-")` in JavaScript,
    where a character past U+FFFF is two UTF-16 units: two dashes. Written without `re` here."""
    import random
    import re

    alphabet = "aZ09/.-_ ~'$(é日🚀\udc80\n\t" + chr(0x10FFFF) + chr(0xFFFF)
    rng = random.Random(7)
    for _ in range(2000):
        cwd = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        assert escape_cwd(cwd) == re.sub(r"[^A-Za-z0-9]", lambda m: "-" * (2 if ord(m.group()) > 0xFFFF else 1), cwd)


def test_folder_name_rule_matches_the_real_folders():
    assert escape_cwd("/home/alex/code/notes-🚀") == "-home-alex-code-notes---"
    assert escape_cwd("/home/alex/code/café-ünïcode-日本") == "-home-alex-code-caf---n-code---"
    long_cwd = MONO + "/seed-data-fixtures"
    cut = escape_cwd(long_cwd)[:200] + "-6xt21v"
    assert names_folder(long_cwd, cut)
    assert names_folder(long_cwd, escape_cwd(long_cwd))  # 2.0.77 did not cut
    assert not names_folder("/home/alex", "-home-alex-code-it-s-a-test")


def test_resumed_elsewhere_keeps_its_own_folder_and_branch(home):
    """A resume from another folder appends records with that cwd; the folder's own cwd wins."""
    s = ClaudeSession(cwd="/w/proj", branch="feature/x")
    path = s.write(home)
    elsewhere = ClaudeSession(cwd="/w", branch="HEAD", session_id=s.session_id, prompt="from home")
    with open(path, "ab") as f:
        from homes import jsonl

        f.write(jsonl(elsewhere.records()))
    got = parse_transcript(str(path), path.parent.name, "/nonexistent")
    assert got is not None and (got.cwd, got.branch) == ("/w/proj", "feature/x")


@pytest.mark.parametrize(
    ("custom", "ai", "expected"),
    [("Mine", "Generated", "Mine"), (None, "Generated", "Generated"), (None, None, "Fix it (turn 2)")],
)
def test_title_order(home, custom, ai, expected):
    path = ClaudeSession(cwd="/w", prompt="Fix it", custom_title=custom, ai_title=ai, turns=2).write(home)
    got = parse_transcript(str(path), path.parent.name, "/nonexistent")
    assert got is not None and got.title == expected


def test_first_real_prompt_skips_wrappers_and_sidechains(home):
    path = home / ".claude/projects/-w/abc.jsonl"
    path.parent.mkdir(parents=True)
    base = {"sessionId": "abc", "cwd": "/w", "gitBranch": "main"}
    from homes import jsonl

    path.write_bytes(jsonl([
        {**base, "type": "user", "isSidechain": True, "message": {"content": "side"}},
        {**base, "type": "user", "message": {"content": "<command-name>/init</command-name>"}},
        {**base, "type": "user", "message": {"content": [{"type": "tool_result"}, {"type": "text", "text": "Real one"}]}},
    ]))
    got = parse_transcript(str(path), "-w", "/nonexistent")
    assert got is not None and got.title == "Real one"


def test_title_sidecar_wins(home):
    s = ClaudeSession(cwd="/w", custom_title="Old name")
    path = s.write(home)
    sidecar = path.parent / s.session_id / "custom-title.json"
    sidecar.parent.mkdir()
    sidecar.write_text('{"customTitle":"New name","by":"user"}')
    got = parse_transcript(str(path), path.parent.name, str(sidecar))
    assert got is not None and got.title == "New name"


def test_manual_mode_is_default_and_newest_mode_wins(home):
    s = ClaudeSession(cwd="/w", mode="acceptEdits")
    path = s.write(home)
    with open(path, "ab") as f:
        f.write(b'{"type":"permission-mode","permissionMode":"manual","sessionId":"x"}\n')
    got = parse_transcript(str(path), path.parent.name, "/nonexistent")
    assert got is not None and got.approval == "default"


def test_claude_config_dir_is_honoured(home, tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    ClaudeSession(cwd="/w", prompt="moved").write(elsewhere)  # writes elsewhere/.claude/projects
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(elsewhere / ".claude"))
    titles = [s.title for s in build(current_env(), CLAUDE).sessions]
    assert titles == ["moved"]
