"""Whether the listing would come out the same as last time, in one look at its files.

A listing is what the apps' `sources()` find: it depends on nothing but the files and folders
they stat, scan, open or read a link of, and the environment variables they read (their
rows come from the index cache, whose own identity is checked apart). So while `sources()`
runs under a `Watch`, every such look is recorded with what it saw (a file's or folder's
mode, inode, size, mtime and ctime, or that it was not there; a folder's mtime changes whenever an
entry is added, removed or renamed), with no app named: the os functions themselves are
watched. `fresh` then stats those paths again, in bulk, and compares: when all is as
recorded, building the listing again would find every source unchanged, and `sessidx search`
(or an SSH host asked for its rows) can answer from what it kept without building it. (The
search answers first and checks after, in a child of its own: content/kept.py.)

What cannot be told from a stat makes a record that is never trusted: a `sources()` that
writes, removes or renames anything, opens a database through SQLite (which opens files
behind Python's back), or looks at a path relative to a folder it did not open itself. The
check then always fails, which costs speed (today's full path runs), never a missed change.
A folder whose mtime was recent when it was looked at (within RACY_NS: an entry added in the
same tick of the file system's clock leaves the mtime as it was) has its entry names kept
too, and compared. A file rewritten in place at its old size with its mtime put back (`touch
-r`) is seen by its ctime, which no one can set; one rewritten twice within one tick of the
file system's clock at its old size is missed, as the index's own stamps miss it.

A key-press module: builtins and `os`, `sys`, `marshal` only (see cli.py).
"""

from __future__ import annotations

import builtins
import io
import marshal
import os
import sys
import time
from operator import attrgetter

from sessidx import __version__

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

    from sessidx.config import Env

VERSION = f"4/{__version__}/py{sys.version_info[0]}.{sys.version_info[1]}"
# Coarser than any local file system's timestamps (FAT's are 2 s), and than a file system
# clock's lag behind time.time_ns().
RACY_NS = 3_000_000_000
_DIR = 0o040000
_STAMP = attrgetter("st_mode", "st_ino", "st_size", "st_mtime_ns", "st_ctime_ns")

def _seen(path: Any, follow: bool = True) -> tuple[int, int, int, int, int] | None:
    """What a look at `path` saw: (mode, inode, size, mtime_ns, ctime_ns), None for any error."""
    try:
        st = _REAL["stat"](path, follow_symlinks=follow)
    except (OSError, ValueError, TypeError):
        return None
    stamp: tuple[int, int, int, int, int] = _STAMP(st)
    return stamp


_WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
# what a Watch replaces while `sources()` runs (the originals, called through)
_REAL: dict[str, Any] = {name: getattr(os, name) for name in (
    "stat", "lstat", "scandir", "listdir", "open", "readlink", "mkdir", "rmdir", "unlink", "remove", "rename",
    "replace", "utime", "chmod", "symlink", "link", "truncate")}
_REAL["builtins.open"] = builtins.open
_CHANGES = ("mkdir", "rmdir", "unlink", "remove", "rename", "replace", "utime", "chmod", "symlink", "link", "truncate")


_UNSEEN = object()


class Watch:
    """What the listings run inside `watched` looked at. Use `with Watch(env) as watch:` around
    the build; `record()` then gives what `fresh` checks (None when it cannot be trusted)."""

    def __init__(self, env: Env) -> None:
        self.env = env
        self.seen: dict[tuple[str, bool], Any] = {}  # (path, follow links) -> outcome
        self.vars: dict[str, str | None] = {}
        self.untrusted = ""  # why the record must not be used
        self.fds: dict[int, str] = {}  # folders opened, for a scandir of the fd
        self.names: dict[str, list[str]] = {}  # folders changed lately -> their entries
        self.started = time.time_ns()
        self._before: Watch | None = None

    def __enter__(self) -> Watch:
        global _WATCH
        self._before, _WATCH = _WATCH, self
        return self

    def __exit__(self, *exc: object) -> None:
        global _WATCH
        _WATCH = self._before

    def look(self, path: Any, follow: bool = True, found: Any = _UNSEEN) -> None:
        """Note what `path` shows now, or `found`: the stat result (None: an error) of the very
        call the app made."""
        if type(path) is str:
            key = path
        elif isinstance(path, int):
            return  # an fd: of a file or folder whose open was looked at
        else:
            try:
                key = os.fsdecode(os.fspath(path))
            except (TypeError, ValueError):
                return  # the call itself fails the same way
        if not key.startswith("/"):
            self.distrust(f"{key} is relative: another folder may be meant next time")
            return
        outcome = _seen(key, follow) if found is _UNSEEN else None if found is None else _STAMP(found)
        if self.seen.setdefault((key, follow), outcome) != outcome:
            self.distrust(f"{key} changed while it was listed")
        elif outcome is not None and outcome[0] & 0o170000 == _DIR and outcome[3] > self.started - RACY_NS \
                and key not in self.names:
            try:  # taken before the app's own scan: an entry it sees and this does not is a change
                self.names[key] = sorted(_REAL["listdir"](key))
            except OSError:
                self.distrust(f"{key} cannot be listed")

    def distrust(self, why: str) -> None:
        self.untrusted = self.untrusted or why

    def record(self) -> bytes | None:
        """What was looked at, for `fresh`; None when the record could not vouch for it. Paths
        seen are kept as one string each way (stat and lstat; loading 10,000 strings costs
        more than their stats), with a digest of what they showed: tuple hashing of ints is a
        chain of one-to-one steps, so any one stamp that differs changes it, and several at
        once collide with odds of 2**-64. Paths that were not there are kept apart."""
        if self.untrusted or not self.seen:
            return None
        present: list[tuple[bool, str, int]] = []
        absent: list[tuple[bool, str]] = []
        for follow in (True, False):
            looked = sorted(path for path, way in self.seen if way is follow)
            there = [path for path in looked if self.seen[path, follow] is not None]
            present.append((follow, "\0".join(there), hash(tuple(self.seen[path, follow] for path in there))))
            absent.append((follow, "\0".join(path for path in looked if self.seen[path, follow] is None)))
        # HOME too: os.path.expanduser reads it, for a `~` in an app's override variable
        env_vars = {**self.vars, "HOME": self.env.vars.get("HOME")}
        return marshal.dumps((VERSION, self.env.home, sorted(env_vars.items()), present, absent,
                              sorted(self.names.items())))


def looked_at(record: bytes) -> list[tuple[str, bool]]:
    """Every (path, links followed) a record holds, there or not."""
    _, _, _, present, absent, _ = marshal.loads(record)
    return [(path, follow) for follow, joined, *_ in present + absent for path in _split(joined)]


def _split(joined: str) -> list[str]:
    return joined.split("\0") if joined else []


_WATCH: Watch | None = None


def watching() -> bool:
    """Whether a Watch is recording: a listing must then look through the os functions."""
    return _WATCH is not None


def watched(env: Env, call: Callable[[], Any]) -> Any:
    """`call()` (an app's `sources()`, listed), with what it looks at recorded when a Watch is on."""
    watch = _WATCH
    if watch is None:
        return call()
    _patch(watch)
    env_vars = env.vars
    env.vars = _ReadVars(env_vars, watch)
    try:
        return call()
    finally:
        env.vars = env_vars
        _unpatch()


def fresh(record: bytes | None, env: Env) -> bool:
    """Whether every path in `record` (Watch.record) is as it was, and every variable read."""
    if not record:
        return False
    try:
        version, home, env_vars, present, absent, names = marshal.loads(record)
        if version != VERSION or home != env.home or any(env.vars.get(name) != value for name, value in env_vars):
            return False
    except (ValueError, EOFError, TypeError):  # a damaged record
        return False
    return _holds(present) and _still_absent(absent) and all(map(_names, names))


def _holds(present: Any) -> bool:
    """Whether the paths of these (links followed, joined paths, digest) show what they showed."""
    try:
        for follow, joined, digest in present:
            stats = map(os.stat if follow else os.lstat, _split(joined))
            if hash(tuple(map(_STAMP, stats))) != digest:
                return False
        return True
    except (OSError, ValueError, TypeError):  # a path gone, or a damaged record
        return False


def _still_absent(absent: Any) -> bool:
    try:  # os.access: no exception made for each path still not there
        return all(not os.access(path, os.F_OK) if follow else _seen(path, False) is None
                   for follow, joined in absent for path in _split(joined))
    except (ValueError, TypeError):
        return False


def _names(item: Any) -> bool:
    """Whether a folder that had changed lately when recorded holds the same entries."""
    try:
        return type(item) is tuple and sorted(os.listdir(item[0])) == item[1]
    except (OSError, ValueError, TypeError, IndexError):
        return False


class _ReadVars(dict[str, str]):
    """The environment's variables, each one read noted with its value."""

    def __init__(self, values: dict[str, str], watch: Watch) -> None:
        super().__init__(values)
        self.watch = watch

    def __getitem__(self, name: str) -> str:
        self.watch.vars[name] = dict.get(self, name)
        return dict.__getitem__(self, name)

    def get(self, name: str, default: Any = None) -> Any:
        self.watch.vars[name] = dict.get(self, name)
        return dict.get(self, name, default)

    def __contains__(self, name: object) -> bool:
        if isinstance(name, str):
            self.watch.vars[name] = dict.get(self, name)
        return dict.__contains__(self, name)


def _patch(watch: Watch) -> None:
    real = _REAL

    def stat(path: Any, *, dir_fd: Any = None, follow_symlinks: bool = True) -> Any:
        if dir_fd is not None:
            watch.distrust("a stat relative to a folder")
        try:
            st = real["stat"](path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)
        except OSError:
            watch.look(path, follow_symlinks, None)
            raise
        watch.look(path, follow_symlinks, st)
        return st

    def lstat(path: Any, *, dir_fd: Any = None) -> Any:
        return stat(path, dir_fd=dir_fd, follow_symlinks=False)

    def scandir(path: Any = ".") -> Any:
        folder = _folder(watch, path)
        return _Entries(real["scandir"](path), folder, watch)

    def listdir(path: Any = ".") -> Any:
        _folder(watch, path)
        return real["listdir"](path)

    def open_(path: Any, flags: int, mode: int = 0o777, *, dir_fd: Any = None) -> int:
        if dir_fd is not None or flags & _WRITES:
            watch.distrust(f"{path!r} opened to write, or relative to a folder")
        follow = not flags & getattr(os, "O_NOFOLLOW", 0)
        try:
            fd: int = real["open"](path, flags, mode, dir_fd=dir_fd)
        except OSError:
            watch.look(path, follow, None)
            raise
        watch.look(path, follow, os.fstat(fd))  # the very file opened
        if not isinstance(path, int):
            watch.fds[fd] = os.fsdecode(path)
        return fd

    def builtin_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if any(c in mode for c in "wax+"):
            watch.distrust(f"{file!r} opened to write")
        try:
            f = real["builtins.open"](file, mode, *args, **kwargs)
        except OSError:
            watch.look(file, True, None)
            raise
        watch.look(file, True, os.fstat(f.fileno()))
        return f

    def readlink(path: Any, *, dir_fd: Any = None) -> Any:
        if dir_fd is not None:
            watch.distrust("a link read relative to a folder")
        watch.look(path, False)
        return real["readlink"](path, dir_fd=dir_fd)

    def changing(name: str) -> Callable[..., Any]:
        def change(*args: Any, **kwargs: Any) -> Any:
            watch.distrust(f"os.{name} while listing")
            return real[name](*args, **kwargs)
        return change

    os.stat, os.lstat, os.scandir, os.listdir, os.open, os.readlink = (
        stat, lstat, scandir, listdir, open_, readlink)
    for name in _CHANGES:
        setattr(os, name, changing(name))
    builtins.open = io.open = builtin_open  # pathlib opens with io.open
    for module in ("sqlite3", "_sqlite3"):  # opens files behind Python's back
        if (loaded := sys.modules.get(module)) is not None:
            _REAL.setdefault(f"{module}.connect", loaded.connect)
            loaded.connect = _refuse_connect(watch, _REAL[f"{module}.connect"])  # type: ignore[attr-defined]


def _refuse_connect(watch: Watch, connect: Callable[..., Any]) -> Callable[..., Any]:
    def connected(*args: Any, **kwargs: Any) -> Any:
        watch.distrust("a database opened while listing")
        return connect(*args, **kwargs)
    return connected


def _unpatch() -> None:
    for name, real in _REAL.items():
        if name == "builtins.open":
            builtins.open = io.open = real
        elif "." in name:
            module = sys.modules.get(name.split(".")[0])
            if module is not None:
                module.connect = real  # type: ignore[attr-defined]
        else:
            setattr(os, name, real)


def _folder(watch: Watch, path: Any) -> str | None:
    """The folder a scan reads, looked at (its mtime changes with its entries)."""
    if isinstance(path, int):
        folder = watch.fds.get(path)
        if folder is None:
            watch.distrust("a folder scanned by an fd not seen opened")
            return None
        watch.look(folder)
        return folder
    path = "." if path is None else path
    watch.look(path)
    try:
        return os.fsdecode(os.fspath(path))
    except (TypeError, ValueError):
        return None


class _Entries:
    """os.scandir's iterator, its entries' stats looked at (a folder's mtime does not change
    when one of its files grows)."""

    def __init__(self, entries: Any, folder: str | None, watch: Watch) -> None:
        self.entries, self.folder, self.watch = entries, folder, watch

    def __enter__(self) -> _Entries:
        self.entries.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.entries.__exit__(*exc)

    def close(self) -> None:
        self.entries.close()

    def __iter__(self) -> Iterator[_Entry]:
        return self

    def __next__(self) -> _Entry:
        return _Entry(next(self.entries), self.folder, self.watch)


class _Entry:
    """An os.DirEntry whose stat, and whose type when it is a link followed, is looked at."""

    __slots__ = ("entry", "folder", "watch", "name", "path")

    def __init__(self, entry: Any, folder: str | None, watch: Watch) -> None:
        self.entry, self.folder, self.watch = entry, folder, watch
        self.name, self.path = entry.name, entry.path

    def __fspath__(self) -> Any:
        return self.path

    def _look(self, follow: bool, found: Any = _UNSEEN) -> None:
        if self.folder is None:
            self.watch.distrust("an entry of a folder not known")
        else:
            self.watch.look(f"{self.folder}/{os.fsdecode(self.name)}", follow, found)

    def stat(self, *, follow_symlinks: bool = True) -> Any:
        try:
            st = self.entry.stat(follow_symlinks=follow_symlinks)
        except OSError:
            self._look(follow_symlinks, None)
            raise
        self._look(follow_symlinks, st)
        return st

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        if follow_symlinks and self.entry.is_symlink():
            self._look(True)  # where the link points
        return bool(self.entry.is_dir(follow_symlinks=follow_symlinks))

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        if follow_symlinks and self.entry.is_symlink():
            self._look(True)
        return bool(self.entry.is_file(follow_symlinks=follow_symlinks))

    def is_symlink(self) -> bool:
        return bool(self.entry.is_symlink())  # the entry's own type: a change is a new entry

    def is_junction(self) -> bool:
        return False

    def inode(self) -> int:
        return int(self.entry.inode())
