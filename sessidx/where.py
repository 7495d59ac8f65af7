"""Where a session lives: this machine or an SSH host, behind one small seam.

A session key's form is in keys.py: `app:id` (or a short id) is this machine's, `@host/app:id`
a host's; no other module reads it. `place_of(env, key)` answers with the place that holds the session,
and every front end (the commands, the picker's keys, an agent-facing server) asks it
`sessions()`, `session(key)`, `plan(key, allow_permissive)`, `search(query)` and
`preview(out, key, shell)`; none imports the host code, which loads only for a host's key.
"""

from __future__ import annotations

from sessidx.keys import on_host
from sessidx.local import ThisMachine

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Protocol

    from sessidx.config import Env
    from sessidx.model import Session
    from sessidx.resume import Plan

    class Place(Protocol):
        """Where sessions live, and what can be asked of them there."""

        def sessions(self) -> list[Session]: ...

        def session(self, key: str) -> Session: ...

        def plan(self, key: str, allow_permissive: bool = False, fresh: bool = False) -> Plan: ...

        def search(self, query: str, app: str | None = None, limit: int = 50) -> list[tuple[float, Session, str]]: ...

        def preview(self, out: Callable[[str], None], key: str, shell: str) -> int: ...


def place_of(env: Env, key: str) -> Place:
    """The place that holds the session `key` names."""
    if on_host(key):
        from sessidx.remote import HostPlace  # the host code: only for a host's key

        return HostPlace.of_key(env, key)
    return ThisMachine(env)
