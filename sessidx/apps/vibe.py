"""Mistral Vibe: `~/.vibe/logs/session/unified/<id>/meta.json` (`VIBE_HOME` moves `~/.vibe`).

Folder: `meta.environment.working_directory`. Title: `meta.title` (`/rename`), else the session's
`preview` (its first prompt) in `unified/.session-index.json`. Last use: `meta.end_time`, else
`start_time`. Model: `meta.config.active_model`. Mode: `session_metadata.agent_name` of the
newest `generations/*/runtime-state.json`, with `+bypass` when `--auto-approve`/`--yolo` set the
policy ceiling's `approval_bypass` on another agent. Branch: 3.0.3 writes `git_branch: null`
even in git repositories. Sub-agents are `child-*` folders without `meta.json`.
"""

from __future__ import annotations

import os

from sessidx.apps.base import (
    DOCUMENT_CAP,
    UUID,
    AppPlan,
    ArgvBuilder,
    Source,
    loose_reason,
    one,
    said_in,
    stamp_or_none,
)
from sessidx.model import Session
from sessidx.readers import files, iso_ms, read_small_json, stamp, subdirs, text

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from sessidx.apps.base import CliHelp
    from sessidx.config import Env

DEFAULT_AGENT = "accept-edits"
STRICT_AGENTS = {"ask", DEFAULT_AGENT}  # `auto-approve` and `smart-approve` are looser
RUNTIME_CAP = 16 * 1024 * 1024


def _mode(folder: str) -> str | None:
    generations = sorted(entry.name for entry in subdirs(os.path.join(folder, "generations")))
    for name in reversed(generations):
        state: Any = read_small_json(os.path.join(folder, "generations", name, "runtime-state.json"), RUNTIME_CAP)
        if not isinstance(state, dict):
            continue
        meta = state.get("session_metadata")
        agent = text(meta.get("agent_name")) if isinstance(meta, dict) else None
        subagents = state.get("subagents")
        ceiling = subagents.get("policy_ceiling") if isinstance(subagents, dict) else None
        bypass = isinstance(ceiling, dict) and ceiling.get("approval_bypass") is True
        if agent and bypass and agent != "auto-approve":
            return f"{agent}+bypass"
        return agent
    return None


def parse_session(folder: str, previews: dict[str, str]) -> Session | None:
    meta: Any = read_small_json(os.path.join(folder, "meta.json"))
    if not isinstance(meta, dict) or not (sid := text(meta.get("session_id"))):
        return None
    if meta.get("parent_session_id"):
        return None
    environment = meta.get("environment")
    config = meta.get("config")
    updated = iso_ms(meta.get("end_time")) or iso_ms(meta.get("start_time"))
    if updated is None:
        return None
    return Session(app="vibe", id=sid,
                   cwd=text(environment.get("working_directory")) if isinstance(environment, dict) else None,
                   branch=text(meta.get("git_branch")), title=text(meta.get("title")) or previews.get(sid),
                   mtime=updated, model=text(config.get("active_model")) if isinstance(config, dict) else None,
                   approval=_mode(folder), path=os.path.join(folder, "meta.json"),
                   archived=meta.get("archived_at") is not None)


def _previews(index_path: str) -> dict[str, str]:
    """id -> the first prompt, from the CLI's own catalog."""
    doc = read_small_json(index_path, RUNTIME_CAP)
    entries = doc.get("entries") if isinstance(doc, dict) else None
    found = {}
    for entry in entries if isinstance(entries, list) else []:
        session = entry.get("session") if isinstance(entry, dict) else None
        if isinstance(session, dict) and (sid := text(session.get("id"))) and (preview := text(session.get("preview"))):
            found[sid] = preview
    return found


class Vibe:
    name = "vibe"
    program = "vibe"
    proven_on = "3.0.3"  # the CLI version the plans were proven on (make conformance)
    help_args: tuple[str, ...] = ("--help",)
    home_vars: tuple[str, ...] = ("VIBE_HOME",)
    home_dirs: tuple[str, ...] = (".vibe",)
    id_pattern = UUID

    def sources(self, env: Env) -> Iterator[Source]:
        unified = os.path.join(env.path("VIBE_HOME", ".vibe"), "logs", "session", "unified")
        index = os.path.join(unified, ".session-index.json")
        index_stamp = stamp_or_none(index)
        previews: dict[str, str] | None = None

        def load(folder: str) -> list[Session]:
            nonlocal previews
            if previews is None:
                previews = _previews(index)
            return one(parse_session(folder, previews))

        for folder in subdirs(unified):
            meta = os.path.join(folder.path, "meta.json")
            st = stamp(meta)  # `child-*` sub-agent folders have none
            if st is not None:
                current = stamp_or_none(os.path.join(folder.path, "CURRENT"))
                yield Source(meta, st + current + index_stamp, load, folder.path)

    def conversation(self, session: Session) -> list[tuple[str, str]]:
        """The history entries of the content-addressed chunks, in turn order."""
        if not session.path:
            return []
        entries = []
        for chunk in files(os.path.join(os.path.dirname(session.path), "chunks"), ".json"):
            doc = read_small_json(chunk.path, DOCUMENT_CAP)
            if isinstance(doc, list):
                entries += [e for e in doc if isinstance(e, dict) and e.get("source") == "history"
                            and isinstance(e.get("message"), dict)]
        entries.sort(key=lambda e: e["turn_index"] if isinstance(e.get("turn_index"), int) else 0)
        said = []
        for e in entries:
            said += said_in(e["message"].get("role"), e["message"].get("content"))
        return said

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        # 3.0.3 ignores `--agent` on resume, both ways: the recorded agent is what applies, so
        # no `--agent` is passed. `--auto-approve` (the `+bypass`) is not restored by a resume.
        b = ArgvBuilder(cli, self.program, "--resume", session.id)
        agent, _, bypass = (session.approval or DEFAULT_AGENT).partition("+")
        if agent in STRICT_AGENTS:
            if bypass and allow_permissive:
                b.safety("--auto-approve")
            elif bypass:
                b.plan.warnings.append(f"recorded with --auto-approve, which a resume does not restore: it runs as "
                                       f"{agent}. Alt-Enter (--allow-permissive) passes --auto-approve again")
        elif not allow_permissive:
            b.hold_back("--agent", agent, loose_reason(self.program, DEFAULT_AGENT, cli.version))
            b.refuse(f"vibe restores the {agent} agent by itself on --resume, and --agent does not override it "
                     "(3.0.3 keeps the recorded agent either way). Alt-Enter (--allow-permissive) resumes it so "
                     "for this launch", "loose_mode")
        return b.plan


APP = Vibe()
