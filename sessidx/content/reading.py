"""Indexing: sources read incrementally (appends only), by forked readers while this process writes (and reads)."""

from __future__ import annotations

import marshal
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from sessidx import conversation
from sessidx.apps import app_named
from sessidx.content import leaves, store
from sessidx.content.cjk import cjk_apart
from sessidx.content.store import Progress, rebuild_if_mostly_dead
from sessidx.content.tokens import counted, terms
from sessidx.conversation import by_records, messages_from, transcript_of
from sessidx.model import Session
from sessidx.readers import open_regular
from sessidx.redact import mask, scan_in_c, warm

if TYPE_CHECKING:
    import sqlite3  # the package: store opens the C module alone

MESSAGE_CAP = 64 * 1024  # what is indexed of one message's text
# Text per FTS row. Longer rows make a smaller index and a faster search (a word's list holds
# one entry per row, not per message); a snippet then looks through the row's records for
# the words, which is what keeps rows this short.
CHUNK_TEXT = 8 * 1024
# A transcript is read this much at a time, each window stored before the next is read: a
# refresh holds one window's text, however much the transcript grew.
WINDOW = 8 * 1024 * 1024
FINGERPRINT = conversation.FINGERPRINT  # bytes before the indexed end that must be unchanged for an append
COMMIT_SECONDS = 1.0  # work kept if interrupted
BULK = 100  # sources to read at once (a first index): FTS5's merging waits, a second process helps


def indexable(text: str) -> str:
    """The text as it goes into FTS5: secrets out, CJK characters apart."""
    return cjk_apart(mask(text, " "))


class _Source:
    """One session's transcript or conversation as the index sees it."""

    def __init__(self, session: Session, app: Any) -> None:
        self.session = session
        self.app = app
        self.key = session.key
        self.path = transcript_of(app, session)  # where the listing found it (a Codex home moved)
        self.incremental = by_records(app, self.path)
        st = _stat(self.path) if self.path else None
        self.size = st[0] if st else 0
        # documents and databases: the session's own last use says whether it changed
        self.stamp = " ".join(str(n) for n in [*(st or ()), session.mtime])


def _stat(path: str) -> tuple[int, int, int, int] | None:
    """(size, mtime_ns, ctime_ns, inode): a rewrite with its mtime put back changes the ctime."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def sources_of(sessions: list[Session]) -> list[_Source]:
    out = []
    for s in sessions:
        app = app_named(s.app)
        if app is not None and (hasattr(app, "said") or hasattr(app, "conversation")):
            out.append(_Source(s, app))
    return out


def refresh(db: sqlite3.Connection, sessions: list[Session], report: Callable[[Progress], None] | None = None,
            planned: Callable[[int], None] | None = None) -> dict[str, int]:
    """Bring the index up to date with `sessions`; returns counts of what was read. `planned`
    is told, before any reading, how many sessions are new, changed or gone. Commits every
    second, so an interrupt keeps what was done."""
    wanted = {s.key: s for s in sources_of(sessions)}
    known = {key: (sid, stamp, done, tail) for sid, key, stamp, done, tail in
             db.execute("SELECT id, key, stamp, done, tail FROM source")}
    stats = {"sources": 0, "appended": 0, "reindexed": 0, "removed": 0, "bytes": 0, "messages": 0}
    gone = [known[key][0] for key in known.keys() - wanted.keys()]
    todo = [s for key, s in wanted.items() if key not in known or known[key][1] != s.stamp]
    if todo:
        scan_in_c()  # every message is masked: key words in one pass (a search's snippets stay in Python)
    if planned:
        planned(len(todo) + len(gone))
    progress = Progress(len(todo), sum(s.size for s in todo))
    if report and todo:
        report(progress)
    bulk = len(todo) >= BULK
    if bulk:  # no merging while loading: a few large segments search as fast as one
        db.execute("INSERT INTO said(said, rank) VALUES ('automerge', 0)")
        # and no fsync, its final checkpoint's included: the index is a cache of what the
        # transcripts hold, and a power cut that damages it costs what this load costs anyway
        # (a damaged index is made again)
        db.execute("PRAGMA synchronous=OFF")
    db.execute("BEGIN")
    db.execute("CREATE TABLE IF NOT EXISTS unfinished(what TEXT PRIMARY KEY) WITHOUT ROWID")  # an index of before
    if bulk:  # its end takes the typo tier's terms from FTS5: cut short, the next refresh does
        db.execute("INSERT OR IGNORE INTO unfinished VALUES ('terms')")
    for source_id in gone:
        _unlink(db, source_id)
        db.execute("DELETE FROM source WHERE id = ?", (source_id,))
        stats["removed"] += 1
    last_commit = time.monotonic()
    written = _Written(db, bulk)
    # where each source's reading starts, then the helpers reading them while this process
    # writes their rows (and, with two cores, reads some too)
    plans = [(source, _start(source, known.get(source.key))) for source in todo]
    helpers = _Helpers.start(plans) if len(plans) >= BULK else None
    try:
        ids = [_prepare(db, source, known.get(source.key), start, stats) for source, start in plans]
        for i, got in _read_all(plans, helpers):
            source, source_id = plans[i][0], ids[i]
            while True:
                more = _more(source, got)
                _store(db, source, source_id, got, stats, written, finished=not more)
                if time.monotonic() - last_commit > COMMIT_SECONDS:  # also a sign of life, for waiters
                    written.save(db)
                    db.execute("COMMIT")
                    db.execute("BEGIN")
                    last_commit = time.monotonic()
                    if report:
                        report(progress)
                if not more or got is None:
                    break
                got = _read(source, got[1])  # the next window, here (a forked reader hands over one)
            progress.done_sources += 1
            progress.done_bytes += source.size
        if bulk or db.execute("SELECT 1 FROM unfinished WHERE what = 'terms'").fetchone():
            written.flush(db)
            _all_terms(db)
            db.execute("DELETE FROM unfinished WHERE what = 'terms'")
        written.save(db)
        db.execute("COMMIT")
        if report and todo:
            report(progress)
    except BaseException:
        if db.in_transaction:  # a failed COMMIT (the disk is full) has rolled back already
            db.execute("ROLLBACK")  # the source being read is read again next time
        raise
    finally:
        if helpers is not None:
            helpers.stop()
        if bulk:
            db.execute("INSERT INTO said(said, rank) VALUES ('automerge', 4)")  # FTS5's default
    rebuild_if_mostly_dead(db)
    if stats["sources"] and not bulk:
        db.execute("INSERT INTO said(said, rank) VALUES ('merge', 64)")  # a little merging, bounded
    if stats["sources"] or stats["removed"]:
        db.executescript("PRAGMA incremental_vacuum;")  # stepped to its end (execute frees one page)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the index is one file again, not twice its size
    if bulk:  # (only this connection's setting: one that failed above is closed by its process)
        db.execute("PRAGMA synchronous=NORMAL")
    return stats


def _start(source: _Source, before: tuple[Any, ...] | None) -> int:
    """Where reading the source starts: after what is already indexed when the bytes before
    that point are unchanged (an append), else at 0. Appends grow a file; one changed
    without growing was rewritten."""
    if before is None:
        return 0
    _, _, done, tail = before
    if source.incremental and done and source.size > done and _bytes_before(source.path, done) == tail:
        return int(done)
    return 0


def _prepare(db: sqlite3.Connection, source: _Source, before: tuple[Any, ...] | None, start: int,
             stats: dict[str, int]) -> int:
    """The source's id, its row made or brought up to date; read from 0, its old rows unlinked."""
    meta = marshal.dumps(tuple(source.session))
    if before is None:
        cur = db.execute("INSERT INTO source(key, stamp, session, mtime, title) VALUES (?, '', ?, ?, ?)",
                         (source.key, meta, source.session.mtime, source.session.title or ""))
        return int(cur.lastrowid or 0)
    source_id, stamp, _, _ = before
    db.execute("UPDATE source SET session = ?, mtime = ?, title = ? WHERE id = ?",
               (meta, source.session.mtime, source.session.title or "", source_id))
    if start:
        stats["appended"] += 1
        return int(source_id)
    _unlink(db, source_id)
    stats["reindexed"] += bool(stamp)  # not one planned and never read (an interrupted first index)
    return int(source_id)


def _unlink(db: sqlite3.Connection, source_id: int) -> None:
    """The source's FTS rows belong to no chunk from now on: dead, skipped by every search.
    Nothing of it is indexed any more, whatever happens before it is read again."""
    db.execute("DELETE FROM chunk WHERE source = ?", (source_id,))
    db.execute("UPDATE source SET stamp = '', done = 0, tail = NULL WHERE id = ?", (source_id,))


def _bytes_before(path: str | None, end: int) -> bytes | None:
    f = open_regular(path) if path else None
    if f is None:
        return None
    with f:
        f.seek(max(0, end - FINGERPRINT))
        return f.read(min(end, FINGERPRINT))


Plan = tuple[_Source, int]  # a source and the byte offset its reading starts at
# What was read of one source, ready to store: its FTS rows (chunks_of), where reading ended,
# the bytes just before that end, how many messages and bytes were read. None: a store that
# cannot be read right now.
Chunk = tuple[list[int], str, list[int]]  # an FTS row: its records' places, its text, its messages' first tokens
Read = tuple[list[Chunk], int, bytes | None, int, int] | None


def _read(source: _Source, start: int) -> Read:
    """One source read (from `start`) and made ready for FTS5, with no database at hand: this
    runs in another process too."""
    if source.incremental:
        path = source.path or ""
        messages, end, before = messages_from(source.app, path, start, WINDOW)
        return chunks_of(messages), end, before or _bytes_before(path, end), len(messages), end - start
    try:
        conversation = source.app.conversation(source.session)
    except Exception:  # a store busy or broken right now: the others go on, this one is tried again
        return None
    messages = [(i, role, text) for i, (role, text) in enumerate(conversation)]
    return chunks_of(messages), 0, None, len(messages), source.size


def _more(source: _Source, got: Read) -> bool:
    """Whether a window of the source was read and more of it is left to read."""
    return got is not None and source.incremental and got[4] > 0 and got[1] < source.size


def _store(db: sqlite3.Connection, source: _Source, source_id: int, got: Read, stats: dict[str, int],
           written: _Written, finished: bool = True) -> None:
    """What was read of a source; `finished` when that was all of it. Until then its stamp stays
    empty, so an interrupted refresh goes on next time from the last window stored."""
    stats["sources"] += finished
    if got is None:
        stats["failed"] = stats.get("failed", 0) + 1
        db.execute("UPDATE source SET stamp = '' WHERE id = ?", (source_id,))
        return
    chunks, end, tail, messages, read = got
    _insert(db, source_id, chunks, written)
    if not written.bulk:  # (a first index takes its terms from FTS5's vocabulary at its end, in C)
        written.add_terms(db, terms_of(chunks))
    db.execute("UPDATE source SET stamp = ?, done = ?, tail = ? WHERE id = ?",
               (source.stamp if finished else "", end, tail, source_id))
    stats["messages"] += messages
    stats["bytes"] += read


def _read_all(plans: list[Plan], helpers: _Helpers | None) -> Iterator[tuple[int, Read]]:
    """(index in `plans`, what was read) of each planned source, in any order. With helpers
    (a first index: many sources) they are read by the forked readers, each taking the next
    unread source, while this process writes what they hand over to SQLite (and reads too
    when only one could be started); without (a few sources, or where no helper can be
    started) here, as are any a helper took but did not hand over (it died)."""
    if helpers is None:
        for i, (source, start) in enumerate(plans):
            yield i, _read(source, start)
        return
    handed = [False] * len(plans)
    mine_done = len(helpers.children) >= READERS  # enough readers: this process only writes
    try:
        while not mine_done or not helpers.finished:
            # what the helpers read first: they wait to hand it over; once this process has
            # nothing left to read (or reads nothing), it waits for the rest
            for i, got in helpers.received(wait=mine_done):
                if 0 <= i < len(plans) and not handed[i]:
                    handed[i] = True
                    yield i, got
            if not mine_done:
                i = helpers.take()
                mine_done = i >= len(plans)
                if not mine_done and not handed[i]:  # (a reader that went on without the token)
                    handed[i] = True
                    yield i, _read(*plans[i])
    finally:
        helpers.stop()
    for i in (i for i, done in enumerate(handed) if not done):  # taken by a helper that died
        yield i, _read(*plans[i])


# Forked readers of a first index: with this many, this process only writes to SQLite (a
# third of the work: FTS5's tokenizing). One core is left for the writer: with two cores,
# one reader, and this process reads too when it has nothing to write. (More processes than
# cores gain nothing: Linux shares the CPU between sessions, not processes.)
READERS = 2


class _Child:
    """One forked reader as this process sees it: its pid and the pipe it hands Reads over."""

    def __init__(self, pid: int, results: int) -> None:
        self.pid = pid
        self.results = results
        self.buffer = bytearray()
        self.finished = False  # it handed over all it will: its pipe is closed
        self.reaped = False

    def gone(self) -> bool:
        if not self.reaped:
            try:
                self.reaped = os.waitpid(self.pid, os.WNOHANG)[0] != 0
            except ChildProcessError:
                self.reaped = True
        return self.reaped


class _Helpers:
    """Forked readers of the plans, by os.fork and pipes (`multiprocessing` costs a first
    index 40 ms of imports before it starts). Every process takes the next plan from a
    counter in shared memory, guarded by a token in a pipe; each helper hands each source's
    Read over a pipe of its own, marshalled, and dies with this process."""

    def __init__(self, counter: Any, token: tuple[int, int], parent: int | None = None) -> None:
        self.counter = counter
        self.parent = parent  # in a helper: its parent's pid
        self.token = token
        self.children: list[_Child] = []

    @classmethod
    def start(cls, plans: list[Plan]) -> _Helpers | None:
        """Helpers reading `plans`, up to READERS and one fewer than the cores (fewer where no
        more can be forked); None with one core, or where fork or shared memory is not
        allowed (a sandbox)."""
        try:
            cores = len(os.sched_getaffinity(0))
            if cores < 2:
                return None
            import mmap

            counter = mmap.mmap(-1, 8)  # anonymous and shared: the children see what this writes
            token = os.pipe()
            # Its reading end never blocks (each process waits in select): a process that saw the
            # token and lost it to another must not block for good when that one dies holding it.
            os.set_blocking(token[0], False)
        except (AttributeError, ImportError, OSError, ValueError):
            return None
        warm()  # the readers' patterns, compiled once for all of them
        helpers = cls(counter, token)
        try:
            os.write(token[1], b".")
            for _ in range(min(READERS, cores - 1)):
                helpers.children.append(helpers._fork(plans))
        except OSError:
            pass
        if not helpers.children:
            helpers.stop()
            return None
        return helpers

    def _fork(self, plans: list[Plan]) -> _Child:
        results = os.pipe()
        _bigger_pipe(results[1])
        parent = os.getpid()
        try:
            pid = os.fork()
        except OSError:
            os.close(results[0])
            os.close(results[1])
            raise
        if pid == 0:  # the child: never returns into the caller
            code = 1
            try:
                os.close(results[0])
                for sibling in self.children:  # its elder siblings' pipes are the parent's
                    os.close(sibling.results)
                self.children = []
                self.parent = parent
                self.run(plans, results[1])
                code = 0
            finally:
                os._exit(code)
        os.close(results[1])
        os.set_blocking(results[0], False)
        return _Child(pid, results[0])

    @property
    def finished(self) -> bool:
        return all(child.finished for child in self.children)

    def take(self) -> int:
        """The next plan's index, for whichever process asks."""
        self._token()
        try:
            i = int.from_bytes(self.counter[:8], "little")
            self.counter[:8] = (i + 1).to_bytes(8, "little")
        finally:
            os.write(self.token[1], b".")
        return i

    def _token(self) -> None:
        """The token taken; or, where another process died holding it, a new one in its place
        (one that was only stopped may come back with the old one: then a source may be read
        twice, and is handed over once)."""
        import select

        waited = 0
        while True:
            if select.select([self.token[0]], [], [], 1.0)[0]:
                try:
                    os.read(self.token[0], 1)
                    return
                except BlockingIOError:  # another process took it first (the pipe does not block)
                    continue
            waited += 1
            if self.parent is not None:
                if os.getppid() != self.parent:
                    os._exit(0)  # a helper, its parent gone
                if waited >= 5:
                    return  # a sibling died holding it
            elif any(child.gone() for child in self.children):
                return

    def run(self, plans: list[Plan], results: int) -> None:
        """A child's work: it never touches the parent's database connection, holds none of
        its lock, and dies with it (a parent killed by SIGKILL or SIGTERM must not leave it
        blocked on a full pipe for good)."""
        import signal

        for f in store.held:  # the lock is the parent's alone: it ends when the parent does
            if not f.closed:
                os.close(f.fileno())
        parent = self.parent or 0
        _die_with(parent)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the parent, which stops this
        while (i := self.take()) < len(plans):
            try:
                got = _read(*plans[i])
            except Exception:
                got = None
            if os.getppid() != parent:  # where there is no PR_SET_PDEATHSIG
                return
            data = marshal.dumps((i, got))
            _write_all(results, len(data).to_bytes(8, "little") + data)

    def received(self, wait: bool) -> Iterator[tuple[int, Read]]:
        """What the helpers handed over so far; with `wait`, at least one more, or their end."""
        while True:
            for child in self.children:
                if child.finished:
                    continue
                try:
                    data = os.read(child.results, 1 << 20)
                except BlockingIOError:
                    data = None
                if data == b"":
                    child.finished = True  # it ended (or died): what it did not hand over is read here
                elif data:
                    child.buffer += data
                buffer = child.buffer
                while len(buffer) >= 8 and len(buffer) >= 8 + (n := int.from_bytes(buffer[:8], "little")):
                    item = marshal.loads(buffer[8:8 + n])
                    del buffer[:8 + n]
                    wait = False
                    yield item
            if not wait or self.finished:
                return
            import select

            select.select([c.results for c in self.children if not c.finished], [], [], 0.5)

    def stop(self) -> None:
        """The helpers gone, killed if need be, and the pipes closed (once: then nothing)."""
        import signal

        if self.counter.closed:
            return
        for child in self.children:
            if not child.reaped:
                try:
                    if not child.finished:
                        os.kill(child.pid, signal.SIGKILL)
                    os.waitpid(child.pid, 0)
                except OSError:  # gone already
                    pass
            os.close(child.results)
        for fd in self.token:
            os.close(fd)
        self.counter.close()


def _bigger_pipe(fd: int) -> None:
    """Room for a few sources' text in the pipe (Linux: up to 1 MB): the helper reads on while
    this process writes to SQLite."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except (ImportError, OSError):
        pass


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _die_with(parent: int) -> None:
    """SIGKILL to this process when its parent ends (Linux's PR_SET_PDEATHSIG)."""
    import signal

    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG = 1
        except (ImportError, OSError, AttributeError):
            pass
    if os.getppid() != parent:  # it ended before the line above
        os._exit(0)


def chunks_of(messages: list[tuple[int, str, str]]) -> list[Chunk]:
    """The messages as FTS rows: consecutive records joined up to CHUNK_TEXT characters, each
    row with the places of its records (byte offsets, or indexes in a conversation) and where
    each message starts among its tokens. A message is indexed with the parts of its
    camelCase words after it (tokens.counted)."""
    chunks: list[Chunk] = []
    places: list[int] = []
    texts: list[str] = []
    starts: list[int] = []
    size = tokens = 0
    for i, (pos, _, text) in enumerate(messages):
        if not places or places[-1] != pos:
            places.append(pos)
        said = indexable(text[:MESSAGE_CAP])
        starts.append(tokens)
        many, parts = counted(said)
        tokens += many + len(parts)
        if parts:
            said += "\n" + " ".join(parts)
        texts.append(said)
        size += len(said)
        # a record is never split: its messages go in the same row
        if size >= CHUNK_TEXT and (i + 1 == len(messages) or messages[i + 1][0] != pos):
            chunks.append((places, "\n".join(texts), starts))
            places, texts, starts, size, tokens = [], [], [], 0, 0
    if texts:
        chunks.append((places, "\n".join(texts), starts))
    return [c for c in chunks if c[1].strip()]


def _all_terms(db: sqlite3.Connection) -> None:
    """Every term of FTS5's index into `term`, spelt backwards: after a first index, one pass
    over the index's leaf pages (content/leaves.py; FTS5's vocabulary where they cannot be
    read) instead of a set of every word of every message in Python."""
    found = leaves.terms(db)
    if found is None:
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.said_terms USING fts5vocab(main, said, row)")
        found = {t for (t,) in db.execute("SELECT term FROM temp.said_terms")}
    db.executemany("INSERT OR IGNORE INTO term VALUES (?)", ((t[::-1],) for t in found))


def terms_of(chunks: list[Chunk]) -> set[bytes]:
    """The distinct terms of a source's rows, in UTF-8 (for the typo tier's look at word ends),
    a row at a time: a window's words all at once would hold a list of a million of them."""
    out: set[bytes] = set()
    for _, body, _ in chunks:
        out |= terms(body)
    return out


class _Written:
    """FTS rows and characters of text written since the last rebuild, kept here while
    indexing and saved just before each commit: a statement that may change several rows
    (as an UPDATE of `rows` may) makes FTS5 write out what it holds in memory, a segment
    per session otherwise (measured: 1.0 s of a 3.2 s cold index). The FTS rows themselves
    wait here too, up to BATCH_TEXT characters: FTS5 tokenizes a batch faster than the same
    rows one session at a time between the reads of the others."""

    def __init__(self, db: sqlite3.Connection, bulk: bool = False) -> None:
        self.bulk = bulk
        self.fts, self.text = db.execute("SELECT fts, text FROM rows").fetchone()
        self.pending: list[tuple[int, str]] = []
        self.pending_text = 0
        self.terms: set[bytes] = set()  # written to `term` by this refresh

    def add_terms(self, db: sqlite3.Connection, found: set[bytes]) -> None:
        """The terms not yet in `term`, there, each spelt backwards (its end is what is looked up)."""
        new = found - self.terms
        if new:
            self.terms |= new
            db.executemany("INSERT OR IGNORE INTO term VALUES (?)", [(t.decode()[::-1],) for t in new])

    def add(self, db: sqlite3.Connection, rows: list[tuple[int, str]]) -> None:
        self.pending += rows
        self.pending_text += sum(len(body) for _, body in rows)
        if self.pending_text >= BATCH_TEXT:
            self.flush(db)

    def flush(self, db: sqlite3.Connection) -> None:
        if self.pending:
            db.executemany("INSERT INTO said(rowid, body) VALUES (?, ?)", self.pending)
        self.pending, self.pending_text = [], 0

    def save(self, db: sqlite3.Connection) -> None:
        self.flush(db)
        db.execute("UPDATE rows SET fts = ?, text = ?", (self.fts, self.text))


BATCH_TEXT = 1024 * 1024


def _insert(db: sqlite3.Connection, source_id: int, chunks: list[Chunk], written: _Written) -> None:
    if not chunks:
        return
    first = written.fts + 1  # row ids are never used twice
    db.executemany("INSERT INTO chunk(id, source, places, starts) VALUES (?, ?, ?, ?)",
                   [(first + i, source_id, marshal.dumps(places), marshal.dumps(starts))
                    for i, (places, _, starts) in enumerate(chunks)])
    written.add(db, [(first + i, c[1]) for i, c in enumerate(chunks)])
    written.fts += len(chunks)
    written.text += sum(len(c[1]) for c in chunks)
