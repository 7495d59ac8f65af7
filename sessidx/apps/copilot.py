"""GitHub Copilot CLI: `~/.copilot/session-state/<id>/workspace.yaml` + `events.jsonl`, indexed
by `~/.copilot/session-store.db` (`COPILOT_HOME` moves `~/.copilot`).

workspace.yaml gives `id`, `cwd`, `branch` (`detached@<sha>` is no branch) and `name` (the
title; else the database's `summary`, the first prompt). Last used: the database's
`sessions.updated_at` (workspace.yaml is not bumped by a resume). Model: `data.model` of the
newest `assistant.message` event. Mode: the newest of `session.mode_changed` (`newMode`) and
`session.permissions_changed` with `allowAllPermissions` (`allow-all`, which is loose).
Only session folders count, not the old flat files.
"""

from __future__ import annotations

import os

from sessidx.apps.base import (
    UUID,
    AppPlan,
    ArgvBuilder,
    Source,
    SourceError,
    json_markers,
    loose_reason,
    one,
    output_said,
    read_table,
    report,
    said_in,
    stamp_or_none,
    tool_words,
)
from sessidx.model import Session
from sessidx.readers import iso_ms, open_transcript, read_small_text, stamp, subdirs, text

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from sessidx.apps.base import CliHelp
    from sessidx.config import Env

LOOSE_MODES = {"allow-all": "--allow-all", "yolo": "--yolo", "autopilot": "--autopilot"}  # mode -> its flag
# What 1.0.102 does once it restored the mode: autopilot comes back with Manual Approval (tools
# still ask); what is loose is that the agent goes on by itself.
WHAT_IS_LOOSE = {"allow-all": "every tool would run unasked", "yolo": "every tool would run unasked",
                 "autopilot": "tools still ask (it comes back with Manual Approval), but the agent would go on "
                              "working by itself without waiting for you"}


def parse_yaml(doc: str) -> dict[str, str]:
    """The flat `key: value` YAML Copilot writes (plain, '…' or "…" scalars)."""
    found: dict[str, str] = {}
    for line in doc.splitlines():
        key, sep, value = line.partition(":")
        if not sep or line[:1] in (" ", "#", "-") or not key.strip():
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] == "'":
            value = value[1:-1].replace("''", "'")
        elif len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1].encode("utf-8", "surrogateescape").decode("unicode_escape", "replace")
        found[key.strip()] = value
    return found


class _Store:
    """The session-store.db rows, read once per run however many sessions changed."""

    def __init__(self, db: str) -> None:
        self.db = db
        self.rows: dict[str, dict[str, object]] | None = None

    def row(self, sid: str) -> dict[str, object]:
        if self.rows is None:
            self.rows = {}
            try:
                for r in read_table(self.db, "sessions", ["id", "summary", "updated_at", "branch", "cwd"]):
                    if isinstance(r["id"], str):
                        self.rows[r["id"]] = r
            except SourceError as exc:
                report(f"{exc}; sessions listed from workspace.yaml alone")
        return self.rows.get(sid, {})


def parse_session(folder: str, store: _Store) -> Session | None:
    yaml = parse_yaml(read_small_text(os.path.join(folder, "workspace.yaml")) or "")
    sid = yaml.get("id") or os.path.basename(folder)
    row = store.row(sid)
    events = os.path.join(folder, "events.jsonl")
    model = mode = None
    size = None
    t = open_transcript(events)
    if t is not None:
        with t:
            for r in t.newest("assistant.message", "session.start", "session.resume"):
                data = r.get("data")
                if isinstance(data, dict) and (model := text(data.get("model")) or text(data.get("selectedModel"))):
                    break
            for r in t.newest("session.mode_changed", "session.permissions_changed"):
                data = r.get("data")
                data = data if isinstance(data, dict) else {}
                if r.get("type") == "session.mode_changed" and (mode := text(data.get("newMode"))):
                    break
                if data.get("allowAllPermissions") is True:
                    mode = "allow-all"
                    break
            size = t.size
    branch = yaml.get("branch") or text(row.get("branch"))
    updated = iso_ms(row.get("updated_at")) or iso_ms(yaml.get("updated_at"))
    if updated is None:
        st = stamp(events)
        updated = st[1] // 1_000_000 if st else 0
    return Session(
        app="copilot", id=sid, cwd=yaml.get("cwd") or text(row.get("cwd")),
        branch=None if not branch or branch.startswith("detached@") else branch,
        title=yaml.get("name") or text(row.get("summary")), mtime=updated, bytes=size, model=model, effort=None,
        approval=mode, sandbox=None, path=events, origin=None,
    )


def _load(folder: str, store: _Store) -> list[Session]:
    return one(parse_session(folder, store))


class Copilot:
    name = "copilot"
    program = "copilot"
    proven_on = "1.0.102"  # the CLI version the plans were proven on (make conformance)
    home_vars: tuple[str, ...] = ("COPILOT_HOME",)
    home_dirs: tuple[str, ...] = (".copilot",)
    id_pattern = UUID
    help_args: tuple[str, ...] = ("--help",)

    def sources(self, env: Env) -> Iterator[Source]:
        home = env.path("COPILOT_HOME", ".copilot")
        db = os.path.join(home, "session-store.db")
        store = _Store(db)
        db_stamp = stamp_or_none(db) + stamp_or_none(db + "-wal")
        for folder in subdirs(os.path.join(home, "session-state")):
            workspace = os.path.join(folder.path, "workspace.yaml")
            st = stamp(workspace)
            if st is None:
                continue  # lock folders and the like
            events = stamp_or_none(os.path.join(folder.path, "events.jsonl"))
            yield Source(f"copilot:{folder.path}", st + events + db_stamp, _load, folder.path, store)

    said_markers = json_markers("type", "user.message", "assistant.message", "tool.execution_complete")
    said_skip = json_markers("type", "tool.execution_complete")

    def said(self, record: dict[str, Any]) -> list[tuple[str, str]]:
        data = record.get("data")
        kind = record.get("type")
        if not isinstance(data, dict):
            return []
        if kind == "tool.execution_complete":  # `detailedContent` is the whole output, `content` what the model saw
            result = data.get("result")
            shown = (result.get("detailedContent") or result.get("content")) if isinstance(result, dict) else None
            error = data.get("error")
            return output_said([shown, error.get("message") if isinstance(error, dict) else error])
        if kind not in ("user.message", "assistant.message"):
            return []
        said = said_in(kind.partition(".")[0], data.get("content"))
        calls = data.get("toolRequests")
        if isinstance(calls, list):
            said += [("tool", w) for c in calls if isinstance(c, dict) for w in tool_words(c.get("arguments"))]
        return said

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        b = ArgvBuilder(cli, self.program, f"--resume={session.id}")
        b.option("--model", session.model)
        mode = session.approval
        if mode in LOOSE_MODES:
            flag = LOOSE_MODES[mode]
            if allow_permissive:
                b.switch(flag)
            else:
                # 1.0.102 restores the mode by itself on --resume; `--allow-all=false` is
                # rejected and COPILOT_ALLOW_ALL=false does nothing: no override exists.
                b.hold_back(flag, "", loose_reason(self.program, "ask before each tool", cli.version))
                b.refuse(f"copilot restores {mode} by itself on --resume and has no flag that turns it off: "
                         f"{WHAT_IS_LOOSE[mode]}. Alt-Enter (--allow-permissive) resumes it in {mode} "
                         "for this launch", "loose_mode")
        elif mode == "plan":
            b.option("--mode", "plan")
        return b.plan


APP = Copilot()
