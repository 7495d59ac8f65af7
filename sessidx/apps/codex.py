"""Codex CLI: `~/.codex` (`CODEX_HOME`), its SQLite index `state_<n>.sqlite` (`CODEX_SQLITE_HOME`).

The index is read through a private copy of the database and its WAL (see sqlite_snapshot):
the WAL holds changes the main file does not (on the real data, an archive). Without a
database the dated rollout tree is walked instead: `sessions/YYYY/MM/DD/rollout-*.jsonl`
(first line `session_meta`, newest `turn_context` in the tail) and `archived_sessions/`.
"""

from __future__ import annotations

import os

from sessidx.apps.base import (
    UUID,
    AppPlan,
    ArgvBuilder,
    Source,
    SourceBusy,
    SourceError,
    carry_or_override,
    json_markers,
    one,
    output_said,
    read_table,
    report,
    said_in,
    source_for_file,
    stamp_or_none,
    tool_words,
    unknown_record_types,
)
from sessidx.config import current_env, demo_env
from sessidx.ids import id_fits
from sessidx.model import Session
from sessidx.readers import (
    Record,
    files,
    is_wrapper,
    json_value,
    mtime_ms,
    open_transcript,
    scan,
    stamp,
    subdirs,
    text,
)

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from sessidx.apps.base import CliHelp
    from sessidx.config import Env

STRICT_APPROVALS = {"untrusted", "on-request"}
STRICT_SANDBOXES = {"read-only", "workspace-write"}
SANDBOXES = STRICT_SANDBOXES | {"danger-full-access"}
THREAD_COLUMNS = [
    "id", "rollout_path", "cwd", "git_branch", "title", "name", "model", "reasoning_effort",
    "approval_mode", "sandbox_policy", "source", "thread_source", "archived",
    "updated_at", "updated_at_ms", "first_user_message",
]


def sandbox_name(policy: Any) -> str | None:
    """The plain sandbox name of a stored policy (0.171.0 permission profile or older shapes)."""
    if isinstance(policy, str):
        if policy in SANDBOXES:
            return policy
        policy = json_value(policy)  # json's scanner, without the json package (re, enum) in a build
    if not isinstance(policy, dict):
        return None
    kind = policy.get("type")
    if kind in SANDBOXES:
        return str(kind)
    if kind == "disabled":
        return "danger-full-access"
    if kind == "managed":
        fs = policy.get("file_system")
        if not isinstance(fs, dict):
            return None
        if fs.get("type") == "unrestricted":
            return "danger-full-access"
        entries = fs.get("entries")
        if isinstance(entries, list):
            writes = any(isinstance(e, dict) and e.get("access") == "write" for e in entries)
            return "workspace-write" if writes else "read-only"
    return None  # "external" and unknown shapes: the sandbox is not Codex's to report


def approval_name(value: Any) -> str | None:
    if isinstance(value, str) and value.startswith("{"):
        return "granular"  # newer builds: a JSON object of per-kind rules
    return text(value)


def is_subagent(source: Any, thread_source: Any = None) -> bool:
    if thread_source == "subagent":
        return True
    if isinstance(source, dict):
        return True
    return isinstance(source, str) and source.lstrip().startswith("{")


def _thread_names(index_path: str) -> dict[str, str]:
    """`session_index.jsonl`: append-only, the newest line per id wins."""
    names: dict[str, str] = {}
    t = open_transcript(index_path, head_lines=0)
    if t is not None:
        with t:
            for r in t.all():
                if (tid := text(r.get("id"))) and (name := text(r.get("thread_name"))):
                    names[tid] = name
    return names


def _rollouts_by_id(home: str) -> dict[str, str]:
    """Every rollout under the current home, by thread id (for homes moved or restored)."""
    found: dict[str, str] = {}
    for path, _ in _rollouts(home):
        if thread := _rollout_id(os.path.basename(path)):
            found[thread] = path
    return found


_FOUND: dict[str, dict[str, str]] = {}  # per home, its rollouts by thread id: looked for once a process
# The homes this process listed (every listing, warm or cold, asks `sources`), in order: a moved
# rollout is looked for there first. The process's own variables can name another home: the
# demo home is listed with an env of its own (and the preview lists nothing).
_LISTED: dict[str, None] = {}


def _rollout_id(name: str) -> str | None:
    """The thread id a rollout's file name ends with (`rollout-<time>-<uuid>.jsonl`), or None.
    Not by `re`: the first press ever reads the state database before its first row."""
    ident = name[-42:-6]
    return ident if name.endswith(".jsonl") and name[-43:-42] == "-" and id_fits(UUID, ident) else None


def _rollouts(home: str) -> Iterator[tuple[str, bool]]:
    """(path, archived) of every rollout: `sessions/YYYY/MM/DD/*.jsonl`, `archived_sessions/*.jsonl`."""
    for year in subdirs(os.path.join(home, "sessions")):
        for month in subdirs(year.path):
            for day in subdirs(month.path):
                for entry in files(day.path, ".jsonl"):
                    yield entry.path, False
    for entry in files(os.path.join(home, "archived_sessions"), ".jsonl"):
        yield entry.path, True


def _ms(row: dict[str, Any]) -> int:
    ms = row.get("updated_at_ms")
    if isinstance(ms, int):
        return ms
    secs = row.get("updated_at")
    return int(secs * 1000) if isinstance(secs, (int, float)) else 0


def load_database(db: str, home: str) -> list[Session]:
    names = _thread_names(os.path.join(home, "session_index.jsonl"))
    archived_dir = os.path.join(home, "archived_sessions")
    moved: dict[str, str] | None = None
    sessions = []
    try:
        rows = read_table(db, "threads", THREAD_COLUMNS, strict=True)
    except SourceBusy as exc:
        # A writer at work: the index keeps the last good read (with the threads that live only
        # in the database); the rollouts are what it lists when it has none.
        raise SourceBusy(str(exc), load_rollouts(home, names)) from None
    except SourceError as exc:
        # The database is damaged: the rollouts still say it all, and build -v says so.
        report(f"{exc}; listed from the rollout files instead")
        return load_rollouts(home, names)
    for row in rows:
        tid = text(row["id"])
        if tid is None or is_subagent(row["source"], row["thread_source"]):
            continue
        # The recorded path stays the session's: it is the only place `codex resume` looks, so
        # a rollout found elsewhere (a home moved or restored) is listed but refused by plan().
        path = found = text(row["rollout_path"])
        if path is None or not os.path.isfile(path):
            if moved is None:
                moved = _rollouts_by_id(home)
            found = moved.get(tid, path)
        st = stamp(found) if found else None
        archived = bool(row["archived"]) or bool(found and found.startswith(archived_dir + os.sep))
        sessions.append(
            Session(
                app="codex",
                id=tid,
                cwd=text(row["cwd"]),
                branch=text(row["git_branch"]),
                title=text(row["name"]) or names.get(tid) or text(row["title"]) or text(row["first_user_message"]),
                mtime=_ms(row),
                bytes=st[0] if st else None,
                model=text(row["model"]),
                effort=text(row["reasoning_effort"]),
                approval=approval_name(row["approval_mode"]),
                sandbox=sandbox_name(row["sandbox_policy"]),
                path=path,
                archived=archived,
                origin=text(row["source"]),
            )
        )
    return sessions


def _user_prompt(record: Record) -> str | None:
    payload = record.get("payload")
    if record.get("type") != "response_item" or not isinstance(payload, dict):
        return None
    if payload.get("type") != "message" or payload.get("role") != "user":
        return None
    content = payload.get("content")
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and (t := text(block.get("text"))) and not is_wrapper(t):
            return t
    return None


def load_rollouts(home: str, names: dict[str, str]) -> list[Session]:
    return [session for path, archived in _rollouts(home) if (session := parse_rollout(path, names, archived))]


def parse_rollout(path: str, names: dict[str, str], archived: bool) -> Session | None:
    """One session from a rollout file alone (no database)."""
    t = open_transcript(path)
    if t is None:
        return None
    with t:
        head = t.head()
        first = next(head, None)
        meta = first.get("payload") if first and first.get("type") == "session_meta" else None
        if not isinstance(meta, dict) or (tid := text(meta.get("id"))) is None:
            return None
        if is_subagent(meta.get("source"), meta.get("thread_source")):
            return None
        newest_context = next(t.newest("turn_context"), {}).get("payload")
        context: dict[str, Any] = newest_context if isinstance(newest_context, dict) else {}
        title = names.get(tid) or next((p for r in head if (p := _user_prompt(r))), None)
        size = t.size
    git = meta.get("git")
    mtime = mtime_ms(path)
    if mtime is None:
        return None
    return Session(
        app="codex",
        id=tid,
        cwd=text(context.get("cwd")) or text(meta.get("cwd")),
        branch=text(git.get("branch")) if isinstance(git, dict) else None,
        title=title,
        mtime=mtime,
        bytes=size,
        model=text(context.get("model")),
        effort=text(context.get("effort")),
        approval=approval_name(context.get("approval_policy")),
        sandbox=sandbox_name(context.get("sandbox_policy")),
        path=path,
        archived=archived,
        origin=text(meta.get("source")),
    )


# Every rollout record type the real 0.171.0 wrote in fixtures/realdata, and `compacted` (../shared/SPEC.md):
# a type outside these is one the listing was never proven against (`sessidx doctor`)
KNOWN_RECORDS = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "token_usage_record",
                           "world_state", "compacted"})


class Codex:
    name = "codex"
    program = "codex"
    proven_on = "0.171.0"  # the CLI version the plans were proven on (make conformance)
    home_vars: tuple[str, ...] = ("CODEX_HOME", "CODEX_SQLITE_HOME")
    home_dirs: tuple[str, ...] = (".codex",)
    id_pattern = UUID
    help_args: tuple[str, ...] = ("resume", "--help")

    def home(self, env: Env) -> str:
        return env.path("CODEX_HOME", ".codex")

    def transcript(self, session: Session) -> str | None:
        """The rollout to read what was said from: the recorded one, or where the listing found it
        by its id (a home moved or restored). The resume still refuses it (see plan)."""
        if session.path and os.path.isfile(session.path):
            return session.path
        env = current_env()  # then this process's home, then the demo's (index.load's fallback)
        for home in [*_LISTED, self.home(env), self.home(demo_env(env))]:
            if home not in _FOUND:
                _FOUND[home] = _rollouts_by_id(home)
            if session.id in _FOUND[home]:
                return _FOUND[home][session.id]
        return session.path

    def state_db(self, env: Env) -> str | None:
        folder = env.get("CODEX_SQLITE_HOME") or self.home(env)
        best: tuple[int, str] | None = None
        for entry in scan(folder):
            n = entry.name.removeprefix("state_").removesuffix(".sqlite")
            if n.isdigit() and entry.name == f"state_{n}.sqlite" and (best is None or int(n) > best[0]):
                best = (int(n), entry.path)
        return best[1] if best else None

    def sources(self, env: Env) -> Iterator[Source]:
        home = self.home(env)
        _LISTED[home] = None
        index_file = os.path.join(home, "session_index.jsonl")
        index_stamp = stamp_or_none(index_file)
        db = self.state_db(env)
        if db is not None and (db_stamp := stamp(db)) is not None:
            wal_stamp = stamp_or_none(db + "-wal")
            yield Source(f"codex-db:{db}", db_stamp + wal_stamp + index_stamp, load_database, db, home)
            return
        names: dict[str, str] | None = None

        def parse(path: str, archived: bool) -> list[Session]:
            nonlocal names
            if names is None:
                names = _thread_names(index_file)
            return one(parse_rollout(path, names, archived))

        for path, archived in _rollouts(home):
            source = source_for_file(path, index_stamp, parse, path, archived)
            if source is not None:
                yield source

    said_markers = json_markers("type", "response_item")

    said_skip = (b'"function_call_output"', b'"custom_tool_call_output"')

    def unknown_records(self, session: Session) -> dict[str, int]:
        """Of a rollout file (a thread known only to the database has none here)."""
        path = session.path if session.path and session.path.endswith(".jsonl") else None
        return unknown_record_types(path, KNOWN_RECORDS)

    def said(self, record: dict[str, Any]) -> list[tuple[str, str]]:
        item = record.get("payload")
        if record.get("type") != "response_item" or not isinstance(item, dict):
            return []
        if item.get("type") == "message":
            return said_in(item.get("role"), item.get("content"))
        if item.get("type") in ("function_call", "custom_tool_call", "local_shell_call"):
            return [("tool", w) for w in tool_words(item.get("arguments") or item.get("input") or item.get("action"))]
        if item.get("type") in ("function_call_output", "custom_tool_call_output"):
            return output_said(item.get("output"))
        return []

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        b = ArgvBuilder(cli, self.program, "resume")
        if session.archived:
            b.refuse(f"archived in Codex: run `codex unarchive {session.id}` first", "archived")
        elif session.path and not os.path.isfile(session.path):
            b.refuse(f"Codex looks for this thread only at its recorded rollout {session.path}, which is gone "
                     "(a home moved or restored?): `codex resume` would fail", "rollout_moved")
        b.option("-m", session.model)
        # Effort is not passed: `codex resume` restores it by itself, and a `-c` override makes
        # it run in-process, which stops at "This conversation is open in another app" when a
        # TUI left the thread open in Codex's app server; without `-c` it attaches.
        approval = session.approval
        if approval == "untrusted" and cli.found and not cli.accepts("-a", "untrusted"):
            approval = "on-request"  # 0.171.0's -a takes only on-request and never
        if approval == "granular" and allow_permissive:
            pass  # per-kind rules that no flag spells: Codex restores them by itself
        else:
            # `codex resume` restores each recorded setting by itself, loose ones included, so the
            # strict values are passed explicitly unless the person opted in for this launch.
            carry_or_override(b, approval, STRICT_APPROVALS, allow_permissive, "-a", "on-request", "on-request")
        carry_or_override(b, session.sandbox, STRICT_SANDBOXES, allow_permissive, "-s", "workspace-write",
                          "workspace-write")
        b.option("-C", session.cwd)
        b.plan.argv += ["--", session.id]  # after `--` the id is never an option
        return b.plan


APP = Codex()
