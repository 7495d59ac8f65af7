"""Factory droid: `~/.factory/sessions/<cwd with / -> ->/<id>.jsonl` + `<id>.settings.json`
(droid has no documented override of `~/.factory`; `SESSIDX_HOME` still moves `~`).

The first line is `session_start` (`id`, `title`, `cwd`); `message` records carry `timestamp`
(last used: the newest one). Settings hold `model`, `autonomyLevel` and `tags` (a `subagent`
tag marks a sub-agent session). No branch is stored. Every autonomy level but `off` is looser
than the interactive default.
"""

from __future__ import annotations

import os

from sessidx.apps.base import (
    UUID,
    AppPlan,
    ArgvBuilder,
    Source,
    json_markers,
    loose_reason,
    one,
    said_in,
    stamp_or_none,
)
from sessidx.model import Session
from sessidx.readers import files, iso_ms, mtime_ms, open_transcript, read_small_json, stamp, subdirs, text

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from sessidx.apps.base import CliHelp
    from sessidx.config import Env

DEFAULT_AUTONOMY = "off"  # the interactive droid's own default, "Auto (Off)"; every other level is looser


def _tagged(settings: object, name: str) -> bool:
    tags = settings.get("tags") if isinstance(settings, dict) else None
    return isinstance(tags, list) and any(isinstance(t, dict) and t.get("name") == name for t in tags)


def _is_subagent(settings: object) -> bool:
    return _tagged(settings, "subagent")


def parse_session(path: str, settings_path: str) -> Session | None:
    settings = read_small_json(settings_path)
    if _is_subagent(settings):
        return None
    settings = settings if isinstance(settings, dict) else {}
    t = open_transcript(path)
    if t is None:
        return None
    with t:
        start = next(t.head(), None)
        if start is None or start.get("type") != "session_start" or not (sid := text(start.get("id"))):
            return None
        updated = next((ms for r in t.newest("message") if (ms := iso_ms(r.get("timestamp")))), None)
        size = t.size
    updated = updated or mtime_ms(path)
    if updated is None:
        return None
    return Session(app="droid", id=sid, cwd=text(start.get("cwd")), branch=None, title=text(start.get("title")),
                   mtime=updated, bytes=size, model=text(settings.get("model")), effort=None,
                   approval=text(settings.get("autonomyLevel")), sandbox=None, path=path,
                   origin="exec" if _tagged(settings, "exec") else None)


def _load(path: str, settings_path: str) -> list[Session]:
    return one(parse_session(path, settings_path))


class Droid:
    name = "droid"
    program = "droid"
    proven_on = "0.225.2"  # the CLI version the plans were proven on (make conformance)
    home_vars: tuple[str, ...] = ()
    home_dirs: tuple[str, ...] = (".factory",)
    id_pattern = UUID
    help_args: tuple[str, ...] = ("--help",)

    def sources(self, env: Env) -> Iterator[Source]:
        for project in subdirs(os.path.join(env.path(None, ".factory"), "sessions")):
            for entry in files(project.path, ".jsonl"):
                settings = entry.path[: -len(".jsonl")] + ".settings.json"
                st = stamp(entry.path)
                if st is not None:
                    yield Source(f"droid:{entry.path}", st + stamp_or_none(settings),
                                 _load, entry.path, settings)

    said_markers = json_markers("type", "message")

    def said(self, record: dict[str, Any]) -> list[tuple[str, str]]:
        message = record.get("message")
        if record.get("type") != "message" or not isinstance(message, dict):
            return []
        return said_in(message.get("role"), message.get("content"))

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        b = ArgvBuilder(cli, self.program, "--resume", session.id)
        level = session.approval
        if level and level != DEFAULT_AUTONOMY:
            if allow_permissive:
                b.safety("--auto", level)
            else:
                # 0.225.2 restores the level by itself; `--auto low` is the strictest override
                # it takes (`--auto off` is rejected), still looser than its default, Off.
                b.hold_back("--auto", level, loose_reason(self.program, "Auto (Off)", cli.version))
                b.refuse(f"droid restores autonomy {level} by itself, and the strictest override it takes "
                         f"(--auto low) is still looser than its default, Off. Alt-Enter (--allow-permissive) "
                         f"resumes it at {level} for this launch", "loose_mode")
                if session.origin == "exec":
                    b.plan.warnings.append("started by `droid exec`, which records autonomy low even without "
                                           "--auto: every non-interactive droid session needs the opt-in")
        return b.plan


APP = Droid()
