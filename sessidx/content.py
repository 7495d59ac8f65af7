"""The content index: what was said in each session, searchable with SQLite FTS5.

It lives in `$XDG_CACHE_HOME/sessidx/content.sqlite` (folder 0700, file 0600), never beside the
agents' files, and holds, per session, the user prompts, the assistant replies and the short
words of tool calls (commands, paths), not tool outputs over a few KiB, images or other
payloads, and never a secret (sessidx.redact). `SESSIDX_CONTENT=0` turns it off;
`sessidx search --drop` deletes it.

The FTS5 table is contentless: the index holds the words, not the text. A row is a stretch of
one session's conversation (consecutive records, up to CHUNK_TEXT characters); its `chunk`
entry names the session and the places of its records (byte offsets in a JSONL transcript,
or indexes in a conversation), from which a hit's snippet is read again. Row ids count up
from 1 and are never used twice, which keeps FTS5's lists of them small. FTS5 here (SQLite
3.40) cannot delete a contentless row without its text, so when a source is read again from
its start, or is gone, its chunks are deleted and its rows left behind, dead: every search
joins `chunk` and skips them. Once dead rows outnumber live ones, the index is rebuilt.

Appends are read incrementally: per source, how far it was indexed and the 64 bytes just
before that point. Same bytes there: only what follows is read. Shorter, or other bytes: the
source was rewritten and is indexed again. Lines over LINE_CAP are skipped unread.
"""

from __future__ import annotations

import marshal
import os
import time

from sessidx.conversation import by_records, lines_holding, messages_from, safe_said
from sessidx.model import Session
from sessidx.readers import json_value
from sessidx.redact import mask

TYPE_CHECKING = False  # see model.Fields
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterator, Sequence
    from typing import Any

    from sessidx.config import Env
else:
    try:  # the C module alone: the `sqlite3` package around it loads datetime and collections too
        import _sqlite3 as sqlite3
    except ImportError:
        import sqlite3

SCHEMA_VERSION = 5
MESSAGE_CAP = 64 * 1024  # what is indexed of one message's text
# Text per FTS row. Longer rows make a smaller index and a faster search (a word's list holds
# one entry per row, not per message); a snippet then looks through the row's records for
# the words, which is what keeps rows this short.
CHUNK_TEXT = 8 * 1024
# FTS5 buffers this much before writing a segment (its default is 1 MB): fewer, larger
# segments are written faster and need no merging afterwards (measured: 8 MB, 0.62 s for
# 52 MB of text, 1 MB and a final 'optimize', 1.4 s).
HASH_SIZE = 8 * 1024 * 1024
FINGERPRINT = 64  # bytes before the indexed end that must be unchanged for an append
COMMIT_SECONDS = 1.0  # work kept if interrupted
BULK = 100  # sources to read at once (a first index): FTS5's merging waits, a second process helps

# Han, kana and Hangul have no spaces between words: each character is indexed as a token,
# and a query's run of them becomes a phrase of characters.
_CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF))


def _is_cjk(c: str) -> bool:
    return any(low <= ord(c) <= high for low, high in _CJK_RANGES)


def cjk_apart(text: str) -> str:
    if text.isascii() or max(text) < "\u3040":  # both in C: most text has no CJK character
        return text
    if len(text) < 200:  # a query: not worth compiling a pattern for
        return "".join(f" {c} " if _is_cjk(c) else c for c in text)
    global _cjk
    if _cjk is None:  # compiled on first use: the class alone costs 2 ms, which a keystroke need not pay
        import re

        _cjk = re.compile("([" + "".join(f"\\u{a:04x}-\\u{b:04x}" for a, b in _CJK_RANGES) + "])")
    return str(_cjk.sub(r" \1 ", text))


_cjk: Any = None


class Hit:
    def __init__(self, session: Session, score: float, snippet: str, role: str) -> None:
        self.session = session
        self.score = score
        self.snippet = snippet
        self.role = role


class Progress:
    """What the indexer reports as it goes: sources and bytes done of all."""

    def __init__(self, sources: int, total_bytes: int) -> None:
        self.sources = sources
        self.total_bytes = total_bytes
        self.done_sources = 0
        self.done_bytes = 0
        self.started = time.monotonic()


def enabled(env: Env) -> bool:
    return env.get("SESSIDX_CONTENT") not in ("0", "off", "false", "no")


def db_path(env: Env) -> str | None:
    from sessidx.cache import cache_dir

    folder = cache_dir(env)
    return os.path.join(folder, "content.sqlite") if folder else None


def drop(env: Env) -> bool:
    """Delete the content index; whether there was one."""
    path = db_path(env)
    found = False
    for suffix in ("", "-wal", "-shm", "-journal"):
        if path and os.path.lexists(path + suffix):
            os.unlink(path + suffix)
            found = True
    return found


def connect(env: Env) -> sqlite3.Connection:
    path = db_path(env)
    if path is None:
        raise OSError("no absolute cache folder (HOME and XDG_CACHE_HOME are relative or unset)")
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600))  # 0600 before SQLite opens it
    db = sqlite3.connect(path, timeout=5, isolation_level=None)
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version == 0:  # before anything is written: pages freed by merging go back to the file system
        db.execute("PRAGMA auto_vacuum = INCREMENTAL")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    if version not in (0, SCHEMA_VERSION):  # another version's index: start over
        db.close()
        drop(env)
        return connect(env)
    if version == 0:
        _create(db)
    return db


def _create(db: sqlite3.Connection) -> None:
    db.executescript(f"""
        -- session: the Session's fields, marshalled (a keystroke need not load json)
        CREATE TABLE source(
            id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, stamp TEXT, done INTEGER NOT NULL DEFAULT 0,
            tail BLOB, session BLOB NOT NULL, mtime INTEGER NOT NULL);
        -- id: the FTS row id; places: its records' offsets (or indexes), a marshalled list
        CREATE TABLE chunk(id INTEGER PRIMARY KEY, source INTEGER NOT NULL, places BLOB NOT NULL);
        CREATE INDEX chunk_source ON chunk(source);
        -- FTS rows and characters of text written since the last rebuild, dead ones too
        CREATE TABLE rows(fts INTEGER NOT NULL, text INTEGER NOT NULL);
        INSERT INTO rows VALUES (0, 0);
        CREATE VIRTUAL TABLE said USING fts5(body, content='', columnsize=0,
                                             tokenize='unicode61 remove_diacritics 2');
        INSERT INTO said(said, rank) VALUES ('hashsize', {HASH_SIZE});
        PRAGMA user_version = {SCHEMA_VERSION};
    """)


def open_index(env: Env) -> sqlite3.Connection:
    """The index, or SessidxError saying why not (turned off, no cache folder, a broken file)."""
    from sessidx.errors import SessidxError

    if not enabled(env):
        raise SessidxError("content search is off (SESSIDX_CONTENT=0)")
    try:
        return connect(env)
    except (OSError, sqlite3.Error) as exc:
        raise SessidxError(f"cannot open the content index: {exc}") from None


def feed(env: Env, out: Callable[[str], None], query: str) -> int:
    """The picker's content mode, on each keystroke: matching sessions with their snippets,
    the query's words marked. The refresh that Ctrl-F started runs apart; this waits for it
    (fzf shows its spinner, and the header says why) so the rows are never stale. It runs
    without `sessidx.commands` and imports one app module per app hit: a keystroke's budget."""
    import sys

    from sessidx import render
    from sessidx.errors import SessidxError

    columns = "\t" + render.content_header()
    head: str | None = columns
    if read_progress(env):
        out(columns + "  (reading what was said in your sessions; the matches follow)")
        sys.stdout.flush()
        head = None
    wait_for_indexer(env, seconds=120)
    _, app, here = render.prompt_state(env.get("FZF_PROMPT"))  # Ctrl-A and Ctrl-S narrow it
    try:
        hits = search(open_index(env), query, app=app, limit=30,  # a screenful; typing narrows it
                      folder=os.environ.get("PWD", "") if here else None)
    except SessidxError as exc:
        hits, head = [], (head and f"{head}  ({render.clean(str(exc))})")
    if head is not None:
        out(head + ("  (no session says that)" if not hits and query.strip() else ""))
    words = words_of(query)
    rows = [f"{h.session.key}\t{render.content_row(h.session, h.snippet, words)}" for h in hits]
    if rows:
        out("\n".join(rows))
    return 0


def indexable(text: str) -> str:
    """The text as it goes into FTS5: secrets out (sessidx.redact), CJK characters apart."""
    return cjk_apart(mask(text, " "))


class Busy(Exception):
    """Another sessidx is indexing right now."""


LOCK_FD_VARIABLE = "SESSIDX_CONTENT_LOCK_FD"  # a child handed the lock its parent took


def lock(env: Env) -> Any:
    """An exclusive lock on indexing (an open file; closing it lets go). Raises Busy.
    A background refresh gets the lock already taken (so a search started right after it
    waits for it): its fd is named in SESSIDX_CONTENT_LOCK_FD."""
    import fcntl

    inherited = env.get(LOCK_FD_VARIABLE)
    if inherited and inherited.isdigit():
        os.environ.pop(LOCK_FD_VARIABLE, None)  # not for this process's own children
        return os.fdopen(int(inherited), "a")
    path = db_path(env)
    if path is None:
        raise OSError("no absolute cache folder")
    f = os.fdopen(os.open(path + ".lock", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600), "a")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        raise Busy() from None
    return f


def wait_for_indexer(env: Env, seconds: float) -> None:
    """Until no sessidx is indexing (or `seconds` passed): a search then sees its work."""
    import fcntl

    path = db_path(env)
    if path is None:
        return
    try:
        f = open(path + ".lock", "rb")  # noqa: SIM115 - closed below
    except OSError:
        return  # no lock file: nobody ever indexed
    with f:
        deadline = time.monotonic() + seconds
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return
            except OSError:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.05)


def start_refresh(env: Env) -> bool:
    """`sessidx search --refresh` in the background, holding the lock from this moment on;
    False when another sessidx is indexing already."""
    import subprocess
    import sys

    try:
        held = lock(env)
    except (Busy, OSError):
        return False
    with held:
        subprocess.Popen([sys.executable, "-m", "sessidx", "search", "--refresh"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                         pass_fds=(held.fileno(),), env={**os.environ, LOCK_FD_VARIABLE: str(held.fileno())})
    return True


def write_progress(env: Env, progress: Progress | None) -> None:
    """What the picker's content mode shows while a background refresh runs."""
    path = db_path(env)
    if path is None:  # never a relative path: that would write into whatever folder this runs in
        return
    path += ".progress"
    try:
        if progress is None:
            os.unlink(path)
        else:
            with open(path, "w") as f:
                f.write(f"{progress.done_sources} {progress.sources}")
    except OSError:
        pass


def read_progress(env: Env) -> tuple[int, int] | None:
    path = db_path(env)
    if path is None:
        return None
    try:
        with open(path + ".progress") as f:
            done, total = f.read().split()
        return int(done), int(total)
    except (OSError, ValueError):
        return None


# --- indexing --------------------------------------------------------------------------------

class _Source:
    """One session's transcript or conversation as the index sees it."""

    def __init__(self, session: Session, app: Any) -> None:
        self.session = session
        self.app = app
        self.key = session.key
        self.incremental = by_records(app, session.path)
        st = _stat(session.path) if session.path else None
        self.size = st[0] if st else 0
        # documents and databases: the session's own last use says whether it changed
        self.stamp = " ".join(str(n) for n in [*(st or ()), session.mtime])


def _stat(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def sources_of(sessions: list[Session]) -> list[_Source]:
    from sessidx.apps import app_named

    out = []
    for s in sessions:
        app = app_named(s.app)
        if app is not None and (hasattr(app, "said") or hasattr(app, "conversation")):
            out.append(_Source(s, app))
    return out


def refresh(db: sqlite3.Connection, sessions: list[Session],
            report: Callable[[Progress], None] | None = None) -> dict[str, int]:
    """Bring the index up to date with `sessions`; returns counts of what was read.
    Commits every second, so an interrupt keeps what was done."""
    wanted = {s.key: s for s in sources_of(sessions)}
    known = {key: (sid, stamp, done, tail) for sid, key, stamp, done, tail in
             db.execute("SELECT id, key, stamp, done, tail FROM source")}
    stats = {"sources": 0, "appended": 0, "reindexed": 0, "removed": 0, "bytes": 0, "messages": 0}
    gone = [known[key][0] for key in known.keys() - wanted.keys()]
    todo = [s for key, s in wanted.items() if key not in known or known[key][1] != s.stamp]
    progress = Progress(len(todo), sum(s.size for s in todo))
    if report and todo:
        report(progress)
    bulk = len(todo) >= BULK
    if bulk:  # no merging while loading: a few large segments search as fast as one
        db.execute("INSERT INTO said(said, rank) VALUES ('automerge', 0)")
    db.execute("BEGIN")
    for source_id in gone:
        _unlink(db, source_id)
        db.execute("DELETE FROM source WHERE id = ?", (source_id,))
        stats["removed"] += 1
    last_commit = time.monotonic()
    written = _Written(db)
    try:
        # every source's id and where its reading starts first: then they can be read in parallel
        plans = [(source, *_prepare(db, source, known.get(source.key), stats)) for source in todo]
        for source, source_id, got in _read_all(plans):
            _store(db, source, source_id, got, stats, written)
            progress.done_sources += 1
            progress.done_bytes += source.size
            if time.monotonic() - last_commit > COMMIT_SECONDS:
                written.save(db)
                db.execute("COMMIT")
                db.execute("BEGIN")
                last_commit = time.monotonic()
                if report:
                    report(progress)
        written.save(db)
        db.execute("COMMIT")
        if report and todo:
            report(progress)
    except BaseException:
        db.execute("ROLLBACK")  # the source being read is read again next time
        raise
    finally:
        if bulk:
            db.execute("INSERT INTO said(said, rank) VALUES ('automerge', 4)")  # FTS5's default
    _rebuild_if_mostly_dead(db)
    if stats["sources"] and not bulk:
        db.execute("INSERT INTO said(said, rank) VALUES ('merge', 64)")  # a little merging, bounded
    if stats["sources"] or stats["removed"]:
        db.executescript("PRAGMA incremental_vacuum;")  # stepped to its end (execute frees one page)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the index is one file again, not twice its size
    return stats


def _prepare(db: sqlite3.Connection, source: _Source, before: tuple[Any, ...] | None,
             stats: dict[str, int]) -> tuple[int, int]:
    """The source's id and where reading starts: after what is already indexed when the bytes
    before that point are unchanged (an append), else at 0 with its old rows unlinked."""
    meta = marshal.dumps(tuple(source.session))
    if before is None:
        cur = db.execute("INSERT INTO source(key, stamp, session, mtime) VALUES (?, '', ?, ?)",
                         (source.key, meta, source.session.mtime))
        return int(cur.lastrowid or 0), 0
    source_id, stamp, done, tail = before
    db.execute("UPDATE source SET session = ?, mtime = ? WHERE id = ?", (meta, source.session.mtime, source_id))
    # Appends grow a file; one changed without growing was rewritten.
    if source.incremental and done and source.size > done and _bytes_before(source.session.path, done) == tail:
        stats["appended"] += 1
        return source_id, done
    _unlink(db, source_id)
    stats["reindexed"] += bool(stamp)  # not one planned and never read (an interrupted first index)
    return source_id, 0


def _unlink(db: sqlite3.Connection, source_id: int) -> None:
    """The source's FTS rows belong to no chunk from now on: dead, skipped by every search.
    Nothing of it is indexed any more, whatever happens before it is read again."""
    db.execute("DELETE FROM chunk WHERE source = ?", (source_id,))
    db.execute("UPDATE source SET stamp = '', done = 0, tail = NULL WHERE id = ?", (source_id,))


def _bytes_before(path: str | None, end: int) -> bytes | None:
    from sessidx.readers import open_regular

    f = open_regular(path) if path else None
    if f is None:
        return None
    with f:
        f.seek(max(0, end - FINGERPRINT))
        return f.read(min(end, FINGERPRINT))


Plan = tuple[_Source, int, int]  # a source, its id, the byte offset its reading starts at
# What was read of one source, ready to store: its FTS rows (chunks_of), where reading ended,
# the bytes just before that end, how many messages and bytes were read. None: a store that
# cannot be read right now.
Read = tuple[list[tuple[list[int], str]], int, bytes | None, int, int] | None


def _read(source: _Source, start: int) -> Read:
    """One source read (from `start`) and made ready for FTS5, with no database at hand: this
    runs in another process too."""
    if source.incremental:
        path = source.session.path or ""
        messages, end = messages_from(source.app, path, start)
        return chunks_of(messages), end, _bytes_before(path, end), len(messages), end - start
    try:
        conversation = source.app.conversation(source.session)
    except Exception:  # a store busy or broken right now: the others go on, this one is tried again
        return None
    messages = [(i, role, text) for i, (role, text) in enumerate(conversation)]
    return chunks_of(messages), 0, None, len(messages), source.size


def _store(db: sqlite3.Connection, source: _Source, source_id: int, got: Read, stats: dict[str, int],
           written: _Written) -> None:
    stats["sources"] += 1
    if got is None:
        stats["failed"] = stats.get("failed", 0) + 1
        db.execute("UPDATE source SET stamp = '' WHERE id = ?", (source_id,))
        return
    chunks, end, tail, messages, read = got
    _insert(db, source_id, chunks, written)
    db.execute("UPDATE source SET stamp = ?, done = ?, tail = ? WHERE id = ?", (source.stamp, end, tail, source_id))
    stats["messages"] += messages
    stats["bytes"] += read


def _read_all(plans: list[Plan]) -> Iterator[tuple[_Source, int, Read]]:
    """Each planned source read, in any order. Many sources (a first index) are read by this
    process and a forked one at once, each taking the next unread source, while this one
    also writes to SQLite; a few are read here, as are all where no helper can be started."""
    import queue

    started = _start_helper(plans) if len(plans) >= BULK else None
    if started is None:
        for source, source_id, start in plans:
            yield source, source_id, _read(source, start)
        return
    helper, taken, results = started
    helper_done = mine_done = False
    try:
        while not (helper_done and mine_done):
            while not helper_done:  # what the helper read first: it is waiting to hand it over
                try:
                    item = results.get(timeout=0.5) if mine_done else results.get_nowait()
                except queue.Empty:
                    helper_done = mine_done and not helper.is_alive()  # it died: its sources wait for next time
                    if not mine_done:
                        break
                    continue
                if item is None:
                    helper_done = True
                else:
                    yield *plans[item[0]][:2], item[1]
            if not mine_done:
                i = _take(taken)
                mine_done = i >= len(plans)
                if not mine_done:
                    yield *plans[i][:2], _read(plans[i][0], plans[i][2])
    finally:
        if helper.is_alive():
            helper.terminate()
        helper.join()


def _start_helper(plans: list[Plan]) -> tuple[Any, Any, Any] | None:
    """A forked reader of `plans`, with the counter both take from and the queue it hands
    over on; None with one core, or where fork, shared memory or semaphores are not allowed."""
    try:
        if len(os.sched_getaffinity(0)) < 2:
            return None
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        taken = ctx.Value("q", 0)
        results = ctx.Queue()
        helper = ctx.Process(target=_helper, args=(plans, taken, results), daemon=True)
        helper.start()
    except (AttributeError, ImportError, OSError, ValueError):
        return None
    return helper, taken, results


def _take(taken: Any) -> int:
    with taken.get_lock():
        i = int(taken.value)
        taken.value = i + 1
    return i


def _helper(plans: list[Plan], taken: Any, results: Any) -> None:
    """The forked reader: it never touches the parent's database connection."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the parent, which stops this
    while (i := _take(taken)) < len(plans):
        try:
            got = _read(plans[i][0], plans[i][2])
        except Exception:
            got = None
        results.put((i, got))
    results.put(None)
    results.close()
    results.join_thread()


def chunks_of(messages: list[tuple[int, str, str]]) -> list[tuple[list[int], str]]:
    """The messages as FTS rows: consecutive records joined up to CHUNK_TEXT characters, each
    row with the places of its records (byte offsets, or indexes in a conversation)."""
    chunks: list[tuple[list[int], str]] = []
    places: list[int] = []
    texts: list[str] = []
    size = 0
    for i, (pos, _, text) in enumerate(messages):
        if not places or places[-1] != pos:
            places.append(pos)
        texts.append(text[:MESSAGE_CAP])
        size += len(texts[-1])
        # a record is never split: its messages go in the same row
        if size >= CHUNK_TEXT and (i + 1 == len(messages) or messages[i + 1][0] != pos):
            chunks.append((places, indexable("\n".join(texts))))
            places, texts, size = [], [], 0
    if texts:
        chunks.append((places, indexable("\n".join(texts))))
    return [(p, body) for p, body in chunks if body.strip()]


class _Written:
    """FTS rows and characters of text written since the last rebuild, kept here while
    indexing and saved just before each commit: a statement that may change several rows
    (as an UPDATE of `rows` may) makes FTS5 write out what it holds in memory, a segment
    per session otherwise (measured: 1.0 s of a 3.2 s cold index)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.fts, self.text = db.execute("SELECT fts, text FROM rows").fetchone()

    def save(self, db: sqlite3.Connection) -> None:
        db.execute("UPDATE rows SET fts = ?, text = ?", (self.fts, self.text))


def _insert(db: sqlite3.Connection, source_id: int, chunks: list[tuple[list[int], str]], written: _Written) -> None:
    if not chunks:
        return
    first = written.fts + 1  # row ids are never used twice
    db.executemany("INSERT INTO chunk(id, source, places) VALUES (?, ?, ?)",
                   [(first + i, source_id, marshal.dumps(places)) for i, (places, _) in enumerate(chunks)])
    db.executemany("INSERT INTO said(rowid, body) VALUES (?, ?)", [(first + i, c[1]) for i, c in enumerate(chunks)])
    written.fts += len(chunks)
    written.text += sum(len(c[1]) for c in chunks)


# --- searching -------------------------------------------------------------------------------

def parse_query(query: str) -> list[str]:
    """FTS5 phrases, one per word or `"quoted phrase"`, each quoted so no character of the
    query is FTS5 syntax. The last word, while still being typed, also matches as a prefix."""
    terms = []
    for i, part in enumerate(query.split('"')):  # odd parts were inside quotes
        for piece in [part] if i % 2 else part.split():
            words = "".join(c if c.isalnum() or c == "_" else " " for c in cjk_apart(piece)).split()
            if words:
                terms.append('"' + " ".join(words) + '"')
    # the word being typed matches as a prefix once it has 3 letters (fewer would match half the index)
    typing = terms[-1].strip('"') if terms and not query.endswith((" ", '"')) else ""
    if len(typing) >= 3 and not any(_is_cjk(c) for c in typing):
        terms[-1] += " *"
    return terms


RANKED = 5000  # more rows than this hold a word: too common to look it up session by session
RANKED_ROWS = 1000  # more rows than this hold every word: too common to rank by; newest first then
# FTS rows with their session; a row of no chunk is dead (its source was read again or is gone)
_LIVE = "FROM said JOIN chunk c ON c.id = said.rowid WHERE said MATCH ?"


def search(db: sqlite3.Connection, query: str, app: str | None = None, limit: int = 50,
           session_key: str | None = None, snippet_width: int = 120, folder: str | None = None) -> list[Hit]:
    """Sessions (of `app`, in `folder`, when given) that said every word of `query`, best first:
    those where one stretch of the conversation (a row) holds them all, by FTS5's bm25, then
    those where they are further apart; ties by recency."""
    terms = parse_query(query)
    if not terms:
        return []
    scope, scope_params = "", []
    if session_key:
        row = db.execute("SELECT id FROM source WHERE key = ?", (session_key,)).fetchone()
        if row is None:
            return []
        scope, scope_params = " AND c.source = ?", [row[0]]
    try:
        found = _together(db, " AND ".join(terms), scope, scope_params, app, None if folder else limit)
        if len(terms) > 1 and len(found) < limit:
            for source, rowid in _spread(db, terms, scope, scope_params).items():
                found.setdefault(source, (0.0, rowid))  # bm25 is negative: after every ranked one
    except sqlite3.OperationalError:
        return []  # a query FTS5 cannot parse matches nothing
    return _hits(db, found, app, limit, terms, snippet_width, folder)


def _together(db: sqlite3.Connection, match: str, scope: str, params: list[int], app: str | None,
              limit: int | None) -> dict[int, tuple[float, int]]:
    """Per source, its best row holding every word, with its bm25 score. Words too common to rank
    by: the `limit` newest sessions holding them (of `app`), each with its newest row."""
    (rows,) = db.execute("SELECT count(*) FROM said WHERE said MATCH ?", [match]).fetchone()  # dead ones too
    if rows > RANKED_ROWS and not scope:
        # in SQL, not Python: at 10,000 sessions a common word is in most of them
        only_app = " WHERE s.key >= ? AND s.key < ?" if app else ""  # `app:` up to `app;`, the next character
        bounds = [f"{app}:", f"{app};"] if app else []
        newest = db.execute(
            f"SELECT g.source, g.row FROM (SELECT c.source AS source, max(said.rowid) AS row {_LIVE} GROUP BY 1) AS g"
            f" JOIN source s ON s.id = g.source{only_app} ORDER BY s.mtime DESC, g.row DESC"
            + (" LIMIT ?" if limit else ""), [match, *bounds, *([limit] if limit else [])])
        return {source: (0.0, row) for source, row in newest}
    found: dict[int, tuple[float, int]] = {}
    for score, rowid, source in db.execute(f"SELECT bm25(said), said.rowid, c.source {_LIVE}{scope} ORDER BY rank",
                                           [match, *params]):
        found.setdefault(source, (score, rowid))  # best first
    return found


def _spread(db: sqlite3.Connection, terms: list[str], scope: str, params: list[int]) -> dict[int, int]:
    """Sources holding every word somewhere, each with a row of its rarest word (for a snippet).
    Candidates come from the rarest word; a common word is then looked up only within them."""
    counts = [db.execute("SELECT count(*) FROM said WHERE said MATCH ?", [t]).fetchone()[0] for t in terms]
    order = sorted(range(len(terms)), key=counts.__getitem__)
    candidates: dict[int, int] = {}
    for source, rowid in db.execute(f"SELECT c.source, said.rowid {_LIVE}{scope}", [terms[order[0]], *params]):
        candidates.setdefault(source, rowid)
    for i in order[1:]:
        if not candidates:
            break
        if counts[i] <= RANKED or len(candidates) > 200:
            holding = {s for (s,) in db.execute(f"SELECT c.source {_LIVE}{scope}", [terms[i], *params])}
        else:  # a common word: asked of each candidate's own rows (FTS5 looks a row id up)
            holding = {s for s in candidates if db.execute(
                "SELECT 1 FROM chunk c CROSS JOIN said ON said.rowid = c.id WHERE c.source = ? AND said MATCH ?"
                " LIMIT 1", (s, terms[i])).fetchone()}
        candidates = {s: r for s, r in candidates.items() if s in holding}
    return candidates


def _hits(db: sqlite3.Connection, found: dict[int, tuple[float, int]], app: str | None, limit: int,
          terms: list[str], snippet_width: int, folder: str | None = None) -> list[Hit]:
    """The best `limit` sessions, their snippets read from the transcripts."""
    if not found:
        return []
    ranked = []
    for source, mtime, key in db.execute(
            f"SELECT id, mtime, key FROM source WHERE id IN ({','.join('?' * len(found))})", list(found)):
        if not app or key.startswith(app + ":"):
            score, rowid = found[source]
            ranked.append((score, -mtime, rowid, source))
    ranked.sort()
    sessions = {}
    for part in range(0, len(ranked), limit):  # in the folder: sessions are looked at until enough are
        shown = ranked[part:part + limit]
        for source, meta in db.execute(f"SELECT id, session FROM source WHERE id IN ({','.join('?' * len(shown))})",
                                       [r[3] for r in shown]):
            try:
                session = Session(*marshal.loads(meta))
            except (TypeError, ValueError, EOFError):
                continue  # written by another Python: refreshed on the next search
            if folder is None or session.cwd == folder:
                sessions[source] = session
        if folder is None or len(sessions) >= limit:
            break
    ranked = [r for r in ranked if r[3] in sessions][:limit]
    places = dict(db.execute(f"SELECT id, places FROM chunk WHERE id IN ({','.join('?' * len(ranked))})",
                             [r[2] for r in ranked]))
    words = _plain_words(terms)
    hits = []
    for score, _, rowid, source in ranked:
        session = sessions[source]
        role, text = best_message(session, marshal.loads(places[rowid]) if rowid in places else [], words)
        hits.append(Hit(session, score, snippet_of(text, words, snippet_width), role))
    return hits


def best_message(session: Session, places: Sequence[int], words: list[str]) -> tuple[str, str]:
    """(role, text) of the message among `places` (a hit's records) holding most of `words`,
    read again from the transcript: each record's raw line is looked at first, and only the
    best one is parsed."""
    from sessidx.apps import app_named

    app = app_named(session.app)
    if app is None or not places:
        return "", ""
    first: tuple[str, str] | None = None
    if by_records(app, session.path):
        # the best three by a look at their bytes, parsed until one holds a word: JSON escapes
        # (\u00fc) can hide a word from that look
        for line in lines_holding(session.path or "", places, [w.lower().encode() for w in words]):
            messages = [(role, text) for role, text in safe_said(app, json_value(line)) if text.strip()]
            best = max(messages, key=lambda m: _holding(m[1], words), default=None)
            if best and _holding(best[1], words):
                return best
            first = first or best
        return first or ("", "")
    try:
        conversation = getattr(app, "conversation")(session)  # noqa: B009 - not every app has it
    except Exception:
        return "", ""
    messages = [conversation[p] for p in places if 0 <= p < len(conversation) and conversation[p][1].strip()]
    return max(messages, key=lambda m: _holding(m[1], words), default=("", ""))


def _holding(text: str, words: list[str]) -> int:
    """How many of `words` `text` holds."""
    return sum(_find(w, text) >= 0 for w in words)


def snippet_of(text: str, words: list[str], width: int = 120) -> str:
    """About `width` characters of `text` around the first of `words` found in it. Secrets are
    looked for in a region well beyond the cut (so none is cut in half at its edge)."""
    text = " ".join(text.split())
    at = max(0, min((i for w in words if (i := _find(w, text)) >= 0), default=0))
    region_start = max(0, at - 400)
    region = mask(text[region_start:at + width + 400])
    start = max(0, min((i for w in words if (i := _find(w, region)) >= 0), default=0) - width // 3)
    cut = region[start:start + width]
    return ("…" if region_start + start else "") + cut + ("…" if start + width < len(region) or
                                                          at + width + 400 < len(text) else "")


def _find(word: str, text: str) -> int:
    """Where `word` is in `text` (any case, and without accents if need be), else -1."""
    at = text.lower().find(word.lower())
    if at < 0 and not text.isascii():  # found by FTS5 without its accents (`umlaut` in `ümlaut`)
        at = _fold(text).find(_fold(word))
    return at


def _fold(text: str) -> str:
    import unicodedata

    return "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))


def words_of(query: str) -> list[str]:
    """The plain words of a query, for highlighting."""
    return _plain_words(parse_query(query))


def _plain_words(terms: list[str]) -> list[str]:
    """The words of parse_query's phrases, without their quotes and prefix stars."""
    return [w for t in terms for w in t.strip('"* ').split()]


def _rebuild_if_mostly_dead(db: sqlite3.Connection, force: bool = False) -> None:
    """Dead FTS rows cost space and query time: past half of the index, start over (the next
    refresh reads every source again)."""
    live = db.execute("SELECT count(*) FROM chunk").fetchone()[0]
    rows = db.execute("SELECT fts FROM rows").fetchone()[0]
    if force or (rows > 1000 and live < rows // 2):
        db.executescript("""
            BEGIN; DELETE FROM chunk; DELETE FROM source; UPDATE rows SET fts = 0, text = 0;
            INSERT INTO said(said) VALUES ('delete-all'); COMMIT;""")
