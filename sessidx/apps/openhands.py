"""OpenHands CLI: `~/.openhands/conversations/<id as 32 hex>/base_state.json` + `events/`
(`OPENHANDS_CONVERSATIONS_DIR`, else `OPENHANDS_PERSISTENCE_DIR/conversations`).

Id: `base_state.id` (dashed). Folder: `workspace.working_dir`. Title: none is stored; the first
user `MessageEvent`, as `openhands --resume` lists it. Last use: the newest event's
`timestamp` (naive local time). Model: `agent.llm.model`; effort: `agent.llm.reasoning_effort`.
Mode: `confirmation_policy.kind`: `AlwaysConfirm` (the default), `ConfirmRisky`
(`--llm-approve`), `NeverConfirm` (`--always-approve`, and every `--headless` run).

OpenHands 1.16.0 does not restore the recorded policy on `--resume`: the launch's own flags
set it (`setup_conversation` calls `set_confirmation_policy`; seen with the real CLI: a
NeverConfirm conversation resumed without flags records AlwaysConfirm). So a looser recorded
policy is held back by leaving its flag out, and passed only with the opt-in.
"""

from __future__ import annotations

import os

from sessidx.apps.base import AppPlan, ArgvBuilder, Source, loose_reason, one, said_in
from sessidx.model import Session
from sessidx.readers import files, read_small_json, stamp, subdirs, text

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from sessidx.apps.base import CliHelp
    from sessidx.config import Env

ID_PATTERN = r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}"
DEFAULT_POLICY = "AlwaysConfirm"
LOOSE_FLAGS = {"ConfirmRisky": "--llm-approve", "NeverConfirm": "--always-approve"}
EVENT_CAP = 1024 * 1024  # an event is one message or action; a bigger one is a tool's output


def _events(folder: str) -> list[str]:
    """The event files of a conversation, oldest first (`event-<5-digit seq>-<uuid>.json`)."""
    return sorted(e.path for e in files(os.path.join(folder, "events"), ".json") if e.name.startswith("event-"))


def _local_ms(value: Any) -> int | None:
    """Ms since the epoch of OpenHands' naive ISO time, which is the machine's local time."""
    from datetime import datetime

    if not isinstance(value, str):
        return None
    try:
        return int(datetime.fromisoformat(value).timestamp() * 1000)
    except (ValueError, OverflowError, OSError):
        return None


def _message(event: Any) -> tuple[str | None, Any]:
    if not isinstance(event, dict) or event.get("kind") != "MessageEvent":
        return None, None
    message = event.get("llm_message")
    return (message.get("role"), message.get("content")) if isinstance(message, dict) else (None, None)


def _first_prompt(events: list[str]) -> str | None:
    for path in events:
        role, content = _message(read_small_json(path, EVENT_CAP))
        if role == "user" and (said := [t for r, t in said_in(role, content) if r == "user"]):
            return said[0]
    return None


def parse_conversation(folder: str) -> Session | None:
    state = read_small_json(os.path.join(folder, "base_state.json"))
    if not isinstance(state, dict) or not isinstance(state.get("id"), str):
        return None  # (an id of another form is skipped by the core, with a note)
    events = _events(folder)
    newest = read_small_json(events[-1], EVENT_CAP) if events else None
    updated = _local_ms(newest.get("timestamp")) if isinstance(newest, dict) else None
    if updated is None:
        updated = (stamp(os.path.join(folder, "base_state.json")) or (0, 0))[1] // 1_000_000
    agent = state.get("agent")
    llm = agent.get("llm") if isinstance(agent, dict) else None
    llm = llm if isinstance(llm, dict) else {}
    workspace, policy = state.get("workspace"), state.get("confirmation_policy")
    return Session(app="openhands", id=state["id"],
                   cwd=text(workspace.get("working_dir")) if isinstance(workspace, dict) else None,
                   title=_first_prompt(events), mtime=updated, model=text(llm.get("model")),
                   effort=text(llm.get("reasoning_effort")),
                   approval=text(policy.get("kind")) if isinstance(policy, dict) else None,
                   path=os.path.join(folder, "events"))


def _folder_stamp(path: str) -> tuple[int | None, int | None, int | None, int | None]:
    """A folder's part of a stamp, laid out as readers.stamp's (size none)."""
    try:
        st = os.stat(path)  # a new event file changes the folder's mtime and ctime
    except OSError:
        return (None, None, None, None)
    return (None, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


class OpenHands:
    name = "openhands"
    program = "openhands"
    proven_on = "1.16.0"  # the CLI version the plans were proven on (make conformance)
    help_args: tuple[str, ...] = ("--help",)
    # 1.16.0's --help imports litellm: 30-45 s idle, past 2 min on a loaded 2-core machine. Under
    # clihelp's 30 s it was never cached, and every Enter waited 30 s for "unknown".
    help_timeout = 300.0
    home_vars: tuple[str, ...] = ("OPENHANDS_CONVERSATIONS_DIR", "OPENHANDS_PERSISTENCE_DIR")
    home_dirs: tuple[str, ...] = (os.path.join(".openhands", "conversations"),)
    id_pattern = ID_PATTERN
    refusal_fields = ()  # its plan refuses on the CLI alone (base.App)

    def conversations(self, env: Env) -> str:
        if found := env.get("OPENHANDS_CONVERSATIONS_DIR"):
            return os.path.expanduser(found)
        return os.path.join(env.path("OPENHANDS_PERSISTENCE_DIR", ".openhands"), "conversations")

    def sources(self, env: Env) -> Iterator[Source]:
        for folder in subdirs(self.conversations(env)):
            state = os.path.join(folder.path, "base_state.json")
            st = stamp(state)
            if st is not None:
                yield Source(state, st + _folder_stamp(os.path.join(folder.path, "events")), self._load, folder.path)

    @staticmethod
    def _load(folder: str) -> list[Session]:
        return one(parse_conversation(folder))

    def conversation(self, session: Session) -> list[tuple[str, str]]:
        said = []
        for path in _events(os.path.dirname(session.path or "")):
            said += said_in(*_message(read_small_json(path, EVENT_CAP)))
        return said

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        # Run in the conversation's folder: the working directory of a resumed run is the
        # process's own (or OPENHANDS_WORK_DIR). The model comes from the CLI's own settings.
        b = ArgvBuilder(cli, self.program, "--resume", session.id)
        flag = LOOSE_FLAGS.get(session.approval or "")
        if flag and allow_permissive:
            b.safety(flag)
        elif flag:
            b.hold_back(flag, "", loose_reason(self.program, DEFAULT_POLICY, cli.version))
        return b.plan


APP = OpenHands()
