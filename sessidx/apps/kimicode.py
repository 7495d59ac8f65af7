"""Kimi Code (npm `@moonshot-ai/kimi-code`, the `kimi` command since 2.x): `$KIMI_CODE_HOME`, else
`~/.kimi-code`; one folder per session, `sessions/<workDirKey>/<id>/` holding `state.json` and the
main agent's event log `agents/main/wire.jsonl`.

Read from the real 2.1.0 (fixtures/realdata/kimicode-home.tar.gz). The id is `session_<uuid4>`,
or `ses_<kimi-cli's uuid>` for a session `kimi migrate` brought over. Folder: `state.json`'s `cwd`
(the work-dir key keeps only an ASCII slug of the folder's name). Title: `title` (the first prompt
in the TUI, `/title`'s), else the first `turn.prompt` text (a `-p` session has no title).
Last use: `updatedAt`, as `kimi session list` sorts. Model: the last `profile.bind`'s
`modelAlias` (what `-m` takes). Mode: the last `permission.set_mode` (`manual`, `yolo`, `auto`),
`+plan` while a `plan_mode.enter` has no exit after it; a migrated session records no mode and
comes back in the CLI's default. No branch is stored. Archived: `archived`.
"""

from __future__ import annotations

import os

from sessidx.apps.base import (
    UUID,
    AppPlan,
    ArgvBuilder,
    Source,
    Stamp,
    json_markers,
    loose_reason,
    one,
    said_in,
    stamp_or_none,
    tool_words,
)
from sessidx.model import Session
from sessidx.readers import joined_text, open_transcript, read_small_json, stamp, subdirs, text

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from sessidx.apps.base import CliHelp
    from sessidx.config import Env

ID_PATTERN = f"(?:session|ses)_{UUID}"
# Both approve commands without asking, and a plain `kimi -S` restores them: no flag brings a
# session back to `manual` (2.1.0, checked live). `-p` records `auto`.
LOOSE = {"yolo": "--yolo", "auto": "--auto"}
# kimi-cli (1.51.0) names the same command `kimi`, with `-S` too; only Kimi Code's help has `--auto`
# (kimi-cli's `--auto-approve` is another word), only kimi-cli's has `--afk`
KIMI_CODE_ONLY, KIMI_CLI_ONLY = "--auto", "--afk"
PLAN_RECORDS = ("plan_mode.enter", "plan_mode.exit", "plan_mode.cancel")


def home(env: Env) -> str:
    return env.path("KIMI_CODE_HOME", ".kimi-code")


def migrated_ids(env: Env) -> set[str]:
    """kimi-cli ids that `kimi migrate` brought into this store and that are still there: the
    migrator names each `ses_<kimi-cli's id>` and lists it in `session_index.jsonl`."""
    found: set[str] = set()
    store = home(env)
    index = os.path.join(store, "session_index.jsonl")
    try:
        with open(index, "rb") as f:
            lines = f.read(4 * 1024 * 1024).splitlines()
    except OSError:
        return found
    from sessidx.readers import parse_record

    for line in lines:
        entry = parse_record(line)
        sid = text(entry.get("sessionId")) if entry else None
        folder = text(entry.get("sessionDir")) if entry else None
        # the folder found under this store, not at the absolute `sessionDir` (a home moved or copied)
        if not (sid and sid.startswith("ses_") and folder):
            continue
        here = os.path.join(store, "sessions", os.path.basename(os.path.dirname(folder)), sid)
        if stamp(os.path.join(here, "state.json")):
            found.add(sid[len("ses_"):])
    return found


def is_kimi_code(cli: CliHelp) -> bool:
    """The installed `kimi` is Kimi Code, as its own help says."""
    return cli.has(KIMI_CODE_ONLY) and not cli.has(KIMI_CLI_ONLY)


def index_stamp(env: Env) -> Stamp:
    return stamp_or_none(os.path.join(home(env), "session_index.jsonl"))


def _wire_facts(wire: str) -> tuple[str | None, str | None, bool, str | None]:
    """(mode, model alias, plan mode on, first prompt) from the event log."""
    t = open_transcript(wire)
    if t is None:
        return None, None, False, None
    with t:
        first = next((said for r in t.head() if r.get("type") == "turn.prompt"
                      and (said := joined_text(r.get("input")).strip())), None)
        mode = next((text(r.get("mode")) for r in t.newest("permission.set_mode")), None)
        model = next((text(r.get("modelAlias")) for r in t.newest("profile.bind")), None)
        plan = next((r.get("type") == "plan_mode.enter" for r in t.newest(*PLAN_RECORDS)), False)
    return mode, model, plan, first


def parse_session(folder: str) -> Session | None:
    state: Any = read_small_json(os.path.join(folder, "state.json"))
    if not isinstance(state, dict) or not (sid := text(state.get("id"))):
        return None
    wire = os.path.join(folder, "agents", "main", "wire.jsonl")
    mode, model, plan, first = _wire_facts(wire)
    updated = state.get("updatedAt")
    if not isinstance(updated, int) or isinstance(updated, bool):
        updated = (stamp(wire) or (0, 0))[1] // 1_000_000
    approval = "+".join(m for m in (mode or "manual", "plan" if plan else None) if m)
    return Session(app="kimicode", id=sid, cwd=text(state.get("cwd")), title=text(state.get("title")) or first,
                   mtime=updated, bytes=(stamp(wire) or (0, 0))[0], model=model, approval=approval, path=wire,
                   archived=state.get("archived") is True)


class KimiCode:
    name = "kimicode"
    program = "kimi"
    proven_on = "2.1.0"  # the CLI version the plans were proven on (make conformance)
    help_args: tuple[str, ...] = ("--help",)
    home_vars: tuple[str, ...] = ("KIMI_CODE_HOME",)
    home_dirs: tuple[str, ...] = (".kimi-code",)
    id_pattern = ID_PATTERN

    def sources(self, env: Env) -> Iterator[Source]:
        for workspace in subdirs(os.path.join(home(env), "sessions")):
            if workspace.name.startswith("."):
                continue  # `.index-cache`, `.index-dirty`: Kimi Code's own bookkeeping
            for session in subdirs(workspace.path):
                state = stamp(os.path.join(session.path, "state.json"))
                if state is not None:
                    wire = stamp_or_none(os.path.join(session.path, "agents", "main", "wire.jsonl"))
                    yield Source(os.path.join(session.path, "agents", "main", "wire.jsonl"), state + wire,
                                 self._load, session.path)

    @staticmethod
    def _load(folder: str) -> list[Session]:
        return one(parse_session(folder))

    # What was said: `agent.message.appended` (`message.message`: the prompts as typed, the
    # replies, tool calls and results); a migrated session has only the migrator's
    # `context.append_message` records, which carry no `agentId` (the CLI's own do, beside the
    # same prompt in an `agent.message.appended`, with its `<system-reminder>`s).
    # 2.1.0 writes an `agent.message.appended` record's type after its message, past the first
    # bytes a long line is looked at (conversation.MARKER_WINDOW): its opening names it too.
    said_markers = (*json_markers("type", "agent.message.appended", "context.append_message"),
                    b'{"message":{"message":{"role":"')

    def said(self, record: dict[str, Any]) -> list[tuple[str, str]]:
        outer = record.get("message")
        if record.get("type") == "agent.message.appended" and isinstance(outer, dict):
            message = outer.get("message")
        elif record.get("type") == "context.append_message" and "agentId" not in record:
            message = outer
        else:
            return []
        if not isinstance(message, dict):
            return []
        said = said_in(message.get("role"), message.get("content"))
        calls = message.get("toolCalls")
        if isinstance(calls, list):
            said += [("tool", w) for c in calls if isinstance(c, dict) for w in tool_words(c.get("arguments"))]
        return [(role, t) for role, t in said if not t.lstrip().startswith("<system-reminder>")]

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        # `-S ID` in the session's folder (from another one 2.1.0 exits 1: "created under a
        # different directory").
        b = ArgvBuilder(cli, self.program, "-S", session.id)
        if cli.found and cli.known and not is_kimi_code(cli):
            b.refuse(f"the installed kimi is not Kimi Code (its help has no {KIMI_CODE_ONLY}, or has kimi-cli's "
                     f"{KIMI_CLI_ONLY}): it would not find this session. Install @moonshot-ai/kimi-code",
                     "other_cli")
        modes = set((session.approval or "manual").split("+"))
        loose = [flag for mode, flag in LOOSE.items() if mode in modes]
        if loose and not allow_permissive:
            for flag in loose:
                b.hold_back(flag, "", loose_reason(self.program, "manual: ask before each tool", cli.version))
            b.refuse(f"Kimi Code restores {loose[0].lstrip('-')} mode by itself on resume and no flag brings a "
                     "session back to manual: commands would run unasked. Alt-Enter (--allow-permissive) resumes "
                     "it so for this launch", "loose_mode")
        return b.plan


APP = KimiCode()
