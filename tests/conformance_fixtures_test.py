"""The parts of `make conformance` that run without the real CLIs: the mock model's tool calls
and the README table merged from a run's output."""

from __future__ import annotations

import json
from pathlib import Path

import conformance_readme
import mock_models

BASH_TOOL = [{"type": "function", "function": {"name": "run_shell_command", "parameters": {
    "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}]


def _canary_call(path: str) -> dict:
    call = mock_models._call([("user", f"ping run: touch {path}")], BASH_TOOL)
    assert call is not None
    return mock_models._chat_message(call)


def test_each_tool_call_has_an_id_of_its_own() -> None:
    # Vibe 3.0.3 refuses a call whose id it saw before in the session
    first, second = _canary_call("/tmp/a"), _canary_call("/tmp/b")
    ids = [m["tool_calls"][0]["id"] for m in (first, second)]  # type: ignore[index]
    assert ids[0] != ids[1]
    assert json.loads(first["tool_calls"][0]["function"]["arguments"]) == {"command": "touch /tmp/a"}  # type: ignore[index]


def test_no_call_once_the_tool_result_came_back() -> None:
    turns = [("user", "ping run: touch /tmp/a"), ("tool", "done")]
    assert mock_models._call(turns, BASH_TOOL) is None


def test_aider_models_get_the_command_in_a_bash_block() -> None:
    # Aider sends no tools: it proposes the shell commands of the reply's fenced blocks
    turns = {"messages": [{"role": "system", "content": "Act as an expert developer."},
                          {"role": "user", "content": "conformance ping 0 run: touch /tmp/canary"}]}
    assert mock_models._chat_text({**turns, "model": "mock-aider-large"}) == "```bash\ntouch /tmp/canary\n```\n"
    assert mock_models._chat_text({**turns, "model": "mock-model"}) == mock_models.REPLY  # others: text only
    done = {"model": "mock-aider", "messages": [{"role": "user", "content": "conformance (none)"}]}
    assert mock_models._chat_text(done) == mock_models.REPLY


BLOCK = """noise
<!-- proven-table:begin -->
  Last run {day}: {held} of {total} checks held in {minutes} min. `ran`: the canary was touched unasked;
  {legend}

  | app | version | recorded mode | plain Enter | opt-in (Alt-Enter) | held |
  |---|---|---|---|---|---|
{rows}
<!-- proven-table:end -->
"""


def test_every_block_of_a_run_is_merged_into_one_table(tmp_path: Path) -> None:
    output = tmp_path / "run.txt"
    output.write_text(
        BLOCK.format(day="2026-12-01", held=10, total=12, minutes=20, legend="first part",
                     rows="  | claude | 2.1 | default | asked | asked | yes |\n"
                          "  | copilot | | not driven live | a login | | |")
        + BLOCK.format(day="2026-12-02", held=5, total=5, minutes=7, legend="second part",
                       rows="  | gptme | 0.35.1 | confirm | asked | same argv as plain | yes |")
        + BLOCK.format(day="2026-12-02", held=2, total=2, minutes=3, legend="third part",
                       rows="  | copilot | 1.0 | default | asked | asked | yes |"))
    merged = conformance_readme.merged([str(output)]).splitlines()
    assert merged[1] == "  Last run 2026-12-02: 17 of 19 checks held in 30 min."
    rows = [line for line in merged if line.startswith("  | ") and "---" not in line][1:]
    assert [r.split("|")[1].strip() for r in rows] == ["claude", "gptme", "copilot"]  # copilot's skip row gone
    assert "  first part" in merged and "  third part" in merged


def test_a_prompt_after_a_tool_result_in_one_message_is_answered_with_the_call() -> None:
    # Claude Code 2.1.332, resumed: the previous turn's tool result and the new prompt share a message
    body = {"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "done"},
        {"type": "text", "text": "ping run: touch /tmp/c"}]}]}
    tools = [{"name": "Bash", "input_schema": {"properties": {"command": {"type": "string"}}, "required": ["command"]}}]
    call = mock_models._call(mock_models._anthropic_turns(body), tools)
    assert call is not None and json.loads(call[1])["command"] == "touch /tmp/c"


# auggie 0.36.0's chat-stream requests as it sent them to mock_augment (trimmed): the typed turn,
# then the same turn's follow-up carrying the launch-process result.
AUGGIE_TURN = {"message": "", "chat_history": [], "mode": "CLI_AGENT",
               "tool_definitions": [{"name": "launch-process", "input_schema_json": "{}"}, {"name": "view"}],
               "nodes": [{"id": 1, "type": 0, "text_node": {"content": "conformance ping 3 run: touch /tmp/c"}},
                         {"id": 2, "type": 4, "ide_state_node": {"workspace_folders": [{"folder_root": "/p"}]}}]}
AUGGIE_FOLLOW_UP = {**AUGGIE_TURN, "chat_history": [{"request_message": "", "response_text": "",
                                                     "request_nodes": AUGGIE_TURN["nodes"]}],
                    "nodes": [{"id": 1, "type": 1, "tool_result_node": {"tool_use_id": "toolu_mock_1",
                                                                        "content": "", "is_error": False}}]}


def test_auggie_mock_calls_launch_process_once() -> None:
    import mock_augment

    first = mock_augment.chat_results(AUGGIE_TURN)
    call = first[0]["nodes"][0]
    assert call["type"] == 5 and call["tool_use"]["tool_name"] == "launch-process"
    assert json.loads(call["tool_use"]["input_json"])["command"] == "touch /tmp/c"
    assert first[-1]["stop_reason"] == 3
    reply = mock_augment.chat_results(AUGGIE_FOLLOW_UP)
    assert [r["text"] for r in reply] == [mock_models.REPLY, ""] and reply[-1]["stop_reason"] == 1


def test_auggie_mock_offers_the_models_dash_m_names() -> None:
    import mock_augment

    models = mock_augment.models_result()
    registry = json.loads(models["feature_flags"]["model_info_registry"])
    assert {e["shortName"] for e in registry.values()} == {"mock-model", "mock-large"}
    assert isinstance(models["default_model"], str) and all(isinstance(m["name"], str) for m in models["models"])


def test_a_row_driven_live_by_a_part_with_its_own_table_is_dropped(tmp_path: Path) -> None:
    output = tmp_path / "run.txt"
    output.write_text(BLOCK.format(day="2026-12-01", held=1, total=1, minutes=1, legend="part",
                                   rows="  | droid | | not driven live | driven live by fixtures/conformance_login.py | | |\n"
                                        "  | auggie | | not driven live | a login | | |"))
    rows = [line for line in conformance_readme.merged([str(output)]).splitlines() if line.startswith("  | ")]
    assert [r.split("|")[1].strip() for r in rows[1:]] == ["auggie"]  # [0]: the header


def test_a_risk_label_the_model_gives_says_low() -> None:
    # OpenHands 1.16.0's tools take a required `security_risk` (UNKNOWN, LOW, MEDIUM, HIGH)
    tools = [{"type": "function", "function": {"name": "terminal", "parameters": {"type": "object", "properties": {
        "command": {"type": "string"}, "security_risk": {"type": "string", "enum": ["UNKNOWN", "LOW", "MEDIUM", "HIGH"]}},
        "required": ["command", "security_risk"]}}}]
    call = mock_models._call([("user", "ping run: touch /tmp/d")], tools)
    assert call is not None and json.loads(call[1]) == {"command": "touch /tmp/d", "security_risk": "LOW"}


def _qoder_stream(port: int, size: int) -> list[dict]:
    """One agent_chat_generation call of `size` bytes to mock_qoder, its SSE read as Qoder's
    `y_`/`M6` read it: each `data:` line's JSON, up to `[DONE]`."""
    import urllib.request

    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/algo/api/v2/service/pro/sse/agent_chat_generation?FetchKeys=llm_model_result"
        "&AgentId=agent_common&Encode=1", data=b"x" * size, method="POST")
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.headers["Content-Type"] == "text/event-stream"
        lines = [line[len("data: "):] for line in answer.read().decode().splitlines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    return [json.loads(line) for line in lines[:-1]]


def test_qoder_mock_calls_bash_once_on_the_main_request_only() -> None:
    import mock_qoder

    server = mock_qoder.serve()
    port = server.server_address[1]
    try:
        mock_qoder.expect("conformance ping 7 run: touch /tmp/q7")
        side = _qoder_stream(port, 5_000)  # the TUI's next-prompt suggestion: never the call
        assert [e["choices"][0]["delta"].get("content") for e in side][0] == mock_models.REPLY
        call = _qoder_stream(port, 160_000)
        tool = call[0]["choices"][0]["delta"]["tool_calls"][0]
        assert tool["function"]["name"] == "Bash" and json.loads(tool["function"]["arguments"])["command"] == \
            "touch /tmp/q7"
        assert call[-1]["choices"][0]["finish_reason"] == "tool_calls" and "touch /tmp/q7" in mock_qoder.CALLED
        reply = _qoder_stream(port, 160_500)  # the follow-up carrying the result: text naming the turn
        assert reply[0]["choices"][0]["delta"]["content"] == f"conformance ping 7: {mock_models.REPLY}"
        assert reply[-1]["choices"][0]["finish_reason"] == "stop"
        again = _qoder_stream(port, 161_000)
        assert again[0]["choices"][0]["delta"]["content"] == mock_models.REPLY
    finally:
        server.shutdown()


def test_qoder_mock_logs_in_and_lists_models_under_the_assistant_scene() -> None:
    import urllib.request

    import mock_qoder

    server = mock_qoder.serve()
    port = server.server_address[1]

    def get(path: str, data: bytes | None = None) -> dict:
        with urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data),
                                    timeout=10) as answer:
            return json.loads(answer.read())
    try:
        nodes = get("/algo/api/v5/service/region/endpoints")
        assert all(n == [{"url": f"http://127.0.0.1:{port}", "type": "public"}] for n in nodes.values())
        assert set(nodes) == {"centerNodes", "inferNodes", "security", "openapiNodes"}
        assert get("/api/v1/jobToken/exchange", b"{}")["token"] and get("/api/v1/userinfo")["id"]
        models = get("/algo/api/v2/model/list?Encode=1")["assistant"]
        assert {m["key"] for m in models} == {"mock-model", "mock-large"}
        assert all(m["display_name"] and m["format"] for m in models)  # else the catalog drops it
    finally:
        server.shutdown()


def test_qoder_turn_mode_is_the_user_record_of_that_turn(tmp_path: Path) -> None:
    import conformance_login

    folder = tmp_path / ".qoder/projects/-p"
    folder.mkdir(parents=True)
    records = [{"type": "user", "message": {"role": "user", "content": "conformance yolo"}, "permissionMode": "yolo"},
               {"type": "user", "message": {"role": "user", "content": "conformance ping 3 run: touch /c"},
                "permissionMode": "default"},
               {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result"}]}}, ["odd"]]
    (folder / "s1.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\nnot json\n")
    assert conformance_login._qoder_turn_mode(tmp_path, "s1", "conformance ping 3") == "default"
    assert conformance_login._qoder_turn_mode(tmp_path, "s1", "conformance ping 9") == "no turn stored"
    assert conformance_login._qoder_turn_mode(tmp_path, "s2", "conformance ping 3") == "no turn stored"


def test_a_reminder_sent_after_the_prompt_does_not_hide_the_canary() -> None:
    # Kimi Code 2.1.0 sends `<system-reminder>` user messages (the date) after the typed prompt
    turns = [("user", [{"type": "text", "text": "ping run: touch /tmp/k"}]),
             ("user", [{"type": "text", "text": "<system-reminder>\nToday's date is 2026-12-03.\n</system-reminder>"}])]
    call = mock_models._call(turns, BASH_TOOL)
    assert call is not None and json.loads(call[1])["command"] == "touch /tmp/k"
    assert mock_models._call([*turns, ("tool", "done")], BASH_TOOL) is None


def test_kimi_code_work_dir_keys_are_the_clis_own() -> None:
    # as Kimi Code 2.1.0 named the real home's folders (fixtures/realdata/kimicode-listing.txt)
    import conformance_kimicode

    assert conformance_kimicode.workdir_key("/home/mika/code/数据-tools") == "wd_tools_55cb7264c5e9"
    assert conformance_kimicode.workdir_key("/home/mika/code/shop-api") == "wd_shop-api_4c912d92a723"
    assert conformance_kimicode.workdir_key("/home/sam/code2/ümlaut-tools") == "wd_mlaut-tools_5e07d6ba23c9"


def test_latest_stands_in_for_the_pin_only_when_asked(monkeypatch) -> None:
    import conformance

    pin = conformance.Pin("amp", "@ampcode/cli-linux-x64", "1.0.0", "amp")
    monkeypatch.setattr(conformance, "newest_version", lambda p, python: "1.2.0")
    monkeypatch.delenv("LATEST", raising=False)
    assert conformance.latest(pin) == pin
    monkeypatch.setenv("LATEST", "1")
    newest = conformance.latest(pin)
    assert (newest.version, newest.pinned) == ("1.2.0", "1.0.0") and conformance.latest(newest) == newest
    monkeypatch.setattr(conformance, "newest_version", lambda p, python: None)  # the registry did not answer
    assert conformance.latest(pin) == pin


def test_help_drift_names_the_flags_gained_and_fails_on_a_lost_one(tmp_path: Path) -> None:
    import conformance

    pinned_dir = tmp_path / "pinned"
    pinned_dir.mkdir()
    (pinned_dir / "amp").write_text("#!/bin/sh\necho 'Usage: amp threads continue [options]\n  --last\n  --pick'\n")
    (pinned_dir / "amp").chmod(0o755)
    newest = conformance.Pin("amp", "@ampcode/cli-linux-x64", "1.2.0", "amp", pinned="1.0.0")
    asked: list[str] = []

    def installer(pin: conformance.Pin) -> Path:
        asked.append(pin.version)
        return pinned_dir
    row = conformance.help_drift(newest, "Usage: amp threads continue [options]\n  --last\n  --fork\n", tmp_path,
                                 installer)
    assert asked == ["1.0.0"] and row is not None
    assert row.version == "1.0.0 -> 1.2.0" and row.effective == "help: +--fork; ---pick"
    assert row.problem == "help lost --pick"
    assert conformance.help_drift(conformance.Pin("amp", "x", "1.0.0", "amp"), "", tmp_path, installer) is None
