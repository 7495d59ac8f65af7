"""The session record every adapter produces and every command consumes."""

from __future__ import annotations

from dataclasses import astuple, dataclass, fields
from typing import Any


@dataclass(frozen=True, slots=True)
class Session:
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
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def to_row(self) -> list[Any]:
        return list(astuple(self))

    @classmethod
    def from_row(cls, row: list[Any]) -> Session:
        return cls(*row)


FIELD_COUNT = len(fields(Session))
