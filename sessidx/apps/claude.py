"""Claude Code: `~/.claude/projects/<escaped cwd>/<session id>.jsonl` (`CLAUDE_CONFIG_DIR` moves `~/.claude`).

The folder name is the cwd with every non-`[A-Za-z0-9]` UTF-16 unit turned into `-`, cut to
200 characters plus `-<hash>` on 2.1.x. It is lossy (`my.app` and `my-app` share a folder), so
the cwd comes from the records; the session's own cwd is the one whose escaped form names
its folder (a resume from elsewhere appends records with another cwd).
"""

from __future__ import annotations

import os

from sessidx.apps.base import (
    UUID,
    AppPlan,
    ArgvBuilder,
    Source,
    carry_or_override,
    json_markers,
    one,
    said_in,
    stamp_or_none,
    unknown_record_types,
)
from sessidx.model import Session
from sessidx.readers import (
    Record,
    Transcript,
    is_wrapper,
    open_transcript,
    read_small_json,
    stamped_files,
    subdirs,
    text,
)

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from sessidx.apps.base import CliHelp
    from sessidx.config import Env

# At least as strict as every build's default; `dontAsk` denies whatever was not allowed
# beforehand instead of asking (2.1.332's own words: "Claude Code cannot ask the user").
STRICT_MODES = {"default", "plan", "dontAsk"}
AUTO_DEFAULT_SINCE = (2, 1, 332)  # the first build seen to default to `auto`
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_FOLDER_CUT = 200
UNKNOWN_BRANCHES = {"", "HEAD"}  # outside git, detached, or a non-ASCII name
CONVERSATION = ("user", "assistant")
# Every record type the real 2.1.332 (and the legacy home's older build) wrote in fixtures/realdata:
# a type outside these is one the plans and the listing were never proven against (`sessidx doctor`)
KNOWN_RECORDS = frozenset({
    "user", "assistant", "system", "summary", "attachment", "permission-mode", "mode", "custom-title", "ai-title",
    "agent-name", "last-prompt", "queue-operation", "file-history-snapshot", "tools-used", "cost-state", "atis-latch",
    "api-request", "api-request-blob", "api-request-shape",
})
_NO_SIDECAR = (None, None)


def escape_cwd(cwd: str) -> str:
    """Claude's folder name for a cwd, before the 200-character cut (each worked out once: the
    sessions of one folder share it)."""
    escaped = _ESCAPED.get(cwd)
    if escaped is None:  # every character but [A-Za-z0-9] a dash, two past U+FFFF (not `re`: see readers.type_marks)
        escaped = "".join(c if c in _ALNUM else "--" if ord(c) > 0xFFFF else "-" for c in cwd)
        if len(_ESCAPED) < 10_000:
            _ESCAPED[cwd] = escaped
    return escaped


_ESCAPED: dict[str, str] = {}


def names_folder(cwd: str, folder: str) -> bool:
    escaped = escape_cwd(cwd)
    if folder == escaped:
        return True
    return len(escaped) > _FOLDER_CUT and folder.startswith(escaped[:_FOLDER_CUT] + "-")


def _message_text(record: Record) -> str | None:
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                return text(block.get("text"))
    return None


def _is_real_prompt(record: Record) -> str | None:
    """The prompt of a user record the person typed: not a sidechain, not a `<...>` wrapper."""
    if record.get("type") != "user" or record.get("isSidechain") is True:
        return None
    prompt = _message_text(record)
    return prompt if prompt and not is_wrapper(prompt) else None


def _newest_text(t: Transcript, rtype: str, key: str) -> str | None:
    return next((value for r in t.newest(rtype) if (value := text(r.get(key)))), None)


def parse_transcript(path: str, folder: str, sidecar: str) -> Session | None:
    """One session from one transcript, or None if it holds no conversation."""
    t = open_transcript(path)
    if t is None:
        return None
    with t:
        return _parse(t, path, folder, sidecar)


def _parse(t: Transcript, path: str, folder: str, sidecar: str) -> Session | None:
    # The head, in order and only as far as needed: the session's own cwd, origin, first prompt.
    cwd = first_cwd = origin = first_prompt = None
    for r in t.head():
        if (c := text(r.get("cwd"))) and cwd is None:
            first_cwd = first_cwd or c
            if names_folder(c, folder):
                cwd = c
        if origin is None and r.get("type") in CONVERSATION:
            origin = text(r.get("entrypoint"))
        first_prompt = first_prompt or _is_real_prompt(r)
        if cwd and origin and first_prompt:
            break
    cwd = cwd or first_cwd

    newest_turn = next(t.newest(*CONVERSATION), None)
    if newest_turn is None:
        return None  # 1.0.x summary-only files, empty files, junk: no conversation

    branch = next((r["gitBranch"] for r in t.newest(*CONVERSATION, having="gitBranch")
                   if r.get("cwd") == cwd and isinstance(r.get("gitBranch"), str)), None)
    if branch in UNKNOWN_BRANCHES:
        branch = None

    model = effort = None
    for r in t.newest("assistant"):
        message = r.get("message")
        model = text(r.get("requestedModel")) or (text(message.get("model")) if isinstance(message, dict) else None)
        if model and model != "<synthetic>":
            effort = text(r.get("effort"))
            break
        model = None

    mode = next((m for r in t.newest("user", "permission-mode", having="permissionMode")
                 if (m := text(r.get("permissionMode")))), None)
    if mode == "manual":
        mode = "default"

    sidecar_doc = read_small_json(sidecar) if sidecar else None
    title = (
        (text(sidecar_doc.get("customTitle")) if isinstance(sidecar_doc, dict) else None)
        or _newest_text(t, "custom-title", "customTitle")
        or _newest_text(t, "ai-title", "aiTitle")
        or _newest_text(t, "last-prompt", "lastPrompt")
        or _newest_text(t, "summary", "summary")
        or first_prompt
    )
    mtime = t.mtime_ms
    if mtime is None:
        return None
    return Session(
        app="claude",
        id=os.path.basename(path)[: -len(".jsonl")],
        cwd=cwd,
        branch=branch,
        title=title,
        mtime=mtime,
        bytes=t.size,
        model=model,
        effort=effort,
        approval=mode,
        sandbox=None,
        path=path,
        origin=origin,
    )


def _load_one(path: str, folder: str, sidecar: str) -> list[Session]:
    return one(parse_transcript(path, folder, sidecar))


class Claude:
    name = "claude"
    program = "claude"
    proven_on = "2.1.332"  # the CLI version the plans were proven on (make conformance)
    home_vars: tuple[str, ...] = ("CLAUDE_CONFIG_DIR",)
    home_dirs: tuple[str, ...] = (".claude",)
    id_pattern = UUID
    refusal_fields = ()  # its plan refuses on the CLI alone (base.App)
    help_args: tuple[str, ...] = ("--help",)

    def projects_dir(self, env: Env) -> str:
        return os.path.join(env.path("CLAUDE_CONFIG_DIR", ".claude"), "projects")

    def sources(self, env: Env) -> Iterator[Source]:
        # Runs on every key press over every transcript: one stat per file, little else.
        for project in subdirs(self.projects_dir(env)):
            # sub-agent transcripts (`agent-*`) are skipped: nobody resumes them
            transcripts, folders = stamped_files(project.path, ".jsonl", skip_prefix="agent-")
            prefix, folder_name = project.path + os.sep, project.name
            if not folders:  # most folders: no title sidecar to look for, and one list is cheaper than a yield each
                yield from [Source(path, st + _NO_SIDECAR, _load_one, path, folder_name, "")
                            for name, st in transcripts for path in (prefix + name,)]
                continue
            for name, st in transcripts:
                path = prefix + name
                stem = name[:-6]  # len(".jsonl")
                if stem in folders:  # `<id>/custom-title.json` is looked at only when `<id>/` exists
                    sidecar = f"{prefix}{stem}{os.sep}custom-title.json"
                    yield Source(path, st + stamp_or_none(sidecar), _load_one, path, folder_name, sidecar)
                else:
                    yield Source(path, st + _NO_SIDECAR, _load_one, path, folder_name, "")

    said_markers = json_markers("type", "user", "assistant")

    said_skip = (b'"tool_result"',)

    def unknown_records(self, session: Session) -> dict[str, int]:
        return unknown_record_types(session.path, KNOWN_RECORDS)

    def said(self, record: dict[str, Any]) -> list[tuple[str, str]]:
        message = record.get("message")
        if record.get("type") not in CONVERSATION or record.get("isMeta") or not isinstance(message, dict):
            return []
        return said_in(record["type"], message.get("content"))

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        b = ArgvBuilder(cli, self.program, f"--resume={session.id}")  # `=`: never an option
        b.option("--model", session.model)
        b.option("--effort", session.effort)
        # 2.1.332 says "Auto mode is now Claude Code's default permission mode"; older builds
        # (and a version that cannot be learnt) default to `default`.
        auto_is_default = cli.version_at_least(*AUTO_DEFAULT_SINCE) is True
        strict = STRICT_MODES | {"auto"} if auto_is_default else STRICT_MODES
        # The TUI restores the recorded mode by itself: holding it back means overriding it.
        carry_or_override(b, session.approval, strict, allow_permissive, "--permission-mode", "default",
                          "auto" if auto_is_default else "default")
        if allow_permissive and session.approval == "bypassPermissions" and _is_root():
            b.plan.warnings.append("as root, claude refuses bypassPermissions outside a sandbox (IS_SANDBOX=1)")
        return b.plan


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


APP = Claude()
