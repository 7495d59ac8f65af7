"""On a host: the listing a refresh asks for (`remote.LOADER`'s `--rows KEEP [DIGEST]`).

Lean on purpose, because it is most of a refresh: it imports what the listing needs (the
index and the apps), not `remote` and its `json` (and `re`, `enum`), nor `hashlib` (and
OpenSSL): the rows' digest is a BLAKE2b of their marshal. `json` is imported only when rows
go out.

What was sent is kept: each answer's rows are written to `remote/rows/<digest>.marshal` in
the host's sessidx cache (the newest few are kept), so that the next refresh of a caller that
holds DIGEST gets only the rows that changed since, and the keys of those gone; a caller whose
digest is not kept (another machine's, an old one) gets every row.

A host where nothing changes answers `same` without building the listing: once SETTLED
builds in a row found nothing changed, the next runs under a `freshness.Watch`, and its record
(every file and folder the apps' `sources()` looked at), the index cache's stamp and the
answer's digest are kept in `remote/rows/fresh.marshal`; a caller holding that digest, while
the record holds (one bulk stat) and the index cache is as it was, is answered from them: no
app module, no rows, no digest made.
"""

from __future__ import annotations

import marshal
import os
import sys

from sessidx.cache import write
from sessidx.config import Env, current_env  # (light: a listing needs it anyway)

KEPT_ANSWERS = 8  # a few callers (machines, homes) may refresh against one host, each its own digest


def _digest(data: bytes) -> str:
    try:
        from _blake2 import blake2b  # what hashlib's own blake2b is, without OpenSSL
    except ImportError:  # a python built without it
        from hashlib import sha256

        return sha256(data).hexdigest()[:32]
    return blake2b(data, digest_size=16).hexdigest()


def _answers_dir(env_vars: dict[str, str]) -> str:
    base = env_vars.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "sessidx", "remote", "rows")


def _kept(folder: str, digest: str) -> list[tuple[object, ...]] | None:
    """The rows answered under `digest`, if they are kept here."""
    if not digest.isalnum() or len(digest) > 64:
        return None
    try:
        with open(os.path.join(folder, digest + ".marshal"), "rb") as f:
            rows = marshal.loads(f.read())  # (marshal.load of a file reads it in small pieces: 20x slower)
    except (OSError, ValueError, EOFError, TypeError):
        return None
    return rows if type(rows) is list else None


def _keep(folder: str, digest: str, data: bytes) -> None:
    """The answer's rows kept under their digest; the oldest beyond KEPT_ANSWERS removed.
    A cache that cannot be written only means full answers."""
    path = os.path.join(folder, digest + ".marshal")
    try:
        if os.path.exists(path):
            os.utime(path)  # answered again: among the newest
            return
        if write(path, data):
            return
        entries = [(e.stat().st_mtime_ns, e.path) for e in os.scandir(folder)
                   if (e.name.endswith(".marshal") and e.name != FRESH) or e.name.endswith(".tmp")]
    except OSError:
        return
    answers = sorted((entry for entry in entries if entry[1].endswith(".marshal")), reverse=True)
    import time

    minute_ago = time.time_ns() - 60 * 10**9
    stale = [entry for entry in entries if entry[1].endswith(".tmp") and entry[0] < minute_ago]  # a killed call's
    for _, old in answers[KEPT_ANSWERS:] + stale:
        try:  # noqa: SIM105 - contextlib would load functools and collections
            os.unlink(old)
        except OSError:
            pass


FRESH = "fresh.marshal"  # in the answers' folder: (code, digest, count, settled, index stamp, record, keep, total)
SETTLED = 2  # builds in a row that found nothing changed before one is watched (a Watch costs more than a build)


def _code() -> str:
    """This code's version: the name of the folder the loader unpacked it in."""
    return os.path.basename(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _stamp(path: str | None) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path) if path else None
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns) if st else None


class _Last:
    """What the last build here answered, and whether its record (freshness.Watch) stands."""

    def __init__(self, folder: str) -> None:
        self.path = os.path.join(folder, FRESH)
        self.digest: str | None = None
        self.count = self.settled = self.keep = self.total = 0
        self.stamp: object = None
        self.record: bytes | None = None
        try:
            with open(self.path, "rb") as f:
                code, digest, count, settled, stamp, record, keep, total = marshal.loads(f.read())
        except (OSError, ValueError, EOFError, TypeError):
            return
        if code == _code() and type(digest) is str and all(type(n) is int for n in (count, settled, keep, total)):
            self.digest, self.count, self.settled, self.stamp = digest, count, settled, stamp
            self.keep, self.total = keep, total
            self.record = record if type(record) is bytes else None

    def still(self, env: Env, known: list[str], keep: int) -> bool:
        """Whether nothing changed here since `known`'s rows were answered (to a caller keeping
        as many): the index cache as it was and every file and folder the listing looked at
        (one bulk stat)."""
        if self.record is None or known != [self.digest] or keep != self.keep:
            return False
        from sessidx.index import cache_path

        if self.stamp is None or _stamp(cache_path(env)) != self.stamp:
            return False
        from sessidx.freshness import fresh

        return fresh(self.record, env)

    def save(self, env: Env, digest: str, count: int, settled: int, record: bytes | None, keep: int,
             total: int) -> None:
        from sessidx.index import cache_path

        # a record not written only means builds
        write(self.path, marshal.dumps((_code(), digest, count, settled, _stamp(cache_path(env)), record, keep,
                                        total)))


def serve_rows(args: list[str]) -> int:
    """The newest sessions here (`KEEP`, as `hosts.newest_count` cuts them: the caller keeps no
    more), archived ones too, in `Session`'s field order (both ends run the same code): one
    header line (`sessidx-rows MODE DIGEST COUNT TOTAL`: no JSON to read for a `same`; TOTAL
    counts the sessions before the cut), then nothing when the rows' digest is `known`'s (`same`), the rows that changed
    and the keys gone when the rows of `known` are kept here (`delta`), else one JSON array of
    every row. One `json.dumps` of the whole answer: a line per row (`list --json`) cost a
    host with 2,000 sessions a sixth of a second.

    A build is watched (its record kept for `_Last.still`) only once SETTLED builds in a row
    found nothing changed for this caller: recording what the listing looks at costs more than
    the listing, which is worth it on a quiet host, not on one whose sessions are moving on."""
    import gc

    gc.disable()  # as cli.main: thousands of small objects, no cycles
    from sessidx.hosts import HOST_ROWS, newest_count

    keep = int(args[0]) if args[:1] and args[0].isdigit() else HOST_ROWS
    known = args[1:2]
    env = current_env()
    folder = _answers_dir(env.vars)
    last = _Last(folder)
    if known and last.still(env, known, keep):
        sys.stdout.buffer.write(b"sessidx-rows same %s %d %d\n" % (known[0].encode(), last.count, last.total))
        return 0
    from operator import attrgetter

    from sessidx.apps import present
    from sessidx.freshness import Watch
    from sessidx.index import build
    from sessidx.model import Session

    watch = Watch(env) if known == [last.digest] and last.settled >= SETTLED else None
    if watch is not None:
        with watch:  # what the listing looks at, so that the next calls may skip it
            index = build(env, present(env))  # no demo home: a host with none has none
    else:
        index = build(env, present(env))
    rows = list(map(attrgetter(*Session.__slots__), index.sessions))  # newest first
    total = len(rows)
    del rows[newest_count(rows, keep):]
    # the digest of the rows' marshal (a few ms), so that `same` costs no JSON; version 2, whose
    # bytes depend on the values alone (3 and later mark shared and interned objects, which
    # differ between rows read from the index's cache and rows just parsed)
    data = marshal.dumps(rows, 2)
    digest = _digest(data)
    same = known == [digest]
    base = None if same or not known else _kept(folder, known[0])
    mode = "same" if same else "delta" if base is not None else "full"
    head = b"sessidx-rows %s %s %d %d\n" % (mode.encode(), digest.encode(), len(rows), total)
    body = b""
    if base is not None:
        import json

        before = {(r[0], r[1]): r for r in base if type(r) is tuple and len(r) > 1}
        changed = [r for r in rows if before.pop((r[0], r[1]), None) != r]
        body = json.dumps({"gone": list(before), "rows": changed}, separators=(",", ":")).encode() + b"\n"
    elif not same:
        import json

        body = json.dumps(rows, separators=(",", ":")).encode() + b"\n"
    sys.stdout.buffer.write(head + body)
    sys.stdout.flush()
    _keep(folder, digest, data)  # after the answer is out: the caller does not wait for it
    settled = last.settled + 1 if same and last.digest == digest else 0
    last.save(env, digest, len(rows), settled, watch.record() if watch is not None else None, keep, total)
    return 0
