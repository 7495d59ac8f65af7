"""Claude Code: `~/.claude/projects/<escaped cwd>/<session id>.jsonl` (`CLAUDE_CONFIG_DIR` moves `~/.claude`).

The folder name is the cwd with every non-`[A-Za-z0-9]` UTF-16 unit turned into `-`, cut to
200 characters plus `-<hash>` on 2.1.x. It is lossy (`my.app` and `my-app` share a folder), so
the cwd comes from the records; the session's own cwd is the one whose escaped form names
its folder (a resume from elsewhere appends records with another cwd).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from functools import partial

from sessidx.apps.base import LOOSE_REASON, AppPlan, ArgvBuilder, CliHelp, Source, one, source_for_file, stamp_or_none
from sessidx.config import Env
from sessidx.model import Session
from sessidx.readers import Record, files, read_head_tail, read_small_json, subdirs, text

STRICT_MODES = {"default", "plan"}  # at least as strict as the CLI's default
_NON_ALNUM = re.compile(r"[^A-Za-z0-9]")
_FOLDER_CUT = 200
UNKNOWN_BRANCHES = {"", "HEAD"}  # outside git, detached, or a non-ASCII name


def escape_cwd(cwd: str) -> str:
    """Claude's folder name for a cwd, before the 200-character cut."""
    return _NON_ALNUM.sub(lambda m: "-" * (2 if ord(m.group()) > 0xFFFF else 1), cwd)


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


def _first_prompt(records: list[Record]) -> str | None:
    for r in records:
        if r.get("type") != "user" or r.get("isSidechain") is True:
            continue
        prompt = _message_text(r)
        if prompt and not prompt.lstrip().startswith("<"):
            return prompt
    return None


def _newest(records: Iterator[Record], rtype: str, key: str) -> str | None:
    for r in records:
        if r.get("type") == rtype and (value := text(r.get(key))):
            return value
    return None


def parse_transcript(path: str, folder: str, sidecar: str) -> Session | None:
    """One session from one transcript, or None if it holds no conversation."""
    ht = read_head_tail(path)
    if ht is None:
        return None
    records = ht.all()
    conversation = [r for r in records if r.get("type") in ("user", "assistant")]
    if not conversation:
        return None  # 1.0.x summary-only files, empty files, junk

    cwds = [c for r in records if (c := text(r.get("cwd")))]
    cwd = next((c for c in cwds if names_folder(c, folder)), cwds[0] if cwds else None)

    branch = None
    for r in ht.newest():
        if r.get("cwd") == cwd and isinstance(r.get("gitBranch"), str):
            branch = r["gitBranch"]
            break
    if branch in UNKNOWN_BRANCHES:
        branch = None

    model = effort = None
    for r in ht.newest():
        if r.get("type") == "assistant":
            message = r.get("message")
            model = text(r.get("requestedModel")) or (text(message.get("model")) if isinstance(message, dict) else None)
            if model == "<synthetic>":
                continue
            effort = text(r.get("effort"))
            break

    mode = None
    for r in ht.newest():
        if r.get("type") in ("user", "permission-mode") and (mode := text(r.get("permissionMode"))):
            break
    if mode == "manual":
        mode = "default"

    sidecar_doc = read_small_json(sidecar)
    sidecar_title = text(sidecar_doc.get("customTitle")) if isinstance(sidecar_doc, dict) else None
    title = (
        sidecar_title
        or _newest(ht.newest(), "custom-title", "customTitle")
        or _newest(ht.newest(), "ai-title", "aiTitle")
        or _newest(ht.newest(), "last-prompt", "lastPrompt")
        or _newest(ht.newest(), "summary", "summary")
        or _first_prompt(ht.head)
    )
    origin = next((e for r in conversation if (e := text(r.get("entrypoint")))), None)
    try:
        mtime = int(os.stat(path).st_mtime * 1000)
    except OSError:
        return None
    return Session(
        app="claude",
        id=os.path.basename(path)[: -len(".jsonl")],
        cwd=cwd,
        branch=branch,
        title=title,
        mtime=mtime,
        bytes=ht.size,
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
    help_args: tuple[str, ...] = ("--help",)

    def projects_dir(self, env: Env) -> str:
        return str(env.path("CLAUDE_CONFIG_DIR", ".claude") / "projects")

    def sources(self, env: Env) -> Iterator[Source]:
        for project in subdirs(self.projects_dir(env)):
            for entry in files(project.path, ".jsonl"):
                if entry.name.startswith("agent-"):
                    continue  # sub-agent transcripts: nobody resumes them
                sidecar = os.path.join(project.path, entry.name[: -len(".jsonl")], "custom-title.json")
                sidecar_stamp = stamp_or_none(sidecar)
                load = partial(_load_one, entry.path, project.name, sidecar)
                source = source_for_file("claude", entry.path, sidecar_stamp, load)
                if source is not None:
                    yield source

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool) -> AppPlan:
        b = ArgvBuilder(cli, self.program, "--resume", session.id)
        b.option("--model", session.model)
        b.option("--effort", session.effort)
        mode = session.approval
        if mode is None or mode in STRICT_MODES or allow_permissive:
            b.option("--permission-mode", mode or "default")
        else:
            # The TUI restores the recorded mode by itself: holding it back means overriding it.
            b.hold_back("--permission-mode", mode, LOOSE_REASON)
            b.option("--permission-mode", "default")
        return b.plan


APP = Claude()
