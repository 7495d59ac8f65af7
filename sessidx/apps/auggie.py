"""Augment `auggie`: `~/.augment/sessions/<id>.json`.

One JSON document per session: `sessionId`, `modified` (ISO), `customTitle` (TUI only),
`chatHistory[]`, `agentState.modelId`, `parentConversationId` (a sub-agent's). There is no cwd
field: the folder is the first exchange's `ide_state_node.workspace_folders[0]`, as
`auggie session list` derives it. `--ask` shows only as a wrapper around the stored prompt:
it is the mode (`ask`), and the title is the prompt inside it. No branch is stored.

Ask mode is per message in auggie 0.36.0, and its TUI never applies `--ask` (the flag wraps only
an instruction given with it): on `-r ID --ask` the next typed turn went out as "# Ask mode is now
disabled", as without the flag (the live conformance run's control). So a resume does not pass
`--ask`; the preview says the session opens in the default mode, where commands run
automatically (auggie's own default: a fresh start does the same).
"""

from __future__ import annotations

import os

from sessidx.apps.base import UUID, AppPlan, ArgvBuilder, Source, document_messages, file_sources, said_in
from sessidx.model import Session
from sessidx.readers import iso_ms, read_document, text

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from sessidx.apps.base import CliHelp
    from sessidx.config import Env

ASK_WRAPPER = "# For this specific question, follow these ask mode guidelines:"
ASK_PROMPT = "User message:\n"
ASK_NOT_RESTORED = ("recorded in ask mode, which auggie does not restore (its TUI ignores --ask): the resume opens "
                    "in the default mode, where commands run automatically; start a message with # to ask")


def _first_exchange(history: Any) -> dict[str, Any]:
    first = history[0] if isinstance(history, list) and history else None
    exchange = first.get("exchange") if isinstance(first, dict) else None
    return exchange if isinstance(exchange, dict) else {}


def _folder(exchange: dict[str, Any]) -> str | None:
    for node in exchange.get("request_nodes") or []:
        ide = node.get("ide_state_node") if isinstance(node, dict) else None
        if not isinstance(ide, dict):
            continue
        folders = ide.get("workspace_folders")
        first = folders[0] if isinstance(folders, list) and folders and isinstance(folders[0], dict) else {}
        terminal = ide.get("current_terminal")
        return (text(first.get("folder_root")) or text(first.get("repository_root"))
                or (text(terminal.get("current_working_directory")) if isinstance(terminal, dict) else None))
    return None


def parse_session(path: str) -> Session | None:
    doc = read_document(path, ("sessionId", "modified", "customTitle"))
    if doc is None or not (sid := text(doc.get("sessionId"))) or doc.get("parentConversationId"):
        return None
    exchange = _first_exchange(doc.get("chatHistory"))
    prompt = text(exchange.get("request_message"))
    mode = None
    if prompt and prompt.startswith(ASK_WRAPPER):
        mode = "ask"
        prompt = prompt.partition(ASK_PROMPT)[2] or prompt
    state = doc.get("agentState")
    updated = iso_ms(doc.get("modified")) or iso_ms(doc.get("created"))
    if updated is None:
        return None
    return Session(app="auggie", id=sid, cwd=_folder(exchange), title=text(doc.get("customTitle")) or prompt,
                   mtime=updated, bytes=os.path.getsize(path),
                   model=text(state.get("modelId")) if isinstance(state, dict) else None, approval=mode, path=path)


class Auggie:
    name = "auggie"
    program = "auggie"
    proven_on = "0.36.0"  # the CLI version the plans were proven on (make conformance)
    help_args: tuple[str, ...] = ("--help",)
    home_vars: tuple[str, ...] = ()
    home_dirs: tuple[str, ...] = (".augment",)
    id_pattern = UUID
    refusal_fields = ()  # its plan refuses on the CLI alone (base.App)

    def sources(self, env: Env) -> Iterable[Source]:
        return file_sources(os.path.join(env.path(None, ".augment"), "sessions"), ".json", parse_session)

    def conversation(self, session: Session) -> list[tuple[str, str]]:
        said = []
        for item in document_messages(session.path, "chatHistory"):
            exchange = item.get("exchange")
            if not isinstance(exchange, dict):
                continue
            prompt = text(exchange.get("request_message"))
            if prompt and prompt.startswith(ASK_WRAPPER):
                prompt = prompt.partition(ASK_PROMPT)[2] or prompt
            said += said_in("user", prompt) + said_in("assistant", text(exchange.get("response_text")))
        return said

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        b = ArgvBuilder(cli, self.program, "-r", session.id)
        b.option("-m", session.model)
        if session.approval == "ask":
            b.plan.warnings.append(ASK_NOT_RESTORED)
        return b.plan


APP = Auggie()
