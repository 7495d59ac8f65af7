"""Tool output is part of the conversation for every app that records it (issue 19 point 2).

Each app's real home (fixtures/realdata) gets one tool output in the app's own stored shape: a
test log of 9 KB (past tool_output.WHOLE, so only its gist is indexed) whose error line is said
nowhere else, and a token that looks like a secret. `sessidx search` must find the session by
the error, and by nothing from the middle of the log, nor by the secret.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import run_cli
from tests.content_test import home_for, sessions_of

ERROR = "psycopg2.OperationalError: could not connect to server: Connection refused (port 54329)"
SECRET = "ghp_" + "Zq8XvN2kLmR4tY7wB1cD9eF3gH5jK6pQ0sUa"  # a GitHub token's shape


def planted_log() -> str:
    body = [f"tests/test_orders.py::test_case_{i} PASSED middleword{i}" for i in range(100)]
    return "\n".join([*body[:50], ERROR, f"GITHUB_TOKEN={SECRET}", *body[50:], "Process exited with code 1"])


def _gemini(path: Path, log: str) -> None:
    """A `gemini` message whose tool calls carry their results: `resultDisplay` (what the user
    saw) on one, only the `functionResponse` sent back to the model on the other."""
    call = {"id": "run_shell_command-1", "name": "run_shell_command", "args": {"command": "pytest -q"},
            "status": "error", "timestamp": "2026-11-29T22:40:00.000Z"}
    record = {"id": str(uuid.uuid4()), "timestamp": "2026-11-29T22:40:00.000Z", "type": "gemini", "content": "",
              "toolCalls": [{**call, "resultDisplay": log},
                            {**call, "id": "run_shell_command-2", "result": [{"functionResponse": {
                                "id": "run_shell_command-2", "name": "run_shell_command",
                                "response": {"error": "Command failed: ENOSPC no space left on device"}}}]}]}
    with path.open("a") as f:
        f.write(json.dumps(record) + "\n")


def _copilot(path: Path, log: str) -> None:
    events = Path(path) / "events.jsonl" if Path(path).is_dir() else Path(path)
    with events.open("a") as f:
        for data in ({"toolCallId": "t1", "success": False, "result": {"content": log[:2000], "detailedContent": log}},
                     {"toolCallId": "t2", "success": False, "error": {"message": "ENOSPC no space left on device"}}):
            f.write(json.dumps({"type": "tool.execution_complete", "data": data, "id": str(uuid.uuid4()),
                                "timestamp": "2026-11-29T22:40:00.000Z", "parentId": None}) + "\n")


def _opencode(db: Path, session_id: str, log: str) -> None:
    now = int(time.time() * 1000)
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                     ("msg_tool", session_id, now, now, json.dumps({"role": "assistant"})))
        for n, state in enumerate(({"status": "completed", "input": {"command": "pytest -q"}, "output": log},
                                   {"status": "error", "input": {"command": "df"},
                                    "error": "ENOSPC no space left on device"})):
            conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                         (f"prt_tool{n}", "msg_tool", session_id, now, now,
                          json.dumps({"type": "tool", "tool": "bash", "callID": f"c{n}", "state": state})))


def _crush(db: Path, session_id: str, log: str) -> None:
    now = int(time.time() * 1000)
    parts = [{"type": "tool_result", "data": {"tool_call_id": "c1", "name": "bash", "content": log, "is_error": True}},
             {"type": "tool_result", "data": {"tool_call_id": "c2", "name": "bash",
                                              "content": "ENOSPC no space left on device", "is_error": True}}]
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                     ("tool-msg", session_id, "tool", json.dumps(parts), now, now))


def _pi(path: Path, log: str) -> None:
    with path.open("a") as f:
        for n, content in enumerate((log, "ENOSPC no space left on device")):
            f.write(json.dumps({"type": "message", "id": f"tool{n}", "parentId": None,
                                "timestamp": "2026-12-01T09:00:00.000Z", "message": {
                                    "role": "toolResult", "toolCallId": f"c{n}", "toolName": "bash",
                                    "content": [{"type": "text", "text": content}], "isError": True}}) + "\n")


def _hermes(db: Path, session_id: str, log: str) -> None:
    with sqlite3.connect(db) as conn:
        for content in (log, "ENOSPC no space left on device"):
            conn.execute("INSERT INTO messages (session_id, role, content, tool_name, timestamp) VALUES (?, ?, ?, ?, ?)",
                         (session_id, "tool", content, "terminal", time.time()))


def _goose(db: Path, session_id: str, log: str) -> None:
    """A user message of tool responses, as Goose keeps them: {type: toolResponse, toolResult}."""
    parts = [{"type": "toolResponse", "id": "c1", "toolResult": {"status": "success",
                                                                "value": [{"type": "text", "text": log}]}},
             {"type": "toolResponse", "id": "c2", "toolResult": {"status": "error",
                                                                "error": "ENOSPC no space left on device"}}]
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES (?, ?, ?, ?)",
                     (session_id, "user", json.dumps(parts), int(time.time())))


def _amp(path: Path, log: str) -> None:
    """A user message of tool results, as Amp keeps them: {type: tool_result, run: {status, result}}."""
    doc = json.loads(path.read_text())
    doc["messages"].append({"role": "user", "content": [
        {"type": "tool_result", "toolUseID": "toolu_1", "run": {"status": "done", "result": {"output": log,
                                                                                           "exitCode": 1}}},
        {"type": "tool_result", "toolUseID": "toolu_2", "run": {"status": "error",
                                                                "error": "ENOSPC no space left on device"}}]})
    path.write_text(json.dumps(doc))


PLANT = {"gemini": lambda s, log: _gemini(Path(s.path), log),
         "copilot": lambda s, log: _copilot(Path(s.path), log),
         "opencode": lambda s, log: _opencode(Path(s.path), s.id, log),
         "crush": lambda s, log: _crush(Path(s.path), s.id, log),
         "pi": lambda s, log: _pi(Path(s.path), log),
         "hermes": lambda s, log: _hermes(Path(s.path), s.id, log),
         "goose": lambda s, log: _goose(Path(s.path), s.id, log),
         "amp": lambda s, log: _amp(Path(s.path), log)}


def found(env: dict[str, str], words: str) -> list[str]:
    done = run_cli("search", "--json", words, env=env)
    assert done.returncode in (0, 1), done.stderr
    return [json.loads(line)["id"] for line in done.stdout.splitlines() if line.strip()]


@pytest.mark.parametrize("app", sorted(PLANT))
def test_an_error_only_in_a_tool_output_is_found(app, realdata, tmp_path, monkeypatch):
    home = home_for(app, realdata, tmp_path)
    session = sessions_of(home, monkeypatch, app)[0]
    log = planted_log()
    assert len(log) > 4096  # past tool_output.WHOLE: only its gist is indexed
    PLANT[app](session, log)
    env = {"SESSIDX_HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert session.id in found(env, "OperationalError 54329"), app  # an error line in the middle of the log
    assert session.id in found(env, "ENOSPC"), app  # a failed call's error, or a short output whole
    assert session.id in found(env, "middleword0"), app  # its first line
    assert session.id not in found(env, "middleword30"), app  # bounded: not the middle of a long output
    assert found(env, SECRET) == [] and found(env, SECRET[4:]) == [], app  # masked


def test_a_copilot_output_too_long_to_parse_is_looked_at_by_its_ends(realdata, tmp_path, monkeypatch):
    """A `tool.execution_complete` record over conversation.SKIP_OVER is not parsed: its head and
    tail are read as they are, so the error at the end of a 70 KB log is found."""
    home = home_for("copilot", realdata, tmp_path)
    session = sessions_of(home, monkeypatch, "copilot")[0]
    body = "\n".join(f"tests/test_orders.py::test_case_{i} PASSED middleword{i}" for i in range(1500))
    log = body + "\nModuleNotFoundError: No module named 'yaml_loader'"
    _copilot(Path(session.path), log)
    env = {"SESSIDX_HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert session.id in found(env, "ModuleNotFoundError yaml_loader")
    assert session.id not in found(env, "middleword700")


def long_log(kb: int, error: str, seed: str) -> str:
    """A test log of about `kb` KB with `error` in its middle, its lines saying `seed` and their number."""
    lines = [f"tests/test_{seed}.py::test_case_{i} PASSED {seed}word{i}" for i in range(kb * 1024 // 50)]
    return "\n".join([*lines[:len(lines) // 2], error, *lines[len(lines) // 2:]])


def test_an_error_deep_in_a_long_output_is_found_in_claude_and_codex(home, tmp_path, monkeypatch):
    """Outputs of 10 to 42 KB (records past conversation.SKIP_OVER: read raw, each output string
    whole) with their error line in the middle; Claude's output stored twice in its record."""
    from homes import ClaudeSession, CodexThread, write_codex_home

    errors = {10: "E   ValueError: quantum_flux_capacitor overloaded", 23: "FAILED tests/test_ledger.py::test_zorblax",
              33: "psycopg2.errors.DeadlockDetected: deadlock on relation grommet_ledger",
              42: "Process exited with code 137 after OOM in wibblefrob"}
    claude, codex = {}, {}
    for kb, error in errors.items():
        s = ClaudeSession(cwd=f"/w/c{kb}", prompt=f"Run the suite {kb}")
        path = s.write(home)
        log = long_log(kb, error, f"c{kb}")
        with path.open("a") as f:
            f.write(json.dumps({"type": "user", "sessionId": s.session_id, "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": log, "is_error": True}]},
                "toolUseResult": {"stdout": log, "stderr": "", "interrupted": False}}) + "\n")
        claude[kb] = s.session_id
    threads = [CodexThread(cwd=f"/w/x{kb}", title=f"Build {kb}") for kb in errors if kb > 10]
    write_codex_home(home, threads)
    for thread, (kb, error) in zip(threads, [(kb, e) for kb, e in errors.items() if kb > 10], strict=True):
        rollout = next(home.rglob(f"*{thread.thread_id}.jsonl"))
        with rollout.open("a") as f:
            f.write(json.dumps({"type": "response_item", "payload": {
                "type": "function_call_output", "call_id": "c1",
                "output": f"Chunk ID: ab12\nProcess exited with code 1\nOutput:\n{long_log(kb, error, f'x{kb}')}"}})
                + "\n")
        codex[kb] = thread.thread_id
    env = {"SESSIDX_HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for kb, query in ((10, "quantum_flux_capacitor"), (23, "test_zorblax"), (33, "DeadlockDetected grommet_ledger"),
                      (42, "wibblefrob 137")):
        expected = {claude[kb], *([codex[kb]] if kb in codex else [])}
        assert set(found(env, query)) == expected, kb
    assert found(env, "c23word300") == []  # still a gist: not the middle of the log


def test_an_output_stored_twice_is_kept_once():
    from sessidx.tool_output import raw_gist

    log = long_log(12, "KeyError: 'gizmo_count'", "g")
    line = json.dumps({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": log}]}, "toolUseResult": {"stdout": log}}).encode()
    kept = raw_gist(line, 0, len(line))
    assert kept.count("KeyError: 'gizmo_count'") == 1 and kept.count("gword0") == 1


_TRICKY = st.sampled_from(['"stdout": "', '"content":"', '\\"', '":', "error: x", "line\n", "ok ", "é", "\\n"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["content", "text", "output", "stdout", "stderr", "detailedContent", "input",
                                           "type"]),
                          st.lists(_TRICKY, max_size=40).map("".join)), min_size=1, max_size=6),
       st.booleans())
def test_a_long_records_outputs_are_its_quoted_keys_strings(fields, nested):
    """raw_gist of a valid JSON record (looked for between the strings it reads, never inside
    one) gives the gists of exactly the strings a parser finds under the output keys, in order,
    each once: however those strings, or the others, hold quotes, keys and `":`."""
    from sessidx.tool_output import _QUOTED_KEYS, gist, raw_gist

    record = [{key: value} if nested else (key, value) for key, value in fields]
    line = json.dumps({"items": record} if nested else dict(record), ensure_ascii=False).encode()
    wanted: list[str] = []
    for key, value in (fields if nested else dict(record).items()):
        if f'"{key}' in _QUOTED_KEYS and not any(value in other for other in wanted):
            wanted = [other for other in wanted if other not in value] + [value]
    assert raw_gist(line, 0, len(line)) == "\n".join(gist(text) for text in wanted)


def test_a_badly_escaped_output_string_is_skipped_in_a_process_without_json():
    """A long record whose output string holds a bad escape: the other outputs are read, even in
    a process that has not loaded `json` (where _json's scanstring raises SystemError)."""
    import subprocess
    import sys

    probe = ("import sys\nfrom sessidx.tool_output import raw_gist\nassert 'json' not in sys.modules\n"
             "line = sys.argv[1].encode()\nprint(raw_gist(line, 0, len(line)))\n")
    line = '{"content":"bad \\x escape","stdout":"the KeyError is here"}'
    done = subprocess.run([sys.executable, "-c", probe, line], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "the KeyError is here\n", done.stderr


def test_of_one_mark_the_first_lines_holding_it_are_looked_at_both_ways():
    """MOST_LOOKS lines per mark, in C as in Python: a mark said on more lines than that stops
    counting there; another mark's lines are still found."""
    from sessidx import tool_output

    text = "\n".join([f"error {i}" for i in range(tool_output.MOST_LOOKS + 50)]
                     + [f"x.py:{i} FAILED" for i in range(30)] + ["ERROR: the last one", "src/a.rs:1"])
    errors, places = tool_output._marked(text)
    assert (errors, places) == tool_output.python_marked(text, text.lower())
    assert errors[tool_output.MOST_LOOKS - 1] == f"error {tool_output.MOST_LOOKS - 1}"
    assert f"error {tool_output.MOST_LOOKS}" not in errors and "ERROR: the last one" not in errors
    assert "x.py:0 FAILED" in errors and places[-1] == "src/a.rs:1"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["Error: boom", "ok", "FAILED tests/x.py:3", "src/pool.rs:12 here", "exit code 2",
                                 "error error error", "Traceback (most recent call last):", 'File "a.py", line 1',
                                 "timed outraceback", "érror", "İ Killed", "x" * 300, "", "\u212aILLED (kelvin)",
                                 "src/A.PY:9", "errorerror" * 40 + " fail", "ExItEd WiTh 1", "日本語 error 😀",
                                 "\u0100 non-zero", "ab", "e"]),
                min_size=30, max_size=900))
def test_one_pass_over_every_mark_keeps_what_a_search_per_mark_keeps(lines):
    """The gist of a long output is the same whether its marks are found in C (sessidx/_words.c),
    in one pass in Python (ahocorasick-rs) or by one str.find per mark (where neither is there)."""
    from sessidx import tool_output

    text = "\n".join(lines)
    native = tool_output.gist(text)
    built = tool_output.native_marked
    assert built() is not None  # built (CI's machine has a compiler): the C one was compared
    saved = dict(tool_output._FINDERS)
    try:
        tool_output.native_marked = lambda: None
        assert tool_output.gist(text) == native
        tool_output._FINDERS[tool_output._MARKS] = None  # as where ahocorasick-rs is missing
        assert tool_output.gist(text) == native
    finally:
        tool_output.native_marked = built
        tool_output._FINDERS.clear()
        tool_output._FINDERS.update(saved)
    assert tool_output._finder(tool_output._MARKS) is not None  # the fast one was the one compared
