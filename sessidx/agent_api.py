"""What an agent may ask of sessidx (`sessidx mcp`) and what `sessidx export` writes: the
sessions, what was said where, one session's conversation, what resuming one would do.

Plain functions returning bounded, masked data (the MCP SDK is met only in mcp_server.py).
Every call about where sessions live and what they hold is in `Sessions`, the adapter at the
top (today: the index, the content search, the resume plan, the host code), so what answers
can change there, in one place; the tools below it use only sessidx's text helpers (masking,
dates, word matching). Nothing here runs a session: a plan is made and described, never carried out.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from sessidx import keys
from sessidx.config import Env
from sessidx.errors import SessidxError
from sessidx.model import Session
from sessidx.redact import mask
from sessidx.where import place_of

# The adapter: every call this module and export.py make to find sessions and read them -----------


@dataclass
class Found:
    """One search hit: the session, its score (higher is better), the masked snippet, and for a
    near answer what it matched instead of the words asked (`retries → retry`)."""

    session: Session
    score: float
    snippet: str
    near: str = ""


@dataclass
class Planned:
    """What resuming one session would do, as the picker's Enter would decide it."""

    key: str
    host: str | None
    folder: str | None
    argv: list[str]
    line: str | None  # the line for the user's shell (`cd -- DIR && ...`, or `ssh -t HOST -- ...`)
    shell: str
    refusal: str | None
    branch_recorded: str | None
    branch_current: str | None
    branch_differs: bool
    held_back: list[tuple[str, str]] = field(default_factory=list)  # (flag, why)
    warnings: list[str] = field(default_factory=list)


class Sessions:
    """The sessions here and on the SSH hosts, through the code the picker uses."""

    def __init__(self, env: Env, demo: bool = False) -> None:
        """`demo`: the bundled demo home when the machine has no sessions, as the picker and
        `list` show it (export); an agent is never shown it as this machine's."""
        self.env = env
        self.demo = demo
        self._local: list[Session] | None = None

    def local(self) -> list[Session]:
        """This machine's sessions, archived ones too, newest first (read once per call)."""
        if self._local is None:
            from sessidx.apps import present
            from sessidx.index import build, load

            self._local = (load(self.env) if self.demo else build(self.env, present(self.env))).sessions
        return self._local

    def hosts(self, names: list[str] | None) -> tuple[bool, list[Any]]:
        """(this machine too, the hosts) for a host filter: None is this machine and every host."""
        from sessidx.hosts import configured
        from sessidx.remote import chosen_hosts

        return (True, configured(self.env)[0]) if names is None else chosen_hosts(self.env, names)

    def sessions(self, names: list[str] | None = None) -> tuple[list[Session], list[str]]:
        """Every session of the machine and hosts `names` chooses, newest first, and a note for
        each host that did not answer. Hosts: their cached rows (what the picker shows first),
        unless named, then asked now (as `sessidx list --host`)."""
        from sessidx.hosts import cached_sessions, newest_first
        from sessidx.remote import refresh

        local, hosts = self.hosts(names)
        found = list(self.local()) if local else []
        notes: list[str] = []
        if names is None:
            found += cached_sessions(self.env)
        else:
            for heard in refresh(self.env, hosts):
                notes += [heard.note] if heard.note else []
                found += heard.sessions if heard.fresh else []
        return newest_first(found), notes

    def session(self, key: str) -> Session:
        """The session of a key the other answers gave (`app:id`, `@host/app:id`), or of a
        unique id prefix of this machine's."""
        if keys.on_host(key):
            return place_of(self.env, key).session(key)
        from sessidx.search import resolve

        return resolve(self.local(), key)  # read now: an agent's answer is never the cache's

    def plan(self, key: str, allow_permissive: bool = False) -> Planned:
        from sessidx.shells import detect_shell

        shell = detect_shell(None, self.env.vars)
        self.session(key)  # one a host sent, or this machine has: no ssh to a name made up
        p = place_of(self.env, key).plan(key, allow_permissive, fresh=True)
        return Planned(keys.host_key(p.host, p.app, p.id) if p.host else f"{p.app}:{p.id}", p.host, p.cwd, p.argv,
                       p.shell_line(shell) if p.cwd else None, shell, p.error,
                       p.branch_recorded, p.branch_current, p.branch_differs,
                       [(h.flag, h.reason) for h in p.held_back], list(p.warnings))

    def search(self, query: str, app: str | None, limit: int, since: int | None, until: int | None,
               names: list[str] | None = None) -> tuple[list[Found], list[str]]:
        """What was said: each host asked at once (its own content index, a thread each, as
        `sessidx search --host`), meanwhile this machine's index brought up to date and asked;
        best first, and a note for each host that failed."""
        from sessidx.remote import ask_hosts
        from sessidx.when import within

        local, hosts = self.hosts(names)
        notes: list[str] = []
        found, asked = ask_hosts(self.env, hosts, query, app, limit, lambda: (  # none: the demo home's
            self._search_here(query, app, limit, since, until, notes) if local and self.local() else []))
        for hits, note in asked:
            notes += [note] if note else []
            # the hosts are asked no dates: they are checked here
            found += [Found(s, score, mask(snippet), near) for score, s, snippet, near in hits
                      if within(s.mtime, since, until)]  # masked there, and here again: a host is hostile
        found.sort(key=lambda f: (-f.score, -f.session.mtime))
        return found, notes

    def _search_here(self, query: str, app: str | None, limit: int, since: int | None,
                     until: int | None, notes: list[str]) -> list[Found]:
        from sessidx.content import query as content_query
        from sessidx.content import store
        from sessidx.local import refresh_content, refresh_or_wait

        try:
            db = store.open_index(self.env)
            try:
                if note := refresh_or_wait(self.env, lambda: refresh_content(self.env, db), store.KEYSTROKE_WAIT)[1]:
                    notes.append(note)
                return [Found(h.session, -h.score, h.snippet, h.also)
                        for h in content_query.search(db, query, app, limit, since=since, until=until)]
            finally:
                db.close()
        except store.DatabaseError as exc:  # damaged, or a full disk: `sessidx search` makes it again
            raise SessidxError(f"the content index cannot be used here ({exc}): run `sessidx search` once") from None

    def said(self, key: str) -> tuple[Session, list[tuple[str, str]]]:
        """The session and its whole conversation, (role, text), role `user`, `assistant` or
        `tool` (a call's command or path, an output's gist), secrets masked."""
        session = self.session(key)
        if keys.on_host(key):
            return session, self._said_on_host(session)
        from sessidx.apps import app_named
        from sessidx.conversation import by_records, messages_from, transcript_of

        app = app_named(session.app)
        if app is None:
            raise SessidxError(f"no app {session.app!r}")
        path = transcript_of(app, session)
        said: list[tuple[str, str]] = []
        if by_records(app, path):
            said = [(role, text) for _, role, text in messages_from(app, path or "", 0)[0]]
        elif hasattr(app, "conversation"):
            try:
                said = list(app.conversation(session))
            except Exception as exc:  # a broken document: one line, the server goes on
                raise SessidxError(f"the conversation of {session.key} cannot be read ({type(exc).__name__})") from None
        return session, [(role, mask(text)) for role, text in said if isinstance(text, str) and text.strip()]

    def _said_on_host(self, session: Session) -> list[tuple[str, str]]:
        """The host's own `sessidx export --json` of the session (this version's code, shipped as
        for every host call), checked message by message: a host is hostile."""
        import json

        from sessidx.hosts import host_named
        from sessidx.remote import run_remote

        host = host_named(self.env, getattr(session, "host", ""))
        reply, note = run_remote(self.env, host, ["export", "--json", "--", f"{session.app}:{session.id}"])
        if note:
            raise SessidxError(note)
        try:
            doc = json.loads(reply.out[:HOST_EXPORT_CAP].decode("utf-8", "replace"))
        except ValueError:
            raise SessidxError(f"{host.name} sent no conversation for {session.key}") from None
        messages = doc.get("messages") if isinstance(doc, dict) else None
        if not isinstance(messages, list):
            raise SessidxError(f"{host.name} sent no conversation for {session.key}")
        return [(m["role"], mask(m["text"])) for m in messages[:HOST_MESSAGES_CAP] if isinstance(m, dict)
                and m.get("role") in ROLES and isinstance(m.get("text"), str)]


HOST_EXPORT_CAP = 64 * 1024 * 1024  # what is read of a host's export
HOST_MESSAGES_CAP = 100_000
ROLES = ("user", "assistant", "tool")

# The bounds of every answer ------------------------------------------------------------------------

QUERY_CAP = 1000  # characters of a query (content/query.py searches no more of one)
SEARCH_LIMIT, LIST_LIMIT = 50, 200  # the most sessions one answer names
TEXT_CAP = 300  # characters of a title, a folder, a snippet in a list
MESSAGE_CAP = 2000  # characters of one message shown
SHOW_CAP = 30_000  # characters of messages in one `show`
EXCHANGES_CAP = 20


def _cut(text: str | None, most: int = TEXT_CAP) -> str | None:
    if text is None:
        return None
    return text if len(text) <= most else text[:most - 1] + "…"


def when(mtime_ms: int) -> str:
    """A moment as ISO 8601 in local time with its offset: `2026-11-29T21:53:44+00:00`."""
    from datetime import datetime

    return datetime.fromtimestamp(mtime_ms / 1000).astimezone().isoformat(timespec="seconds")


def facts(session: Session) -> dict[str, Any]:
    """What an answer says of one session; `id` is what show and plan take."""
    return {"id": session.key, "app": session.app, "host": getattr(session, "host", None),
            "title": _cut(mask(session.title)) if session.title else None, "folder": _cut(session.cwd, 1000),
            "branch": _cut(session.branch), "model": _cut(session.model), "last_used": when(session.mtime),
            **({"archived": True} if session.archived else {})}


def _checked_app(app: str | None) -> str | None:
    from sessidx.apps import NAMES

    if app is not None and app not in NAMES:
        raise SessidxError(f"unknown app {app!r}: known apps are {', '.join(NAMES)}")
    return app


def _host_names(host: str | None) -> list[str] | None:
    return None if host is None else [host]


def _in_folder(folder: str | None) -> Any:
    """A test of a session's folder: `folder` as a path is that folder, below it, and (here)
    every worktree of its repository; as a bare name, any folder of that name in the path."""
    if not folder:
        return lambda s: True
    if "/" not in folder:
        return lambda s: bool(s.cwd) and folder in s.cwd.split("/")
    from sessidx.readers import git_common_dir

    top = os.path.expanduser(folder).rstrip("/") or "/"
    repository = git_common_dir(top)
    common: dict[str, str | None] = {}

    def holds(s: Session) -> bool:
        if not s.cwd:
            return False
        if s.cwd == top or s.cwd.startswith(top.rstrip("/") + "/"):
            return True
        if repository is None or hasattr(s, "host"):  # a host's folder is not this machine's
            return False
        if s.cwd not in common:
            common[s.cwd] = git_common_dir(s.cwd)
        return common[s.cwd] == repository

    return holds


def _dates(since: str | None, until: str | None) -> tuple[int | None, int | None]:
    from sessidx.when import bounds

    return bounds(since, until)


def _query(query: str) -> str:
    if not query.strip():
        raise SessidxError("the query is empty: give words that were said")
    if len(query) > QUERY_CAP:
        raise SessidxError(f"the query is {len(query):,} characters long: at most {QUERY_CAP:,}")
    return query


def _limit(limit: int, most: int) -> int:
    if not 1 <= limit <= most:
        raise SessidxError(f"limit must be from 1 to {most}, not {limit}")
    return limit


# The tools -----------------------------------------------------------------------------------------


def search(sessions: Sessions, query: str, app: str | None = None, folder: str | None = None,
           since: str | None = None, until: str | None = None, host: str | None = None,
           limit: int = 10) -> dict[str, Any]:
    """Sessions by what was said in them, best first, each with the snippet that matched."""
    query, app, limit = _query(query), _checked_app(app), _limit(limit, SEARCH_LIMIT)
    low, high = _dates(since, until)
    holds = _in_folder(folder)
    asked = limit if folder is None else max(limit * 4, SEARCH_LIMIT)  # the folder is chosen after
    found, notes = sessions.search(query, app, asked, low, high, _host_names(host))
    results = []
    for f in [f for f in found if holds(f.session)][:limit]:
        results.append({**facts(f.session), "snippet": _cut(f.snippet, 2 * TEXT_CAP), "score": round(f.score, 3),
                        **({"near": _cut(f.near, 200)} if f.near else {})})
    return {"query": query, "results": results, "notes": notes,
            **({} if results else {"note": "no session says that"})}


def list_sessions(sessions: Sessions, app: str | None = None, folder: str | None = None, since: str | None = None,
                  until: str | None = None, host: str | None = None, limit: int = 20,
                  archived: bool = False) -> dict[str, Any]:
    """Sessions, newest first."""
    from sessidx.when import within

    app, limit = _checked_app(app), _limit(limit, LIST_LIMIT)
    low, high = _dates(since, until)
    holds = _in_folder(folder)
    every, notes = sessions.sessions(_host_names(host))
    chosen = [s for s in every if (app is None or s.app == app) and (archived or not s.archived)
              and within(s.mtime, low, high) and holds(s)]
    return {"total": len(chosen), "results": [facts(s) for s in chosen[:limit]], "notes": notes}


def exchanges_of(said: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    """The conversation cut into exchanges: each a user prompt and what followed it (what came
    before the first prompt is an exchange of its own)."""
    parts: list[list[tuple[str, str]]] = []
    for message in said:
        if message[0] == "user" or not parts:
            parts.append([])
        parts[-1].append(message)
    return parts


def best_match(parts: list[list[tuple[str, str]]], words: list[str]) -> tuple[int, int] | None:
    """(exchange, message) of the message holding the most of `words`, the first of equals;
    None when none holds any."""
    from sessidx.content.snippets import find_word

    held = [(sum(find_word(w, text) >= 0 for w in words), -i, -j) for i, part in enumerate(parts)
            for j, (_, text) in enumerate(part)]
    best = max(held, default=None)
    return (-best[1], -best[2]) if best and best[0] else None


def show(sessions: Sessions, id: str, query: str | None = None, exchanges: int = 3) -> dict[str, Any]:
    """One session's conversation: its last `exchanges`, or those around the message that best
    matches `query`; each message and the whole bounded, secrets masked."""
    from sessidx.content.query import words_of
    from sessidx.content.snippets import snippet_of

    _limit(exchanges, EXCHANGES_CAP)
    words = words_of(_query(query)) if query is not None else []
    session, said = sessions.said(id)
    parts = exchanges_of(said)
    hit = best_match(parts, words) if words else None
    focus = hit[0] if hit else len(parts) - 1
    count = f"{min(exchanges, len(parts))} of {len(parts)} exchanges"
    note = f"{count}, around the best match of the query" if hit else f"the last {count}"
    if words and not hit:
        note = f"no message holds the query's words; {note}"
    start = max(0, min(focus - (exchanges - 1) // 2, len(parts) - exchanges))  # the focus in the middle
    messages: list[dict[str, Any]] = []
    for i, part in enumerate(parts[start:start + exchanges], start):
        for j, (role, text) in enumerate(part):
            if hit == (i, j) and len(text) > MESSAGE_CAP:  # the match itself is in what is shown of it
                text = snippet_of(text, words, MESSAGE_CAP)
            messages.append({"role": role, "text": _cut(text, MESSAGE_CAP), "exchange": i + 1,
                             **({"match": True} if hit == (i, j) else {})})
    left_out = 0
    while sum(len(m["text"]) for m in messages) > SHOW_CAP and len(messages) > 1:
        # the message farthest from the focus goes: the oldest for the last exchanges
        first, last = (abs(messages[k]["exchange"] - 1 - focus) for k in (0, -1))
        messages.pop(0 if first >= last else -1)
        left_out += 1
    return {"session": facts(session), "shown": note, "messages": messages,
            **({"left_out": f"{left_out} messages, to keep the answer under {SHOW_CAP:,} characters"}
               if left_out else {})}


def plan(sessions: Sessions, id: str, allow_permissive: bool = False) -> dict[str, Any]:
    """What resuming the session would do, as the picker's Enter decides it; never run."""
    p = sessions.plan(id, allow_permissive)
    if p.refusal:
        verdict = f"refused: {p.refusal}"
    elif p.branch_differs:
        verdict = (f"asks first: the session was on branch {p.branch_recorded!r}, the folder is now on "
                   f"{p.branch_current!r}")
    else:
        verdict = "would resume"
    return {"id": p.key, "host": p.host, "verdict": verdict, "folder": p.folder, "argv": p.argv,
            "shell": p.shell, "line": p.line, "refusal": p.refusal,
            "branch": {"recorded": p.branch_recorded, "current": p.branch_current, "differs": p.branch_differs},
            "held_back": [{"flag": flag, "why": why} for flag, why in p.held_back], "warnings": p.warnings,
            "note": "sessidx made this plan and ran nothing: the line is for the person to run (or the picker's Enter)"}


def now_iso() -> str:
    return when(int(time.time() * 1000))
