"""`sessidx mcp`: an MCP server over stdio (the official Python SDK, `pip install 'sessidx[mcp]'`)
whose four read-only tools let an agent find a past session, read it, and see what resuming it
would do. The tools are agent_api's plain functions; this module is only the SDK's wiring.

Loaded by `sessidx mcp` alone: the SDK (pydantic, anyio, starlette, ...) never loads on a key
press or in any other command. stdout is the protocol's: nothing else may print there.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from sessidx import __version__, agent_api
from sessidx.agent_api import EXCHANGES_CAP, LIST_LIMIT, QUERY_CAP, SEARCH_LIMIT, Sessions
from sessidx.config import Env
from sessidx.errors import ExitCode, SessidxError

RESULT_CAP = 64 * 1024  # characters of one tool's answer, whatever it holds

INSTRUCTIONS = (
    "sessidx knows every coding-agent session on this machine (Claude Code, Codex, Gemini CLI and 22 more) "
    "and on the SSH hosts it is told of. `search` finds sessions by what was said in them; `list` names them "
    "newest first; `show` reads one's conversation; `plan` says what resuming it would do. Nothing is ever run.")

App = Annotated[str | None, Field(description="only this app's sessions: claude, codex, gemini, ...")]
Folder = Annotated[str | None, Field(
    description="only sessions in this folder: a path (the folder, below it, and its repository's worktrees) "
                "or a folder name (any folder of that name)", max_length=4096)]
Since = Annotated[str | None, Field(description="only sessions used since: 30m, 12h, 2d, 1w, 3mo, 1y, a date "
                                                "(2026-11-20), today or yesterday", max_length=40)]
Until = Annotated[str | None, Field(description="only sessions last used before this (a date: up to its end)",
                                    max_length=40)]
Host = Annotated[str | None, Field(description="only this SSH host's sessions, `local` for this machine's, "
                                               "`all`; by default this machine and every host", max_length=200)]
Id = Annotated[str, Field(description="a session's `id` as search or list gave it (app:id, @host/app:id), "
                                      "or a unique prefix of an id", min_length=1, max_length=600)]
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def _answer(value: dict[str, Any]) -> str:
    """One JSON line, under RESULT_CAP: the longest lists are shortened until it fits."""
    text = json.dumps(value, ensure_ascii=False)
    while len(text) > RESULT_CAP:
        longest = max((k for k, v in value.items() if isinstance(v, list) and v), key=lambda k: len(value[k]),
                      default=None)
        if longest is None:
            raise ToolError(f"the answer is over {RESULT_CAP:,} characters")
        value = {**value, longest: value[longest][:len(value[longest]) // 2 or 0],
                 "cut": f"shortened to stay under {RESULT_CAP:,} characters"}
        text = json.dumps(value, ensure_ascii=False)
    return text


def _one_line(name: str, error: BaseException) -> str:
    """A tool error as one clear line: pydantic's report of wrong arguments says, per field,
    what is wrong (without the value given, which may be 100 KB)."""
    cause = error.__cause__
    if isinstance(cause, ValidationError):
        wrong = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in cause.errors())
        return f"Error executing tool {name}: wrong arguments: {wrong}"
    return " ".join(str(error).split())


class Server(MCPServer[Any]):
    """MCPServer whose tool errors are one line (the SDK's wrong-argument ones are many)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            return CallToolResult(content=[TextContent(type="text", text=_one_line(name, exc))], is_error=True)


def server(env: Env) -> Server:
    """The server and its four tools, each answering from a fresh look at the sessions."""
    mcp = Server("sessidx", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    def answer(make: Callable[[Sessions], dict[str, Any]]) -> str:
        try:
            return _answer(make(Sessions(env)))
        except SessidxError as exc:
            raise ToolError(str(exc)) from None

    @mcp.tool(annotations=READ_ONLY, structured_output=False)
    def search(query: Annotated[str, Field(description='words that were said, all of them; "a phrase" in quotes',
                                           max_length=QUERY_CAP)],
               app: App = None, folder: Folder = None, since: Since = None, until: Until = None, host: Host = None,
               limit: Annotated[int, Field(ge=1, le=SEARCH_LIMIT)] = 10) -> str:
        """Find past sessions by what was said in them (prompts, replies, tool commands and the errors they
        hit), best first. Each result has the snippet that matched; `near` marks a near answer (another form or
        a typo of a word asked, e.g. `retries → retry`)."""
        return answer(lambda s: agent_api.search(s, query, app, folder, since, until, host, limit))

    @mcp.tool(name="list", annotations=READ_ONLY, structured_output=False)
    def list_(app: App = None, folder: Folder = None, since: Since = None, until: Until = None, host: Host = None,
              limit: Annotated[int, Field(ge=1, le=LIST_LIMIT)] = 20,
              archived: Annotated[bool, Field(description="include archived sessions")] = False) -> str:
        """List sessions, newest first, with their folder, branch, model and when they were last used."""
        return answer(lambda s: agent_api.list_sessions(s, app, folder, since, until, host, limit, archived))

    @mcp.tool(annotations=READ_ONLY, structured_output=False)
    def show(id: Id,
             query: Annotated[str | None, Field(description="show the exchanges around the message that best "
                                                            "matches these words", max_length=QUERY_CAP)] = None,
             exchanges: Annotated[int, Field(ge=1, le=EXCHANGES_CAP, description="how many exchanges (a prompt "
                                                                                "and what followed)")] = 3) -> str:
        """Read one session's conversation: its last exchanges, or those around a search's match. Tool calls
        show their command or path, tool outputs their gist; secrets are masked (•••)."""
        return answer(lambda s: agent_api.show(s, id, query, exchanges))

    @mcp.tool(annotations=READ_ONLY, structured_output=False)
    def plan(id: Id, allow_permissive: Annotated[bool, Field(
            description="carry a recorded loose approval mode, as the picker's Alt-Enter does")] = False) -> str:
        """What resuming a session would do, never done: the folder, the command, the line for the user's shell,
        and every refusal, held-back flag and warning with its reason."""
        return answer(lambda s: agent_api.plan(s, id, allow_permissive))

    return mcp


def serve(env: Env) -> int:
    server(env).run("stdio")
    return ExitCode.OK
