"""gptme: `$XDG_DATA_HOME/gptme/logs/<id>/` (default `~/.local/share/gptme/logs`), one folder per
conversation: `conversation.jsonl` (the messages) and `config.toml` (its `[chat]` table).

The id is the folder name (gptme's `YYYY-MM-DD-adjective-adjective-animal`, or a `--name`).
Title: `[chat] name` (`gptme-util chats rename`), else the id, as `gptme-util chats list` shows
it. Folder: `[chat] workspace`, stored with the home collapsed to `~` (expanded against the home
the data lives in), else the `workspace` link gptme keeps beside it. Model: `[chat] model`; no
effort or branch is stored. Last use: the mtime of `conversation.jsonl`. Mode: `no_confirm`
when `[chat] no_confirm` is true (`-y`, and every `-n` run), else `confirm`.
"""

from __future__ import annotations

import os

from sessidx.apps.base import AppPlan, ArgvBuilder, Source, json_markers, loose_reason, one, said_in, stamp_or_none
from sessidx.model import Session
from sessidx.readers import json_value, read_small_text, stamp, subdirs, text

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from sessidx.apps.base import CliHelp
    from sessidx.config import Env

# gptme's own names and `--name` ones: never an option or a path; one with a blank is skipped
# (safety's core check keeps blanks out of every id)
ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._+@-]*"
_SCALARS = ("name", "model", "workspace", "no_confirm", "interactive")


def _value(raw: str) -> Any:
    """A TOML scalar as gptme writes it: a basic string (its escapes are JSON's), a literal
    string or a boolean; anything else (arrays, tables) is None."""
    raw = raw.strip()
    if raw.startswith('"') and raw.endswith('"') and len(raw) >= 2:
        return json_value(raw)
    if raw.startswith("'") and raw.endswith("'") and len(raw) >= 2:
        return raw[1:-1]
    return {"true": True, "false": False}.get(raw)


def chat_table(config: str) -> dict[str, Any]:
    """The scalar keys sessidx needs from the `[chat]` table of a conversation's config.toml.
    A line reader, not a TOML parser: Python 3.10 has no tomllib, and gptme writes one
    `key = value` per line."""
    found: dict[str, Any] = {}
    section = None
    for line in config.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line.strip("[] ")
        elif section == "chat" and "=" in line:
            key, _, raw = line.partition("=")
            if key.strip() in _SCALARS:
                found[key.strip()] = _value(raw)
    return found


def _folder(workspace: str | None, link: str, home: str) -> str | None:
    if workspace == "~" or (workspace and workspace.startswith("~/")):
        return home + workspace[1:]
    if workspace and os.path.isabs(workspace):
        return workspace
    try:
        target = os.readlink(link)  # gptme's own link to the workspace; reading it opens nothing
    except OSError:
        return None
    return target if os.path.isabs(target) else None


def parse_session(folder: str, home: str) -> Session | None:
    sid = os.path.basename(folder)
    conversation = os.path.join(folder, "conversation.jsonl")
    st = stamp(conversation)
    if st is None:  # (an id of another form is skipped by the core, with a note)
        return None
    chat = chat_table(read_small_text(os.path.join(folder, "config.toml")) or "")
    no_confirm = chat.get("no_confirm") is True
    return Session(app="gptme", id=sid, cwd=_folder(text(chat.get("workspace")), os.path.join(folder, "workspace"),
                                                   home),
                   title=text(chat.get("name")) or sid, mtime=st[1] // 1_000_000, bytes=st[0],
                   model=text(chat.get("model")), approval="no_confirm" if no_confirm else "confirm",
                   path=conversation)


class Gptme:
    name = "gptme"
    program = "gptme"
    proven_on = "0.35.1"  # the CLI version the plans were proven on (make conformance)
    help_args: tuple[str, ...] = ("--help",)
    home_vars: tuple[str, ...] = ("XDG_DATA_HOME",)
    home_dirs: tuple[str, ...] = (os.path.join(".local", "share", "gptme"),)
    id_pattern = ID_PATTERN

    def sources(self, env: Env) -> Iterator[Source]:
        for folder in subdirs(os.path.join(env.data_home(), "gptme", "logs")):
            conversation = os.path.join(folder.path, "conversation.jsonl")
            st = stamp(conversation)
            if st is not None:
                extra = stamp_or_none(os.path.join(folder.path, "config.toml"))
                yield Source(conversation, st + extra, self._load, folder.path, env.home)

    @staticmethod
    def _load(folder: str, home: str) -> list[Session]:
        return one(parse_session(folder, home))

    said_markers = json_markers("role", "user", "assistant")

    def said(self, record: dict[str, Any]) -> list[tuple[str, str]]:
        if record.get("hide") is True:
            return []  # what gptme itself keeps out of view
        return said_in(record.get("role"), record.get("content"))

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        # `--name=ID`: the id cannot be read as an option. gptme 0.35.1 restores the stored
        # `no_confirm` (and `interactive = false`) by itself on resume, and no flag turns
        # confirmation back on: a no_confirm session is resumed only with the opt-in.
        b = ArgvBuilder(cli, self.program, f"--name={session.id}")
        if session.approval == "no_confirm" and not allow_permissive:
            b.hold_back("--no-confirm", "", loose_reason(self.program, "confirm each tool", cli.version))
            b.refuse("gptme restores no_confirm by itself and has no flag that turns it off: every tool would "
                     "run unasked. Alt-Enter (--allow-permissive) resumes it so for this launch", "loose_mode")
        return b.plan


APP = Gptme()
