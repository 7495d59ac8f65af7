"""The session record every adapter produces and every command consumes."""

from __future__ import annotations

from typing import Any, NamedTuple


class Session(NamedTuple):
    """One resumable session. A NamedTuple, not a dataclass: it is built on every key press
    and `dataclasses` alone costs more start-up time than the rest of `list`."""

    app: str
    id: str
    cwd: str | None
    branch: str | None  # None when unknown: no branch check then
    title: str | None
    mtime: int  # last used, ms since the epoch
    bytes: int | None
    model: str | None
    effort: str | None
    approval: str | None  # the app's own word for its permission/approval mode
    sandbox: str | None  # Codex only: read-only, workspace-write, danger-full-access
    path: str | None  # the transcript or store this came from
    archived: bool = False  # cannot be resumed as it is (e.g. `codex unarchive` first)
    origin: str | None = None  # how it was started: cli, exec, sdk-cli, ...

    @property
    def key(self) -> str:
        """`app:id`, unique across apps; what the picker passes around."""
        return f"{self.app}:{self.id}"

    def to_json(self) -> dict[str, Any]:
        return self._asdict()


FIELD_COUNT = len(Session._fields)
