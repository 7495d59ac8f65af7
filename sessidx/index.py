"""The index: every app's sources, read only when they changed, cached in one marshal file.

Cache: `$XDG_CACHE_HOME/sessidx/index-<homes hash>.marshal`, per app the stamp (sizes and
mtimes), rows and problems of each source (see CACHE_VERSION). It only speeds things up: a
cache that is missing, corrupt, of another version, damaged in any field, or not a regular file
is ignored and rebuilt (see `cache`), and a cache that cannot be written costs speed, not the
listing.
"""

from __future__ import annotations

import marshal
import os
import sys
import time
from itertools import accumulate, chain, repeat, starmap
from operator import attrgetter, itemgetter

from sessidx import __version__, cache
from sessidx.apps import HOME_VARS, app_named, present, present_names
from sessidx.apps.base import SourceBusy, report, take_reports
from sessidx.config import DEMO_HOME, Env, demo_env
from sessidx.freshness import watched
from sessidx.ids import id_fits
from sessidx.model import FIELD_COUNT, Session
from sessidx.readers import open_regular

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from sessidx.apps.base import App, Source

# The file: {"version": CACHE_VERSION, "apps": {app: [stamps, rows, notes]}}, three dicts keyed
# by source: its stamp (a tuple), its rows (each a list of the Session fields in slot order) and
# what went wrong reading it (only sources with problems). The package version and the fields
# are part of the version: a new release may read the same files differently, so its cache
# starts afresh. marshal, not JSON: loading it is a tenth of the cost on every key press. It
# only ever holds plain dicts, lists, tuples, strings and numbers, lives in the user's own
# cache folder, and every row is checked field by field before use; marshal's format is tied
# to the Python version, which is part of the key too.
# After the index object, a lookup of each session by its `app:id` (see `_lookup`): marshal
# reads one object and ignores what follows, so readers of the whole index never see it.
CACHE_VERSION = f"12/{__version__}/py{sys.version_info[0]}.{sys.version_info[1]}/{','.join(Session.__slots__)}"


class Index:
    """What one indexing run found: sessions newest first (archived ones included)."""

    def __init__(self, sessions: list[Session], timings_ms: dict[str, float] | None = None,
                 problems: list[str] | None = None, env: Env | None = None,
                 stamps: list[dict[str, Any]] | None = None) -> None:
        self.sessions = sessions
        self.timings_ms = timings_ms or {}
        self.problems = problems or []
        self.demo = False
        self.env = env
        self._stamps = stamps or []  # per app, each source's stamp as this run stat'ed it
        self._present: frozenset[str] | None = None

    @property
    def present(self) -> frozenset[str]:
        """The transcripts this run stat'ed, there a moment ago (refusals.Looks): made when
        asked (`list` and the fresh list ask; most builds do not)."""
        if self._present is None:  # a stamp holds its own size first (None: not there), then its companions'
            self._present = frozenset(key for current in self._stamps for key, stamp in current.items()
                                      if type(stamp) is tuple and stamp and stamp[0] is not None)
        return self._present


def cache_path(env: Env) -> str | None:
    folder = cache.cache_dir(env)
    if folder is None:
        return None
    homes = "\0".join([env.home] + [f"{k}={env.vars[k]}" for k in HOME_VARS if k in env.vars])
    return os.path.join(folder, f"index-{_fnv1a(homes.encode('utf-8', 'surrogateescape')):08x}.marshal")


def _fnv1a(data: bytes) -> int:
    """A stable 32-bit hash (zlib's crc32 would load an extension module on every key press)."""
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h




def _read_cache(path: str | None, problems: list[str]) -> dict[str, list[dict[Any, Any]]]:
    """app -> [stamps, rows, notes]: three dicts keyed by source (see CACHE_VERSION)."""
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
    parts = loaded.get("apps")
    if not isinstance(parts, dict):
        return {}
    return {app: part for app, part in parts.items()
            if type(part) is list and len(part) == 3 and all(type(d) is dict for d in part)}


_N = type(None)
# The type each Session field may hold, in slot order: a damaged row is one that breaks this.
_ROW_TYPES: tuple[set[type], ...] = (
    {str}, {str}, {str, _N}, {str, _N}, {str, _N}, {int}, {int, _N}, {str, _N}, {str, _N}, {str, _N},
    {str, _N}, {str, _N}, {bool}, {str, _N},
)
assert len(_ROW_TYPES) == FIELD_COUNT
def build(env: Env, apps: Iterable[App], refresh: bool = True,
          on_batch: Callable[[list[Session], bool], None] | None = None) -> Index:
    """Every session of `apps`; with refresh=False, what the cache holds, without a stat.

    Every app's sources are listed first (a stat each: cheap), then the ones to read are read
    newest first across apps (parsing is what costs). `on_batch` is given the sessions as they
    come, cached ones first, then in batches: the first press ever streams them into the
    picker, so the newest rows show while the old ones are still being read; its second
    argument says the batch is the last (the cache is written after it)."""
    # Apps that find their sessions through the folders the others know of come last (see
    # base.App.reads_known_folders); sorted() is stable, so the rest keep their order.
    app_list = sorted(apps, key=lambda a: getattr(a, "reads_known_folders", False))
    if not refresh and (index := from_cache(env, app_list)) is not None:
        return index
    path = cache_path(env)
    problems: list[str] = []
    cached = _read_cache(path, problems)
    gone = _drop_gone(env, cached, {a.name for a in app_list})
    sessions: list[Session] = []
    timings: dict[str, float] = {}
    batches = _Batches(sessions, on_batch)
    ordinary = [a for a in app_list if not getattr(a, "reads_known_folders", False)]
    reads = [_AppRead(env, app, None, cached, sessions, problems, timings) for app in ordinary]
    batches.emit()  # the cached rows of the sources that did not change
    _read_newest_first(reads, batches)
    if late := [a for a in app_list if getattr(a, "reads_known_folders", False)]:
        folders = _known_folders(sessions, cached, {a.name for a in ordinary})
        late_reads = [_AppRead(env, app, folders, cached, sessions, problems, timings) for app in late]
        batches.emit()
        _read_newest_first(late_reads, batches)
        reads += late_reads
    fresh = dict(cached)  # apps not asked for this time keep their part
    changed = bool(gone)
    for read in reads:
        fresh[read.app.name], app_changed = read.finish()
        changed |= app_changed
    batches.emit(last=True)
    if changed and (problem := cache.write(path, marshal.dumps({"version": CACHE_VERSION, "apps": fresh})
                                           + _lookup(fresh))):
        problems.append(problem)
    return Index(_newest_first(sessions), timings, problems, env, [read.current for read in reads])


def mark_first_press(env: Env) -> str | None:
    """Says that a first press is building the index (its pid in `<cache>.first`), so that
    fzf's preview waits for that index instead of building one of its own beside it (the
    whole index twice, on a machine whose cores the first press needs). The path, to remove
    when done; None when it cannot be written (the preview then builds, as before)."""
    path = cache_path(env)
    if path is None:
        return None
    marker = path + ".first"
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        if cache.folder_problem(os.path.dirname(path)):
            return None
        fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                     0o600)
        with os.fdopen(fd, "w") as f:
            f.write(str(os.getpid()))
    except OSError:
        return None
    return marker


def wait_for_first_press(env: Env, timeout: float = 30.0) -> bool:
    """Waits while a live first press builds the index (see mark_first_press); True if one
    did, so the cache now answers."""
    path = cache_path(env)
    if path is None:
        return False
    marker, waited, deadline = path + ".first", False, time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(marker, "rb") as f:
                pid = int(f.read(20) or b"0")
            if pid <= 0:
                return waited
            os.kill(pid, 0)  # raises when that first press is gone (killed mid-build)
        except (OSError, ValueError):
            return waited
        waited = True
        time.sleep(0.01)  # a look costs some 20 µs; the list waiting on it is on screen next
    return waited


class _Batches:
    """Hands `on_batch` the sessions added since its last call: the first few sources' at once
    (the newest row alone, then the top of the screen, then the rest of a screenful), then at
    most every SECONDS, so that rows keep coming without a render per source. The newest row
    goes out after one source read, not twelve: fzf shows it while the next eleven are read."""

    FIRST = (1, 12, 40)
    SECONDS = 0.1

    def __init__(self, sessions: list[Session], on_batch: Callable[[list[Session], bool], None] | None) -> None:
        self.sessions, self.on_batch = sessions, on_batch
        self.given = 0
        self.sources_read = 0
        self.last = time.perf_counter()

    def read_one(self) -> None:
        self.sources_read += 1
        if self.on_batch is not None and (self.sources_read in self.FIRST or (
                self.sources_read > self.FIRST[-1] and time.perf_counter() - self.last >= self.SECONDS)):
            self.emit()

    def emit(self, last: bool = False) -> None:
        if self.on_batch is not None and (len(self.sessions) > self.given or last):
            batch = self.sessions[self.given:]
            self.given = len(self.sessions)
            self.on_batch(batch, last)
            self.last = time.perf_counter()


def _drop_gone(env: Env, cached: dict[str, list[dict[Any, Any]]], asked: set[str]) -> bool:
    """Drops the cached parts of apps whose home has gone: they have no sessions, as a fresh
    build would say (an app not asked for this time but still there keeps its part). Whether
    any went."""
    others = [name for name in cached if name not in asked]
    if not others:
        return False
    there = set(present_names(env))
    gone = [name for name in others if name not in there]
    for name in gone:
        del cached[name]
    return bool(gone)


def _read_newest_first(reads: list[_AppRead], batches: _Batches) -> None:
    """The sources left to read, of every app, newest first (by the mtimes in their stamps)."""
    pending = [(_newest_ns(source.stamp), i, source) for i, read in enumerate(reads) for source in read.to_read]
    if len(reads) > 1 or batches.on_batch is not None:
        pending.sort(key=itemgetter(0), reverse=True)
    for _, i, source in pending:
        reads[i].read(source)
        batches.read_one()


def _newest_ns(stamp: Any) -> int:
    """The newest mtime of a source's own files: its stamp starts with (size, mtime_ns,
    ctime_ns, inode) groups (readers.stamp), the source's and a companion's (a database's WAL,
    a title sidecar). Only an order."""
    try:
        own = stamp[1] if type(stamp[1]) is int else 0
        other = stamp[5] if len(stamp) > 5 and type(stamp[5]) is int else 0
    except (TypeError, IndexError, KeyError):
        return 0
    return own if own >= other else other


def _known_folders(sessions: list[Session], cached: dict[str, list[dict[Any, Any]]],
                   listed: set[str]) -> frozenset[str]:
    """Every folder a session was listed in: this run (`sessions`: all of the `listed` apps'),
    or cached for another app (one not asked for this time, or one that reads known folders:
    where it found sessions before). The listed apps' cached rows are not read again: at 10,000
    sessions that was 4.5 ms of every list."""
    folders = {s.cwd for s in sessions if s.cwd}
    for _stamps, rows, _notes in (part for name, part in cached.items() if name not in listed):
        for source_rows in rows.values():
            if type(source_rows) is list:
                folders.update(r[2] for r in source_rows if type(r) is list and len(r) > 2 and type(r[2]) is str)
    return frozenset(folders)


def from_cache(env: Env, apps: Iterable[App]) -> Index | None:
    """What the cache holds, without a single stat; None when there is no usable cache yet."""
    problems: list[str] = []
    cached = _read_cache(cache_path(env), problems)
    if not cached:
        return None
    listed: list[Session] = []
    for app in apps:
        stamps, rows, notes = cached.get(app.name) or ({}, {}, {})
        found = _checked(app.name, rows, rows.keys())
        if found is None:  # some rows damaged: the others still count
            found = _checked(app.name, rows, [key for key in rows if _checked(app.name, rows, [key]) is not None])
        listed += found or []
        problems += _notes_of(notes, rows.keys())
    return Index(_newest_first(listed), problems=problems, env=env)


def cached_session(env: Env, key: str) -> Session | None:
    """One session by its exact `app:id` from the cache, checked, without building the others:
    fzf's preview asks for one on every arrow key. The lookup after the index answers without
    unmarshalling the whole index (a quarter of the preview at 10,000 sessions); a cache
    written without one is read whole."""
    app, _, sid = key.partition(":")
    path = cache_path(env)
    if path is None or not sid:
        return None
    row = _looked_up(path, key)
    if row is _NO_LOOKUP:
        row = None
        part = _read_cache(path, []).get(app)
        for rows in part[1].values() if part else ():
            if type(rows) is list and (row := next((r for r in rows if type(r) is list and r[1:2] == [sid]), None)):
                break
    found = _checked(app, {0: [row]}, [0]) if type(row) is list and row[1:2] == [sid] else None
    session = found[0] if found else None
    # about to become a command line: the app's full id grammar, as when its store is read
    owner = app_named(app)
    return session if session is not None and owner is not None and id_fits(owner.id_pattern, sid) else None


_NO_LOOKUP = object()  # the cache has no usable lookup: read it whole
_TRAILER = b"sessidx-lookup"  # then the header's length, 4 bytes


def _lookup(parts: dict[str, list[dict[Any, Any]]]) -> bytes:
    """Every cached row by its `app:id`, in buckets by the key's hash (about 32 rows each),
    each bucket its own marshal object: a reader unmarshals one. Then a header (the version,
    where each bucket ends) and the trailer that finds it from the end of the file."""
    by_key: dict[str, Any] = {}
    for app, part in parts.items():
        for rows in part[1].values():
            for row in rows if type(rows) is list else ():
                if type(row) is list and len(row) > 1 and type(row[1]) is str:
                    by_key.setdefault(f"{app}:{row[1]}", row)  # the first, as a scan of the index finds
    buckets: list[dict[str, Any]] = [{} for _ in range(max(1, len(by_key) // 32) | 1)]
    for key, row in by_key.items():
        buckets[_bucket(key, len(buckets))][key] = row
    blobs = [marshal.dumps(bucket) for bucket in buckets]
    ends = list(accumulate(map(len, blobs)))
    header = marshal.dumps((CACHE_VERSION, ends))
    return b"".join(blobs) + header + _TRAILER + len(header).to_bytes(4, "little")


def _bucket(key: str, buckets: int) -> int:
    """The lookup bucket of `key`: its bytes as one number, modulo an odd count (so every byte
    counts). In C: FNV-1a in Python was a tenth of a cold build at 3,000 sessions."""
    return int.from_bytes(key.encode("utf-8", "surrogateescape"), "big") % buckets


def _looked_up(path: str, key: str) -> Any:
    """The cached row of `key` from the lookup, None when the index holds no such session,
    _NO_LOOKUP when the file has no lookup of this version (or is not fit to be read)."""
    if cache.folder_problem(os.path.dirname(path)):
        return _NO_LOOKUP  # the whole read says why, and reads nothing
    f = open_regular(path)
    if f is None:
        return _NO_LOOKUP
    with f:
        try:
            size = f.seek(0, os.SEEK_END)
            tail = len(_TRAILER) + 4
            f.seek(max(0, size - tail))
            trailer = f.read(tail)
            header_size = int.from_bytes(trailer[-4:], "little")
            if trailer[:-4] != _TRAILER or header_size > size - tail:
                return _NO_LOOKUP
            f.seek(size - tail - header_size)
            version, ends = marshal.loads(f.read(header_size))
            if version != CACHE_VERSION or type(ends) is not list or not ends:
                return _NO_LOOKUP
            n = _bucket(key, len(ends))
            start, end = (ends[n - 1] if n else 0), ends[n]
            f.seek(size - tail - header_size - ends[-1] + start)
            bucket = marshal.loads(f.read(end - start))
        except (OSError, ValueError, EOFError, TypeError):  # a damaged lookup: the whole read decides
            return _NO_LOOKUP
    return bucket.get(key) if type(bucket) is dict else _NO_LOOKUP


class _AppRead:
    """One app's refresh: its sources listed (a stat each), the cached rows of unchanged ones
    added to `sessions` at once; `read` the others (in any order, across apps); `finish`
    gives the app's new cache part and whether it differs from the old one.

    Unchanged sources are found with set operations on (key, stamp) pairs, so a warm run does
    no Python-level work per source beyond the app's own stat."""

    def __init__(self, env: Env, app: App, folders: frozenset[str] | None, cached: dict[str, list[dict[Any, Any]]],
                 sessions: list[Session], problems: list[str], timings: dict[str, float]) -> None:
        started = time.perf_counter()
        self.app, self.sessions, self.problems, self.timings = app, sessions, problems, timings
        name = app.name
        try:
            # an app that reads the folders the others know of is given them (reads_known_folders)
            # what it looks at is recorded when a freshness.Watch is on (`search` when nothing changed)
            sources: list[Source] = watched(env, lambda: list(
                app.sources(env, folders) if folders is not None else app.sources(env)))  # type: ignore[call-arg]
        except Exception as exc:  # a broken store must not hide the other apps
            problems.append(f"{name}: cannot list its sessions: {exc}")
            sources = []
        old_stamps, old_rows, old_notes = cached.get(name) or ({}, {}, {})
        current = dict(map(attrgetter("key", "stamp"), sources))
        if current == old_stamps and old_rows.keys() == current.keys():
            same: Any = old_rows.keys()  # nothing changed: the usual key press
        else:
            try:
                unchanged = dict(current.items() & old_stamps.items())
            except TypeError:  # an unhashable stamp: a damaged cache
                unchanged = {}
            same = [key for key in old_rows if key in unchanged]  # in stored order: rows stay close in memory
        kept = _checked(name, old_rows, same)
        if kept is None:  # damaged rows: read those sources again
            same = [key for key in same if _checked(name, old_rows, [key]) is not None]
            kept = _checked(name, old_rows, same) or []
        same = set(same) if len(same) < len(current) else same
        self.old_rows = old_rows  # a source busy right now lists its last good read (see read)
        self.rows = {key: old_rows[key] for key in same} if len(same) < len(old_rows) else old_rows
        self.notes = {key: old_notes[key] for key in old_notes.keys() & same}
        problems += _notes_of(self.notes, self.notes.keys())
        sessions += kept
        self.to_read = [s for s in sources if s.key not in same] if len(same) < len(current) else []
        self.changed = len(same) < len(current) or current.keys() != old_stamps.keys()
        self.current = current
        timings[name] = timings.get(name, 0.0) + (time.perf_counter() - started) * 1000

    def read(self, source: Source) -> None:
        started = time.perf_counter()
        loaded, source_notes, busy = _read(source, self.app)
        if busy:  # its stamp left out: read again next time
            last = _checked(self.app.name, self.old_rows, [source.key]) if source.key in self.old_rows else None
            if last is not None:
                loaded = last
                source_notes.append(f"{source.key}: the last good read is listed ({len(last)} session(s))")
            else:
                source_notes.append(f"{source.key}: no earlier read; {len(loaded)} session(s) listed from its files")
            self.current.pop(source.key, None)
            self.changed = True
        self.rows[source.key] = [_cache_row(s) for s in loaded]
        if source_notes:
            self.notes[source.key] = source_notes
        self.sessions += loaded
        self.problems += source_notes
        self.timings[self.app.name] += (time.perf_counter() - started) * 1000

    def finish(self) -> tuple[list[dict[Any, Any]], bool]:
        rows = self.rows
        if self.changed:  # stored newest first: the next warm run finds its rows already in order
            rows = dict(sorted(rows.items(), key=_newest_row, reverse=True))
        return [self.current, rows, self.notes], self.changed


def _newest_row(item: tuple[Any, list[list[Any]]]) -> tuple[int, str, str]:
    rows = item[1]
    return (rows[0][5], rows[0][0], rows[0][1]) if rows else (0, "", "")


def _read(source: Source, app: App) -> tuple[list[Session], list[str], bool]:
    """A source's sessions, what went wrong reading it, and whether it was busy (SourceBusy: its
    fallback is what is given): bad input is skipped, never raised."""
    take_reports()
    busy = False
    try:
        loaded = source.read()
    except SourceBusy as exc:
        loaded, busy = exc.fallback, True
        report(str(exc))
    except Exception as exc:
        loaded = []
        report(f"{source.key}: skipped: {exc}")
    notes = take_reports()
    return _valid(loaded, source.key, notes, app), notes, busy


def _notes_of(notes: dict[Any, Any], keys: Iterable[Any]) -> list[str]:
    out = []
    for key in keys:
        value = notes.get(key)
        if type(value) is list and all(type(p) is str for p in value):
            out += value
    return out


# Fields whose values repeat across sessions (an app, a folder, a model): interned when cached,
# marshal writes each once and a reference after, and loading builds each string once.
_REPEATING = (0, 2, 3, 7, 8, 9, 10, 13)


_FIELDS = attrgetter(*Session.__slots__)  # every field at once, in C


def _cache_row(session: Session) -> list[Any]:
    row = list(_FIELDS(session))
    for i in _REPEATING:
        if type(row[i]) is str:
            row[i] = sys.intern(row[i])
    return row


def _checked(app: str, rows_by_key: dict[Any, Any], keys: Iterable[Any]) -> list[Session] | None:
    """The sessions cached under `keys`, or None if any row is damaged. Checked in bulk with
    the loops in C: each row's field types form a signature, and each distinct signature (rows
    share a handful) is checked once in Python."""
    try:
        row_lists = list(map(rows_by_key.__getitem__, keys))
        if not set(map(type, row_lists)) <= {list}:
            return None
        rows = list(chain.from_iterable(row_lists))
        if not (set(map(type, rows)) <= {list} and set(map(itemgetter(0), rows)) <= {app}
                and all(map(_signature_ok, set(map(tuple, map(map, repeat(type), rows)))))
                and _plain_ids(list(map(itemgetter(1), rows)))):
            return None
    except (KeyError, TypeError, IndexError):  # a key without rows, unhashable junk, an empty row
        return None
    return list(starmap(Session, rows))


def _signature_ok(signature: tuple[type, ...]) -> bool:
    return len(signature) == FIELD_COUNT and all(t in allowed for t, allowed in zip(signature, _ROW_TYPES, strict=True))


_VISIBLE_ASCII = bytes(range(0x21, 0x7F))


def _plain_ids(ids: list[str]) -> bool:
    """The check of cached ids that needs no regex (a key press must not load `re`): each not
    empty, one line, printable, without a blank, not starting with `-`. No cached id can then
    add a picker row or an option; the app's full grammar (`id_fits`) is applied when a store
    is read and when a cached session is looked up to be resumed (`cached_session`)."""
    if not ids:
        return True
    flat = "".join(ids)  # a newline or an escape in any id makes it unprintable
    if flat.isascii():  # the usual case, one pass in C: nothing outside `!`..`~`
        if flat.encode().translate(None, _VISIBLE_ASCII) or "" in ids:
            return False
    elif not flat.isprintable() or " " in flat or "" in ids:
        return False
    return min(ids)[0] > "-" or not any(ident.startswith("-") for ident in ids)  # the scan only if it may


def _valid(sessions: list[Session], key: str, notes: list[str], app: App) -> list[Session]:
    """Sessions whose id can be shown, passed around and typed: printable, one line, not empty,
    and of the app's own form (`id_pattern`). An id is a file name or a database row other
    programs write (Crush keeps its database in the project folder: a cloned repository can
    plant one), and an id like `--dangerously-skip-permissions` must never reach a command line."""
    kept = [s for s in sessions if s.id and s.id.isprintable()]
    if len(kept) < len(sessions):
        notes.append(f"{key}: skipped {len(sessions) - len(kept)} session(s) whose id holds control characters")
    fitting = [s for s in kept if id_fits(app.id_pattern, s.id)]
    if len(fitting) < len(kept):
        odd = [s.id[:60] for s in kept if not id_fits(app.id_pattern, s.id)]
        notes.append(f"{key}: skipped {len(odd)} session(s) whose id is not of {app.name}'s form "
                     f"({', '.join(map(repr, odd[:3]))}{', ...' if len(odd) > 3 else ''})")
    return fitting


def _newest_first(sessions: list[Session]) -> list[Session]:
    """Newest first; sessions of the same millisecond by app and id, so the order is stable."""
    mtimes = list(map(attrgetter("mtime"), sessions))
    if mtimes == sorted(mtimes, reverse=True) and len(sessions) > 1:
        keys = list(map(attrgetter("mtime", "app", "id"), sessions))
        if keys == sorted(keys, reverse=True):
            return sessions  # stored newest first, and nothing changed: the usual key press
    if len(set(mtimes)) < len(mtimes):  # ties: the full key (costs a tuple per session)
        return sorted(sessions, key=attrgetter("mtime", "app", "id"), reverse=True)
    return sorted(sessions, key=attrgetter("mtime"), reverse=True)


def load(env: Env, apps: Iterable[App] | None = None, refresh: bool = True) -> Index:
    """`build`, falling back to the bundled demo home when the machine has no sessions; apps
    None: the apps each home has (apps.present)."""
    app_list = list(apps) if apps is not None else present(env)
    index = build(env, app_list, refresh)
    if not index.sessions and not refresh:
        index = build(env, app_list, refresh=True)
    # The demo home is there in a checkout (`make run`), not in an installed package.
    if not index.sessions and not env.get("SESSIDX_HOME") and not index.problems and os.path.isdir(DEMO_HOME):
        demo = demo_env(env)
        if apps is None:
            app_list = present(demo)
        index = build(demo, app_list, refresh)
        if not index.sessions and not refresh:
            index = build(demo, app_list, refresh=True)
        index.demo = True
    return index
