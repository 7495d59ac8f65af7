"""The session record every adapter produces and every command consumes."""

from __future__ import annotations

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any


class Fields:
    """A small record: slots, a typed `__init__`, equality and repr by field.

    Used instead of dataclasses and NamedTuple on the `list` path: on the machine this was
    measured on, importing `dataclasses` or `typing` cost more than listing 1,000 sessions.
    Treat instances as immutable.
    """

    __slots__: tuple[str, ...] = ()

    def __iter__(self) -> Iterator[Any]:
        return (getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self.__slots__)})"

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


class Session(Fields):
    """One resumable session. A field that is not known is None."""

    __slots__ = ("app", "id", "cwd", "branch", "title", "mtime", "bytes", "model", "effort", "approval",
                 "sandbox", "path", "archived", "origin")

    def __init__(
        self,
        app: str,
        id: str,
        cwd: str | None = None,
        branch: str | None = None,  # None when unknown: no branch check then
        title: str | None = None,
        mtime: int = 0,  # last used, ms since the epoch
        bytes: int | None = None,
        model: str | None = None,
        effort: str | None = None,
        approval: str | None = None,  # the app's own word for its permission/approval mode
        sandbox: str | None = None,  # Codex only: read-only, workspace-write, danger-full-access
        path: str | None = None,  # the transcript or store this came from
        archived: bool = False,  # cannot be resumed as it is (e.g. `codex unarchive` first)
        origin: str | None = None,  # how it was started: cli, exec, sdk-cli, ...
    ) -> None:
        self.app = app
        self.id = id
        self.cwd = cwd
        self.branch = branch
        self.title = title
        self.mtime = mtime
        self.bytes = bytes
        self.model = model
        self.effort = effort
        self.approval = approval
        self.sandbox = sandbox
        self.path = path
        self.archived = archived
        self.origin = origin

    @property
    def key(self) -> str:
        """`app:id`, unique across apps; what the picker passes around."""
        return f"{self.app}:{self.id}"


FIELD_COUNT = len(Session.__slots__)
