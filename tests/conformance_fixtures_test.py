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
