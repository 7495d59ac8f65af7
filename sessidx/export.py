"""`sessidx export ID`: one session as a document to read or hand on, Markdown or JSON: its
title, app, folder, branch, model and dates, then the conversation, tool calls and outputs as
the gists the index keeps, every secret masked. Alt-E in the picker writes one to a file.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from sessidx import render
from sessidx.agent_api import Sessions, facts, now_iso
from sessidx.config import Env
from sessidx.errors import ExitCode, SessidxError
from sessidx.redact import mask

LABELS = {"user": "You", "assistant": "Agent", "tool": "Tool"}
# what a document keeps of the text: no terminal escapes or other control characters, lines and tabs stay
_CONTROL = {c: None for c in (*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F)} | {0x0D: None}


def document(sessions: Sessions, key: str) -> dict[str, Any]:
    """The session's facts and its whole conversation, masked."""
    session, said = sessions.said(key)
    head = facts(session)
    return {**head, "title": mask(session.title) if session.title else None, "folder": session.cwd,
            "session_id": session.id, "effort": session.effort, "approval": session.approval,
            "exported": now_iso(), "messages": [{"role": role, "text": text} for role, text in said]}


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in `text`."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _plain(text: str | None) -> str:
    return (text or "").translate(_CONTROL)


def markdown(doc: dict[str, Any]) -> str:
    """The document as Markdown: a table of its facts, then each message under its speaker;
    a tool's call or output in a code block (a fence no text inside can close)."""
    title = " ".join(_plain(doc.get("title")).split()) or f"{doc['app']} session {doc['session_id']}"
    rows = [("app", doc["app"]), ("session", doc["id"]), ("host", doc.get("host")), ("folder", doc.get("folder")),
            ("branch", doc.get("branch")), ("model", doc.get("model")), ("effort", doc.get("effort")),
            ("approval", doc.get("approval")), ("last used", doc.get("last_used")), ("exported", doc.get("exported"))]
    lines = [f"# {title}", "", "| | |", "|---|---|"]
    lines += [f"| {name} | {_cell(value)} |" for name, value in rows if value]
    lines += ["", "## Conversation", ""]
    if not doc["messages"]:
        lines += ["(nothing was said, or it cannot be read)", ""]
    for message in doc["messages"]:
        text = _plain(message["text"]).strip("\n")
        lines.append(f"### {LABELS.get(message['role'], message['role'])}")
        lines.append("")
        if message["role"] == "tool":
            fence = _fence(text)
            lines += [fence, text, fence]
        else:
            lines.append(text)
        lines.append("")
    return "\n".join(lines)


def _cell(value: object) -> str:
    """A table cell: one line, its pipes escaped, in code when it is a path or an id."""
    text = " ".join(_plain(str(value)).split()).replace("|", "\\|")
    return f"`{text}`" if "`" not in text and ("/" in text or ":" in text) else text


def render_doc(doc: dict[str, Any], as_json: bool) -> str:
    return json.dumps(doc, ensure_ascii=False, indent=2) if as_json else markdown(doc)


def export(env: Env, out: Any, ident: str, as_json: bool = False, output: str | None = None) -> int:
    """`sessidx export ID [--json] [-o FILE]`."""
    text = render_doc(document(Sessions(env, demo=True), ident), as_json)
    if output is None or output == "-":
        out(text)
        return ExitCode.OK
    try:
        _write(output, text + "\n", exclusive=False)
    except OSError as exc:
        raise SessidxError(f"cannot write {output}: {exc.strerror or exc}") from None
    render.warn(f"exported to {output}")
    return ExitCode.OK


def to_file(env: Env, out: Any, ident: str | None) -> int:
    """Alt-E in the picker: the selected session as Markdown in a new file in the current folder
    (never one already there); the header then says where. Its output is fzf's action."""
    if not ident:
        out("change-header:no session to export")
        return ExitCode.OK
    try:
        doc = document(Sessions(env, demo=True), ident)
        stem = f"sessidx-{doc['app']}-{''.join(c for c in doc['session_id'] if c.isalnum() or c in '-_')[:36]}"
        text = markdown(doc) + "\n"
        for n in range(1, 100):
            path = os.path.abspath(f"{stem}.md" if n == 1 else f"{stem}-{n}.md")
            try:
                _write(path, text, exclusive=True)
                break
            except FileExistsError:
                continue
        else:
            raise SessidxError(f"{stem}.md and 98 more are there already")
        said = f"exported to {render.tilde(path)}"
    except (SessidxError, OSError) as exc:
        said = f"not exported: {exc}"
    out(f"change-header:{render.clean(said)}")  # the `:` form: a path may hold a parenthesis
    return ExitCode.OK


def _write(path: str, text: str, exclusive: bool) -> None:
    # O_EXCL: a file (or a link) already there is never written through
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    fd = os.open(path, flags, 0o644)
    with open(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(text)
