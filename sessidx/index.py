"""The index: every app's sources, read only when they changed, cached in one marshal file.

Cache: `$XDG_CACHE_HOME/sessidx/index-<homes hash>.marshal`, one entry per source keyed by its
stamp (sizes and mtimes). It only speeds things up: a cache that is missing, corrupt, of
another version, damaged in any field, or not a regular file is ignored and rebuilt (see
`cache`), and a cache that cannot be written costs speed, not the listing.
"""

from __future__ import annotations

import marshal
import os
import sys
import time

from sessidx import __version__, cache
from sessidx.config import DEMO_HOME, Env, demo_env
from sessidx.model import FIELD_COUNT, Session

TYPE_CHECKING = False  # see model.Fields
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from sessidx.apps.base import App

# Entries: key -> [app, stamp, rows, problems]. The package version and the record's fields
# are part of it: a new release or a new field may read the same files differently, so its
# cache starts afresh. The file is marshal, not JSON: loading it is a tenth of the cost on
# every key press. It only ever holds plain lists, strings and numbers, lives in the user's
# own cache folder, and every row is checked field by field before use; marshal's format is
# tied to the Python version, which is part of the key.
CACHE_VERSION = f"7/{__version__}/py{sys.version_info[0]}.{sys.version_info[1]}/{','.join(Session.__slots__)}"


class Index:
    """What one indexing run found: sessions newest first (archived ones included)."""

    def __init__(self, sessions: list[Session], timings_ms: dict[str, float] | None = None,
                 problems: list[str] | None = None, env: Env | None = None) -> None:
        self.sessions = sessions
        self.timings_ms = timings_ms or {}
        self.problems = problems or []
        self.demo = False
        self.env = env


def cache_path(env: Env) -> str | None:
    folder = cache.cache_dir(env)
    if folder is None:
        return None
    homes = "\0".join([env.home] + sorted(f"{k}={v}" for k, v in env.vars.items() if k in _HOME_VARS))
    return os.path.join(folder, f"index-{_fnv1a(homes.encode('utf-8', 'surrogateescape')):08x}.marshal")


def _fnv1a(data: bytes) -> int:
    """A stable 32-bit hash (zlib's crc32 would load an extension module on every key press)."""
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


_HOME_VARS = {
    "CLAUDE_CONFIG_DIR", "CODEX_HOME", "CODEX_SQLITE_HOME", "GEMINI_CLI_HOME", "XDG_DATA_HOME",
    "COPILOT_HOME", "CLINE_DIR", "CLINE_DATA_DIR", "QWEN_HOME",
}


def _read_cache(path: str | None, problems: list[str]) -> dict[str, Any]:
    data, problem = cache.read(path)
    if problem:
        problems.append(problem)
    if data is None:
        return {}
    try:
        loaded = marshal.loads(data)
    except (ValueError, EOFError, TypeError):
        return {}
    if not isinstance(loaded, dict) or loaded.get("version") != CACHE_VERSION:
        return {}
    sources = loaded.get("sources")
    return sources if isinstance(sources, dict) else {}


_N = type(None)
# The type each Session field may hold, in slot order: a damaged row is one that breaks this.
_ROW_TYPES = ({str}, {str}, {str, _N}, {str, _N}, {str, _N}, {int}, {int, _N}, {str, _N}, {str, _N}, {str, _N},
              {str, _N}, {str, _N}, {bool}, {str, _N})
assert len(_ROW_TYPES) == FIELD_COUNT


def _entry(value: Any, apps: set[str]) -> tuple[str, list[Any], list[Session], list[str]] | None:
    """A cache entry of one of `apps`, checked field by field; None if foreign or damaged."""
    if not (type(value) is list and len(value) == 4):
        return None
    app, stamp, rows, problems = value
    if type(app) is not str or app not in apps or type(rows) is not list or type(problems) is not list:
        return None
    for r in rows:
        if not (type(r) is list and len(r) == FIELD_COUNT and r[0] == app
                and all(map(set.__contains__, _ROW_TYPES, map(type, r)))):  # type: ignore[arg-type]
            return None
    if not all(type(p) is str for p in problems):
        return None
    return app, stamp, [Session(*r) for r in rows], problems


def build(env: Env, apps: Iterable[App], refresh: bool = True) -> Index:
    """Every session of `apps`; with refresh=False, what the cache holds, without a stat."""
    from sessidx.apps import APPS
    from sessidx.apps.base import report, take_reports

    path = cache_path(env)
    problems: list[str] = []
    cached = _read_cache(path, problems)
    app_list = list(apps)
    names = {app.name for app in app_list}
    if not refresh and cached:
        sessions = []
        for value in cached.values():
            if entry := _entry(value, names):
                sessions += entry[2]
        return Index(_newest_first(sessions), problems=problems, env=env)

    fresh: dict[str, Any] = {}
    sessions = []
    timings: dict[str, float] = {}
    changed = False
    for app in app_list:
        started = time.perf_counter()
        try:
            sources = list(app.sources(env))
        except Exception as exc:  # a broken store must not hide the other apps
            problems.append(f"{app.name}: cannot list its sessions: {exc}")
            sources = []
        for source in sources:
            stamp = list(source.stamp)
            value = cached.get(source.key)
            entry = _entry(value, {app.name}) if value is not None else None
            if entry is not None and entry[1] == stamp:
                fresh[source.key] = value
                sessions += entry[2]
                problems += entry[3]
                continue
            changed = True
            take_reports()
            try:
                loaded = source.read()
            except Exception as exc:  # bad input is skipped, never a traceback
                loaded = []
                report(f"{source.key}: skipped: {exc}")
            notes = take_reports()
            loaded = _valid(loaded, source.key, notes)
            fresh[source.key] = [app.name, stamp, [list(s) for s in loaded], notes]
            sessions += loaded
            problems += notes
        timings[app.name] = (time.perf_counter() - started) * 1000
    # Entries of apps not asked for this time stay in the cache.
    for key, value in cached.items():
        if key not in fresh and _entry(value, set(APPS) - names):
            fresh[key] = value
    if (changed or fresh.keys() != cached.keys()) and (
        problem := cache.write(path, marshal.dumps({"version": CACHE_VERSION, "sources": fresh}))
    ):
        problems.append(problem)
    return Index(_newest_first(sessions), timings, problems, env)


def _valid(sessions: list[Session], key: str, notes: list[str]) -> list[Session]:
    """Sessions whose id can be shown, passed around and typed: printable, one line, not empty.
    An id is a file name on most apps, and a file name may hold a newline or an escape."""
    kept = [s for s in sessions if s.id and s.id.isprintable()]
    if len(kept) < len(sessions):
        notes.append(f"{key}: skipped {len(sessions) - len(kept)} session(s) whose id holds control characters")
    return kept


def _newest_first(sessions: list[Session]) -> list[Session]:
    return sorted(sessions, key=lambda s: (s.mtime, s.app, s.id), reverse=True)


def load(env: Env, apps: Iterable[App], refresh: bool = True) -> Index:
    """`build`, falling back to the bundled demo home when the machine has no sessions."""
    app_list = list(apps)
    index = build(env, app_list, refresh)
    if not index.sessions and not refresh:
        index = build(env, app_list, refresh=True)
    # The demo home is there in a checkout (`make run`), not in an installed package.
    if not index.sessions and not env.get("SESSIDX_HOME") and not index.problems and os.path.isdir(DEMO_HOME):
        demo = demo_env(env)
        index = build(demo, app_list, refresh)
        if not index.sessions and not refresh:
            index = build(demo, app_list, refresh=True)
        index.demo = True
    return index
