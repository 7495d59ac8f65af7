"""The index: every app's sources, read only when they changed, cached as one JSON file.

Cache: `$XDG_CACHE_HOME/sessidx/index-<homes hash>.marshal`, one entry per source keyed by its
stamp (sizes and mtimes). Written to a temp file and renamed into place, so two runs at once
never leave a torn file (the later one wins); a corrupt, truncated or foreign-version cache
is ignored and rebuilt without a word.
"""

from __future__ import annotations

import marshal
import os
import sys
import time

from sessidx import __version__
from sessidx.config import DEMO_HOME, Env, cache_dir, demo_env
from sessidx.model import FIELD_COUNT, Session

TYPE_CHECKING = False  # see model.Fields
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from sessidx.apps.base import App

# Entries: key -> [app, stamp, rows]. The package version is part of it: a new release may
# read the same files differently, so its cache starts afresh. The file is marshal, not JSON:
# loading it is a tenth of the cost on every key press. It only ever holds plain lists,
# strings and numbers, lives in the user's own cache folder, and every entry is checked for
# shape before use; marshal's format is tied to the Python version, which is part of the key.
CACHE_VERSION = f"6/{__version__}/py{sys.version_info[0]}.{sys.version_info[1]}"


class Index:
    """What one indexing run found: sessions newest first (archived ones included)."""

    def __init__(self, sessions: list[Session], timings_ms: dict[str, float] | None = None,
                 problems: list[str] | None = None, env: Env | None = None) -> None:
        self.sessions = sessions
        self.timings_ms = timings_ms or {}
        self.problems = problems or []
        self.demo = False
        self.env = env


def write_atomic(path: str, data: str | bytes) -> None:
    import contextlib
    import tempfile

    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=os.path.basename(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def cache_path(env: Env) -> str:
    homes = "\0".join([env.home] + sorted(f"{k}={v}" for k, v in env.vars.items() if k in _HOME_VARS))
    return os.path.join(cache_dir(env), f"index-{_fnv1a(homes.encode()):08x}.marshal")


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


def _read_cache(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as f:
            data = marshal.loads(f.read())
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
        return {}
    sources = data.get("sources")
    return sources if isinstance(sources, dict) else {}


def _entry(value: Any) -> tuple[str, list[Any], list[Session]] | None:
    """A cache entry checked for shape; None if it is foreign or damaged."""
    if not (isinstance(value, list) and len(value) == 3 and isinstance(value[2], list)):
        return None
    rows = value[2]
    if not all(isinstance(r, list) and len(r) == FIELD_COUNT and isinstance(r[5], int) for r in rows):
        return None
    return value[0], value[1], [Session(*r) for r in rows]


def build(env: Env, apps: Iterable[App], refresh: bool = True) -> Index:
    """Every session of `apps`; with refresh=False, what the cache holds, without a stat."""
    path = cache_path(env)
    cached = _read_cache(path)
    app_list = list(apps)
    names = {app.name for app in app_list}
    if not refresh and cached:
        sessions = []
        for value in cached.values():
            if (entry := _entry(value)) and entry[0] in names:
                sessions += entry[2]
        return Index(_newest_first(sessions), env=env)

    fresh: dict[str, Any] = {}
    sessions = []
    timings: dict[str, float] = {}
    problems: list[str] = []
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
            entry = _entry(value) if value is not None else None
            if entry is not None and entry[1] == stamp:
                fresh[source.key] = value
                sessions += entry[2]
                continue
            changed = True
            try:
                loaded = source.read()
            except Exception as exc:  # bad input is skipped, never a traceback
                problems.append(f"{source.key}: skipped: {exc}")
                loaded = []
            fresh[source.key] = [app.name, stamp, [list(s) for s in loaded]]
            sessions += loaded
        timings[app.name] = (time.perf_counter() - started) * 1000
    # Entries of apps not asked for this time stay in the cache.
    for key, value in cached.items():
        if key not in fresh and (entry := _entry(value)) and entry[0] not in names:
            fresh[key] = value
    if changed or fresh.keys() != cached.keys():
        try:
            write_atomic(path, marshal.dumps({"version": CACHE_VERSION, "sources": fresh}))
        except OSError as exc:
            problems.append(f"cache not written: {exc}")
    return Index(_newest_first(sessions), timings, problems, env)


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
