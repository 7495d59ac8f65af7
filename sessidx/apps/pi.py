"""pi (`@mariozechner/pi-coding-agent`): `~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl`
(`PI_CODING_AGENT_DIR` moves `~/.pi/agent`).

The folder name is lossy (every `/`, `\\` and `:` is `-`), so the cwd comes from the header
line. Title: the last `session_info.name` (an empty one clears it), else the first user text,
as pi's own `/resume` shows it. Last use: the newest message's `timestamp` (pi sorts by it),
else the header's. Model: the last `model_change` or assistant `model`; effort: the last
`thinking_level_change`. Forks (`parentSession` in the header) are sessions of their own and
listed as such. pi has no permission modes: nothing is carried or held back.

Every pi start moves a stray `*.jsonl` lying in `sessions/` itself into its folder, so both
places are read.
"""

from __future__ import annotations

import os

from sessidx.apps.base import (
    AppPlan,
    ArgvBuilder,
    Source,
    file_sources,
    json_markers,
    output_said,
    said_in,
    tool_words,
)
from sessidx.model import Session
from sessidx.readers import iso_ms, joined_text, mtime_ms, open_transcript, subdirs, text

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from sessidx.apps.base import CliHelp
    from sessidx.config import Env
    from sessidx.readers import Record, Transcript

# pi 0.73 writes UUIDv7 ids; older files hold other UUID versions, resumed the same way
ID_PATTERN = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def _message(record: Record) -> dict[str, Any]:
    message = record.get("message") if record.get("type") == "message" else None
    return message if isinstance(message, dict) else {}


def _first_prompt(t: Transcript) -> str | None:
    for record in t.head():
        message = _message(record)
        if message.get("role") == "user":
            said = joined_text(message.get("content"))
            if said:
                return said
    return None


def _newest(t: Transcript, *types: str, key: str) -> Record | None:
    """The newest record of these types that has `key` (a message its `role`)."""
    for record in t.newest(*types, having=key):
        return record
    return None


def _model(t: Transcript) -> str | None:
    for record in t.newest("model_change", "message"):
        if record.get("type") == "model_change":
            return text(record.get("modelId"))
        message = _message(record)
        if message.get("role") == "assistant" and (model := text(message.get("model"))):
            return model
    return None


def _updated(t: Transcript) -> int | None:
    for record in t.newest("message"):
        stamp = _message(record).get("timestamp")
        if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
            return int(stamp)
    return None


def parse_session(path: str) -> Session | None:
    t = open_transcript(path)
    if t is None:
        return None
    with t:
        header = next((r for r in t.head() if r.get("type") == "session"), None)  # junk before it is skipped
        if header is None or not isinstance(header.get("id"), str):  # an id of another form: the core skips it
            return None
        info = _newest(t, "session_info", key="name")
        title = (text(info.get("name")) or "").strip() if info else None
        level = _newest(t, "thinking_level_change", key="thinkingLevel")
        updated = _updated(t) or iso_ms(header.get("timestamp")) or mtime_ms(path) or 0
        return Session(app="pi", id=header["id"], cwd=text(header.get("cwd")), title=title or _first_prompt(t),
                       mtime=updated, bytes=t.size, model=_model(t),
                       effort=text(level.get("thinkingLevel")) if level else None, path=path)


def _is_session_file(name: str) -> bool:
    return "_" in name  # `<time>_<id>.jsonl`; pi's other JSONL files never sit here


class Pi:
    name = "pi"
    program = "pi"
    proven_on = "0.73.1"  # the CLI version the plans were proven on (make conformance)
    help_args: tuple[str, ...] = ("--help",)
    home_vars: tuple[str, ...] = ("PI_CODING_AGENT_DIR",)
    home_dirs: tuple[str, ...] = (os.path.join(".pi", "agent"),)
    id_pattern = ID_PATTERN
    refusal_fields = ()  # its plan refuses on the CLI alone (base.App)

    def sources(self, env: Env) -> Iterator[Source]:
        sessions = os.path.join(env.path("PI_CODING_AGENT_DIR", ".pi", "agent"), "sessions")
        yield from file_sources(sessions, ".jsonl", parse_session, _is_session_file)  # not yet moved by pi
        for folder in subdirs(sessions):
            yield from file_sources(folder.path, ".jsonl", parse_session, _is_session_file)

    said_markers = json_markers("type", "message")

    def said(self, record: dict[str, Any]) -> list[tuple[str, str]]:
        message = _message(record)
        role, content = message.get("role"), message.get("content")
        if role == "toolResult":
            return output_said(content)  # its gist: errors, first and last lines
        said = said_in(role, content)
        if role == "assistant" and isinstance(content, list):  # pi's tool calls: {type: toolCall, arguments}
            said += [("tool", w) for part in content if isinstance(part, dict) and part.get("type") == "toolCall"
                     for w in tool_words(part.get("arguments"))]
        return said

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        # The full id (UUIDv7 ids made within a minute share their first 8 characters), run in
        # the session's folder: from another one pi offers to fork it instead. pi restores the
        # session's model and thinking level by itself and has no permission modes.
        return ArgvBuilder(cli, self.program, "--session", session.id).plan


APP = Pi()
