"""Gemini CLI: `~/.gemini/tmp/<slug>/chats/session-*.jsonl` (`GEMINI_CLI_HOME` moves `~`).

The folder is `tmp/<slug>/.project_root`, else `projects.json` (cwd -> slug), else, for the
pre-0.29 layout where the slug is sha256 of the cwd, the cwd in `projects.json` whose hash is
the file's `projectHash`. Records: a metadata line (`sessionId`, `startTime`, `lastUpdated`,
`kind`), `{"$set": {...}}` updates (`summary`, `lastUpdated`), and messages (`type` user or
gemini, `model` on replies). Older builds wrote one `session-*.json` document instead.
Branch and approval mode are not stored. A file holding only metadata and `$set` records is
the startup file a resume leaves behind (0.61.0), not a session. Resuming is refused while
Gemini's session cleanup is on (see `cleanup_enabled`): that cleanup deletes a resumed session
on the next plain start.
"""

from __future__ import annotations

import os

from sessidx.apps.base import (
    UUID,
    AppPlan,
    ArgvBuilder,
    Source,
    document_messages,
    json_markers,
    one,
    output_said,
    said_in,
    stamp_or_none,
    tool_words,
)
from sessidx.model import Session
from sessidx.readers import (
    Record,
    files,
    is_wrapper,
    iso_ms,
    joined_text,
    mtime_ms,
    open_transcript,
    read_small_json,
    read_small_text,
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

CLEANUP_HAZARD = (
    "Gemini CLI (0.61.0 seen) writes a second, startup-only file when it resumes a session in a later "
    "minute than the session began, and its session cleanup (general.sessionRetention, on by default) "
    "then deletes both files on the next plain `gemini` start here. Set "
    '"general": {"sessionRetention": {"enabled": false}} in ~/.gemini/settings.json and sessidx resumes it; '
    "or run the command below yourself (Ctrl-Y copies it)"
)


def _user_text(record: Record) -> str | None:
    content = record.get("content")
    if isinstance(content, str):
        return content
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and (t := text(part.get("text"))):
            return t
    return None


def _prompt(record: Record) -> str | None:
    if record.get("type") != "user":
        return None
    prompt = _user_text(record)
    return prompt if prompt and not is_wrapper(prompt) else None


_IGNORED_PREFIXES = ("/", "?", "<session_context>", "<hook_context>")  # 0.61.0's isIgnoredUserContent


def is_resumable(message: Any) -> bool:
    """Gemini's own test (0.61.0 `isResumableMessageRecord`): a user message with real content,
    or a reply with text, tool calls or thoughts. A file with none is deleted by its cleanup."""
    if not isinstance(message, dict):
        return False
    said = joined_text(message.get("content")).strip()
    if message.get("type") == "user":
        return bool(said) and not said.startswith(_IGNORED_PREFIXES)
    if message.get("type") == "gemini":
        return bool(said or message.get("toolCalls") or message.get("thoughts"))
    return False


def _session(path: str, cwd: str | None, meta: Record, title: str | None, model: str | None,
             updated: int | None, size: int) -> Session | None:
    sid = text(meta.get("sessionId"))
    if sid is None or meta.get("kind") == "subagent":
        return None
    updated = updated or mtime_ms(path)
    if updated is None:
        return None
    return Session(app="gemini", id=sid, cwd=cwd, branch=None, title=title, mtime=updated, bytes=size,
                   model=model, effort=None, approval=None, sandbox=None, path=path, origin=None)


def parse_jsonl(path: str, cwd: str | None) -> Session | None:
    t = open_transcript(path)
    if t is None:
        return None
    with t:
        records = t.all()  # `$set` updates carry no type to search for: parse both ends
        size = t.size
    meta = next((r for r in records if "sessionId" in r and "$set" not in r), None)
    updates = [r["$set"] for r in records if isinstance(r.get("$set"), dict)]
    listed = [m for u in updates if isinstance(u.get("messages"), list) for m in u["messages"]]
    if meta is None or not any(map(is_resumable, [*records, *listed])):
        return None  # nothing resumable: the startup file a resume leaves, not a session
    summary = next((v for u in reversed(updates) if (v := text(u.get("summary")))), None)
    title = summary or next((p for r in records if (p := _prompt(r))), None)
    model = next((m for r in reversed(records) if r.get("type") == "gemini" and (m := text(r.get("model")))), None)
    times = [ms for r in [*records, *updates] if (ms := iso_ms(r.get("lastUpdated")))]
    return _session(path, cwd, meta, title, model, max(times, default=None), size)


def parse_json(path: str, cwd: str | None) -> Session | None:
    """A pre-JSONL session document."""
    doc = read_small_json(path)
    if not isinstance(doc, dict):
        return None
    messages = [m for m in doc.get("messages") or [] if isinstance(m, dict)] if isinstance(
        doc.get("messages"), list) else []
    if not any(map(is_resumable, messages)):
        return None
    title = text(doc.get("summary")) or next((p for m in messages if (p := _prompt(m))), None)
    model = next((mm for m in reversed(messages) if m.get("type") == "gemini" and (mm := text(m.get("model")))), None)
    size = (stamp(path) or (0, 0))[0]
    return _session(path, cwd, doc, title, model, iso_ms(doc.get("lastUpdated")), size)


class Gemini:
    name = "gemini"
    program = "gemini"
    proven_on = "0.61.0"  # the CLI version the plans were proven on (make conformance)
    home_vars: tuple[str, ...] = ("GEMINI_CLI_HOME", "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
                                  "GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
    home_dirs: tuple[str, ...] = (".gemini",)
    id_pattern = UUID
    refusal_fields = ("cwd",)  # the folder's cleanup settings (base.App)
    help_args: tuple[str, ...] = ("--help",)

    def home(self, env: Env) -> str:
        return os.path.join(env.get("GEMINI_CLI_HOME") or env.home, ".gemini")

    def _folders(self, home: str) -> dict[str, str]:
        """slug -> cwd from projects.json, plus sha256(cwd) -> cwd for the old hashed slugs."""
        import hashlib  # here, not at the top: it loads OpenSSL, a cost on every key press

        doc = read_small_json(os.path.join(home, "projects.json"))
        projects = doc.get("projects") if isinstance(doc, dict) else None
        found: dict[str, str] = {}
        for cwd, slug in (projects.items() if isinstance(projects, dict) else []):
            if isinstance(cwd, str):
                if isinstance(slug, str):
                    found[slug] = cwd
                found[hashlib.sha256(cwd.encode()).hexdigest()] = cwd
        return found

    def sources(self, env: Env) -> Iterator[Source]:
        home = self.home(env)
        folders: dict[str, str] | None = None
        index_stamp = stamp_or_none(os.path.join(home, "projects.json"))
        for project in subdirs(os.path.join(home, "tmp")):
            root_file = os.path.join(project.path, ".project_root")
            cwd = (read_small_text(root_file) or "").strip() or None
            if cwd is None:
                if folders is None:
                    folders = self._folders(home)
                cwd = folders.get(project.name)
            chats = os.path.join(project.path, "chats")
            for suffix, parse in ((".jsonl", parse_jsonl), (".json", parse_json)):
                for entry in files(chats, suffix):  # only files: sub-folders of chats/ are sub-agents'
                    if not entry.name.startswith("session-"):
                        continue
                    st = stamp(entry.path)
                    if st is not None:
                        yield Source(f"gemini:{entry.path}", st + index_stamp + (cwd,),
                                     _load, parse, entry.path, cwd)

    def conversation(self, session: Session) -> list[tuple[str, str]]:
        """Builds before 0.29 kept one `session-*.json` document; `messages` as in the JSONL."""
        said = []
        for record in document_messages(session.path, "messages"):
            said += self.said(record)
        return said

    said_markers = json_markers("type", "user", "gemini")

    def said(self, record: dict[str, Any]) -> list[tuple[str, str]]:
        said = said_in(record.get("type"), record.get("content"))  # `gemini` is the model's own role
        calls = record.get("toolCalls")
        if record.get("type") == "gemini" and isinstance(calls, list):
            for call in calls:
                if isinstance(call, dict):
                    said += [("tool", w) for w in tool_words(call.get("args"))] + _call_output(call)
        return said

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        # Only ever the interactive resume: never `-p`.
        b = ArgvBuilder(cli, self.program, "--resume", session.id)
        b.option("-m", session.model)
        if cleanup_enabled(self.home(env), session.cwd, env) is not False:
            b.refuse(CLEANUP_HAZARD, "cleanup_deletes")
        return b.plan


def _call_output(call: dict[str, Any]) -> list[tuple[str, str]]:
    """A tool call's output as Gemini records it beside the call: `resultDisplay` (what the user
    saw: the output, or the error), else the `functionResponse` parts sent back to the model."""
    shown = call.get("resultDisplay")
    if isinstance(shown, str) and shown.strip():
        return output_said(shown)
    responses = [p.get("functionResponse") for p in call.get("result") or [] if isinstance(p, dict)]
    return [said for r in responses if isinstance(r, dict) for said in output_said(r.get("response"))]


def cleanup_enabled(home: str, cwd: str | None, env: Env) -> bool | None:
    """`general.sessionRetention.enabled` as Gemini reads it: system settings over the folder's
    `.gemini/settings.json` over the user's over the system defaults; on when none says.
    Settings are read, never written; one that cannot be parsed says nothing."""
    system = env.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH") or "/etc/gemini-cli/settings.json"
    layers = [
        system,
        os.path.join(cwd, ".gemini", "settings.json") if cwd else None,
        os.path.join(home, "settings.json"),
        env.get("GEMINI_CLI_SYSTEM_DEFAULTS_PATH") or os.path.join(os.path.dirname(system), "system-defaults.json"),
    ]
    for path in layers:
        doc = read_small_json(path) if path else None
        general = doc.get("general") if isinstance(doc, dict) else None
        retention = general.get("sessionRetention") if isinstance(general, dict) else None
        enabled = retention.get("enabled") if isinstance(retention, dict) else None
        if isinstance(enabled, bool):
            return enabled
    return True


def _load(parse: Any, path: str, cwd: str | None) -> list[Session]:
    return one(parse(path, cwd))


APP = Gemini()
