"""The content index: what was said in each session, searchable with SQLite FTS5.

It lives in `$XDG_CACHE_HOME/sessidx/content.sqlite` (folder 0700, file 0600), never beside the
agents' files, and holds, per session, the user prompts, the assistant replies and the short
words of tool calls (commands, paths), not tool outputs over a few KiB, images or other
payloads, and never a token that looks like a secret. `SESSIDX_CONTENT=0` turns it off;
`sessidx search --drop` deletes it.

The FTS5 table is contentless: the index holds the words, not the text. Each row points back
at its message (the byte offset of its record in a JSONL transcript, or its place in a
conversation), and the snippet of a hit is read from there. A row's id is its source's id
times 2^20 plus a count that only grows, so which session a row belongs to needs no join,
and a word's sessions come straight out of FTS5. FTS5 here (SQLite 3.40) cannot delete a
contentless row without its text, so when a source is read again from its start, its older
rows are left behind and skipped (the source's `live_from`), as are rows of sources that are
gone (source ids are never reused); once dead rows outnumber live ones, the index is rebuilt.

Appends are read incrementally: per source, how far it was indexed and the 64 bytes just
before that point. Same bytes there: only what follows is read. Shorter, or other bytes: the
source was rewritten and is indexed again. Lines over LINE_CAP are skipped unread.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time

from sessidx.conversation import by_records, messages_from, record_at, safe_said
from sessidx.model import Session

TYPE_CHECKING = False  # see model.Fields
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from sessidx.config import Env

SCHEMA_VERSION = 4
SHIFT = 20  # a row id is source id << SHIFT | its number within the source
NUMBER = (1 << SHIFT) - 1
MESSAGE_CAP = 64 * 1024  # what is indexed of one record's text
FINGERPRINT = 64  # bytes before the indexed end that must be unchanged for an append
COMMIT_SECONDS = 1.0  # work kept if interrupted

# API keys, tokens and private keys are never indexed nor shown. Every such secret is a long
# run of key characters, so only those runs are looked at: a regex finds them in C (`re` is
# loaded anyway, by `json`), and each run is judged in Python.
_SECRET_PREFIXES = ("sk-", "pk-", "rk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xoxa-", "xoxb-",
                    "xoxo-", "xoxp-", "xoxr-", "xoxs-", "AKIA", "AIza", "eyJ", "glpat-", "npm_", "hf_")
_SECRET_CONTEXT = ("bearer", "token", "key", "secret", "password", "passwd", "authorization")
_DIGITS = frozenset("0123456789")
_PATTERNS: dict[str, Any] = {}


def _pattern(name: str) -> Any:
    """Compiled on first use: the CJK class alone costs 2 ms, which a keystroke need not pay."""
    if name not in _PATTERNS:
        import re

        if name == "run":
            _PATTERNS[name] = re.compile(r"[A-Za-z0-9_\-+/=.~]{16,}")
        else:
            _PATTERNS[name] = re.compile("([" + "".join(f"\\u{a:04x}-\\u{b:04x}" for a, b in _CJK_RANGES) + "])")
    return _PATTERNS[name]


def _is_secret(run: str, before: str) -> bool:
    if run.startswith(_SECRET_PREFIXES) or len(run) >= 200:  # a known key format, or a payload
        return True
    mixed = run.lower() != run and run.upper() != run and not _DIGITS.isdisjoint(run)
    if mixed and len(run) >= 32:  # random-looking (a hex digest, all lower case, is kept: people search those)
        return True
    return mixed and any(word in before.lower() for word in _SECRET_CONTEXT)


def without_secrets(text: str, mark: str = " ") -> str:
    """`text` with each secret-looking run of characters, and each private-key block, replaced by `mark`."""
    while (key := text.find("PRIVATE KEY-----")) >= 0:  # a PEM block: from its BEGIN line to its END line
        begin = text.rfind("-----BEGIN ", 0, key)
        end_line = text.find("-----END ", key)
        closing = text.find("-----", end_line + 9) if end_line >= 0 else -1
        text = text[:begin if begin >= 0 else key] + mark + (text[closing + 5:] if closing >= 0 else "")
    return str(_pattern("run").sub(
        lambda m: mark if _is_secret(m.group(), text[max(0, m.start() - 24):m.start()]) else m.group(), text))


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
    return str(_pattern("cjk").sub(r" \1 ", text))


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
        -- AUTOINCREMENT: a source id is never used twice, or rows of a gone source would come back
        CREATE TABLE source(
            id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT UNIQUE NOT NULL, app TEXT NOT NULL, path TEXT,
            stamp TEXT, done INTEGER NOT NULL DEFAULT 0, tail BLOB, session TEXT NOT NULL, mtime INTEGER NOT NULL,
            live_from INTEGER NOT NULL DEFAULT 0, next_row INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE hit(id INTEGER PRIMARY KEY, pos INTEGER NOT NULL, role TEXT);  -- id: the FTS row id
        -- FTS rows and characters of text written since the last rebuild, dead ones too
        CREATE TABLE rows(fts INTEGER NOT NULL, text INTEGER NOT NULL);
        INSERT INTO rows VALUES (0, 0);
        CREATE VIRTUAL TABLE said USING fts5(body, content='', columnsize=0,
                                             tokenize='unicode61 remove_diacritics 2');
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
    try:
        hits = search(open_index(env), query, limit=30)  # a screenful; typing narrows it
    except SessidxError as exc:
        hits, head = [], (head and f"{head}  ({render.clean(str(exc))})")
    if head is not None:
        out(head + ("  (no session says that)" if not hits and query.strip() else ""))
    words = words_of(query)
    rows = [f"{h.session.app}:{h.session.id}\t{render.content_row(h.session, h.snippet, words)}" for h in hits]
    if rows:
        out("\n".join(rows))
    return 0


def indexable(text: str) -> str:
    """The text as it goes into FTS5: secrets out, CJK characters apart."""
    return cjk_apart(without_secrets(text))


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
        self.stamp = json.dumps([*st, session.mtime] if st else [session.mtime])


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
    Commits every half second, so an interrupt keeps what was done."""
    wanted = {s.key: s for s in sources_of(sessions)}
    known = {key: (sid, stamp, done, tail, next_row) for sid, key, stamp, done, tail, next_row in
             db.execute("SELECT id, key, stamp, done, tail, next_row FROM source")}
    stats = {"sources": 0, "appended": 0, "reindexed": 0, "removed": 0, "bytes": 0, "messages": 0}
    gone = [known[key][0] for key in known.keys() - wanted.keys()]
    todo = [s for key, s in wanted.items() if key not in known or known[key][1] != s.stamp]
    progress = Progress(len(todo), sum(s.size for s in todo))
    if report and todo:
        report(progress)
    bulk = len(todo) > 100
    if bulk:  # no merging while loading; one 'optimize' at the end does it once
        db.execute("INSERT INTO said(said, rank) VALUES ('automerge', 0)")
    db.execute("BEGIN")
    for source_id in gone:
        _unlink(db, source_id)
        db.execute("DELETE FROM source WHERE id = ?", (source_id,))  # its FTS rows now belong to no one
        stats["removed"] += 1
    last_commit = time.monotonic()
    try:
        for source in todo:
            before = known.get(source.key)
            source_id, start = _prepare(db, source, before, stats)
            read = _index_source(db, source, source_id, start, stats)
            stats["bytes"] += read
            stats["sources"] += 1
            progress.done_sources += 1
            progress.done_bytes += source.size
            if time.monotonic() - last_commit > COMMIT_SECONDS:
                db.execute("COMMIT")
                db.execute("BEGIN")
                last_commit = time.monotonic()
                if report:
                    report(progress)
        db.execute("COMMIT")
        if report and todo:
            report(progress)
    except IndexFull:
        db.execute("ROLLBACK")
        _rebuild_if_mostly_dead(db, force=True)
        return stats
    except BaseException:
        db.execute("ROLLBACK")  # the source being read is read again next time
        raise
    finally:
        if bulk:
            db.execute("INSERT INTO said(said, rank) VALUES ('automerge', 4)")  # FTS5's default
    _rebuild_if_mostly_dead(db)
    if bulk:  # one segment is smaller and faster to search
        db.execute("INSERT INTO said(said) VALUES ('optimize')")
    elif stats["sources"]:
        db.execute("INSERT INTO said(said, rank) VALUES ('merge', 64)")  # a little merging, bounded
    if stats["sources"] or stats["removed"]:
        db.executescript("PRAGMA incremental_vacuum;")  # stepped to its end (execute frees one page)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the index is one file again, not twice its size
    return stats


def _prepare(db: sqlite3.Connection, source: _Source, before: tuple[Any, ...] | None,
             stats: dict[str, int]) -> tuple[int, int]:
    """The source's row id and where reading starts: after what is already indexed when the
    bytes before that point are unchanged (an append), else at 0 with its old rows unlinked."""
    meta = json.dumps(source.session.to_json())
    if before is None:
        cur = db.execute("INSERT INTO source(key, app, path, stamp, session, mtime) VALUES (?, ?, ?, '', ?, ?)",
                         (source.key, source.session.app, source.session.path, meta, source.session.mtime))
        return int(cur.lastrowid or 0), 0
    source_id, _, done, tail, _ = before
    db.execute("UPDATE source SET session = ?, mtime = ?, path = ? WHERE id = ?",
               (meta, source.session.mtime, source.session.path, source_id))
    # Appends grow a file; one changed without growing was rewritten.
    if source.incremental and done and source.size > done and _bytes_before(source.session.path, done) == tail:
        stats["appended"] += 1
        return source_id, done
    _unlink(db, source_id)
    stats["reindexed"] += 1
    return source_id, 0


def _unlink(db: sqlite3.Connection, source_id: int) -> None:
    """Rows numbered before `next_row` are dead from now on (their FTS rows stay, skipped)."""
    db.execute("DELETE FROM hit WHERE id BETWEEN ? AND ?", (source_id << SHIFT, (source_id << SHIFT) | NUMBER))
    db.execute("UPDATE source SET live_from = next_row WHERE id = ?", (source_id,))


def _bytes_before(path: str | None, end: int) -> bytes | None:
    from sessidx.readers import open_regular

    f = open_regular(path) if path else None
    if f is None:
        return None
    with f:
        f.seek(max(0, end - FINGERPRINT))
        return f.read(min(end, FINGERPRINT))


def _index_source(db: sqlite3.Connection, source: _Source, source_id: int, start: int,
                  stats: dict[str, int]) -> int:
    end = start
    if source.incremental:
        messages, end = messages_from(source.app, source.session.path or "", start)
    else:
        try:
            conversation = source.app.conversation(source.session)
        except Exception:  # a store busy or broken right now: the others go on, this one is tried again
            stats["failed"] = stats.get("failed", 0) + 1
            db.execute("UPDATE source SET stamp = '' WHERE id = ?", (source_id,))
            return 0
        messages = [(i, role, text) for i, (role, text) in enumerate(conversation)]
    _insert(db, source_id, messages)
    tail = _bytes_before(source.session.path, end) if source.incremental else None
    db.execute("UPDATE source SET stamp = ?, done = ?, tail = ? WHERE id = ?", (source.stamp, end, tail, source_id))
    stats["messages"] += len(messages)
    return end - start if source.incremental else source.size


def _insert(db: sqlite3.Connection, source_id: int, messages: list[tuple[int, str, str]]) -> None:
    """One FTS row per record (its messages joined): a hit points at the record to re-read."""
    by_pos: dict[int, tuple[str, list[str]]] = {}
    for pos, role, text in messages:
        by_pos.setdefault(pos, (role, []))[1].append(text)
    rows = [(pos, role, body) for pos, (role, texts) in by_pos.items()
            if (body := indexable("\n".join(texts)[:MESSAGE_CAP])).strip()]
    if not rows:
        return
    (number,) = db.execute("SELECT next_row FROM source WHERE id = ?", (source_id,)).fetchone()
    if number + len(rows) > NUMBER:
        raise IndexFull()  # read again from its start this often: the whole index starts over
    first = (source_id << SHIFT) + number
    db.executemany("INSERT INTO hit(id, pos, role) VALUES (?, ?, ?)",
                   [(first + i, pos, role) for i, (pos, role, _) in enumerate(rows)])
    db.executemany("INSERT INTO said(rowid, body) VALUES (?, ?)", [(first + i, r[2]) for i, r in enumerate(rows)])
    db.execute("UPDATE source SET next_row = ? WHERE id = ?", (number + len(rows), source_id))
    db.execute("UPDATE rows SET fts = fts + ?, text = text + ?", (len(rows), sum(len(r[2]) for r in rows)))


class IndexFull(Exception):
    """A source has used up its row numbers."""


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
RANKED_SESSIONS = 300  # more sessions than this said it: too common to rank by; newest first then


def search(db: sqlite3.Connection, query: str, app: str | None = None, limit: int = 50,
           session_key: str | None = None, snippet_width: int = 120) -> list[Hit]:
    """Sessions that said every word of `query`, best first: those where one message holds
    them all, by FTS5's bm25, then those where they are spread over messages; ties by recency."""
    terms = parse_query(query)
    if not terms:
        return []
    scope, scope_params = "", []
    if session_key:
        row = db.execute("SELECT id FROM source WHERE key = ?", (session_key,)).fetchone()
        if row is None:
            return []
        scope, scope_params = " AND rowid BETWEEN ? AND ?", [row[0] << SHIFT, (row[0] << SHIFT) | NUMBER]
    try:
        found = _together(db, " AND ".join(terms), scope, scope_params)
        if len(terms) > 1 and len(found) < limit:
            for source, rowid in _spread(db, terms, scope, scope_params).items():
                found.setdefault(source, [(0.0, rowid)])  # bm25 is negative: after every ranked one
    except sqlite3.OperationalError:
        return []  # a query FTS5 cannot parse matches nothing
    return _hits(db, found, app, limit, terms, snippet_width)


def _together(db: sqlite3.Connection, match: str, scope: str, params: list[int]) -> dict[int, list[tuple[float, int]]]:
    """Per source, its rows holding every word, best first (by bm25 unless too common)."""
    # One scan for the sessions (each with its newest row: live if any of its rows are); a
    # second, ranked by bm25, only when few sessions said it, since a common word ranks nothing.
    newest = db.execute(f"SELECT rowid >> {SHIFT}, max(rowid) FROM said WHERE said MATCH ?{scope} GROUP BY 1",
                        [match, *params]).fetchall()
    if len(newest) > RANKED_SESSIONS:
        return {source: [(0.0, rowid)] for source, rowid in newest}
    found: dict[int, list[tuple[float, int]]] = {}
    for score, rowid in db.execute(f"SELECT bm25(said), rowid FROM said WHERE said MATCH ?{scope} ORDER BY rank",
                                   [match, *params]):
        found.setdefault(rowid >> SHIFT, []).append((score, rowid))
    return found


def _spread(db: sqlite3.Connection, terms: list[str], scope: str, params: list[int]) -> dict[int, int]:
    """Sources holding every word somewhere, each with a row of its rarest word (for a snippet).
    Candidates come from the rarest word; a common word is then looked up only within them."""
    counts = [db.execute(f"SELECT count(*) FROM said WHERE said MATCH ?{scope}", [t, *params]).fetchone()[0]
              for t in terms]
    order = sorted(range(len(terms)), key=counts.__getitem__)
    candidates: dict[int, int] = {}
    for (rowid,) in db.execute(f"SELECT rowid FROM said WHERE said MATCH ?{scope}", [terms[order[0]], *params]):
        candidates.setdefault(rowid >> SHIFT, rowid)
    for i in order[1:]:
        if not candidates:
            break
        if counts[i] <= RANKED or len(candidates) > 200:
            holding = {rowid >> SHIFT for (rowid,) in db.execute(
                f"SELECT rowid FROM said WHERE said MATCH ?{scope}", [terms[i], *params])}
        else:  # a common word: asked of each candidate's own rows (FTS5 seeks to a row id range)
            holding = {s for s in candidates if db.execute(
                "SELECT 1 FROM said WHERE said MATCH ? AND rowid BETWEEN ? AND ? LIMIT 1",
                (terms[i], s << SHIFT, (s << SHIFT) | NUMBER)).fetchone()}
        candidates = {s: r for s, r in candidates.items() if s in holding}
    return candidates


def _hits(db: sqlite3.Connection, found: dict[int, list[tuple[float, int]]], app: str | None, limit: int,
          terms: list[str], snippet_width: int) -> list[Hit]:
    """The best `limit` live sessions, their snippets read from the transcripts."""
    if not found:
        return []
    ranked = []
    for source, live_from, mtime, source_app in db.execute(
            f"SELECT id, live_from, mtime, app FROM source WHERE id IN ({','.join('?' * len(found))})", list(found)):
        if app and source_app != app:
            continue
        # rows of an earlier reading of this source are dead (a live row's number is higher)
        live = next(((score, rowid) for score, rowid in found[source] if rowid & NUMBER >= live_from), None)
        if live:
            ranked.append((live[0], -mtime, live[1], source))
    ranked.sort()
    hits = []
    for score, _, rowid, source in ranked[:limit]:
        meta, path = db.execute("SELECT session, path FROM source WHERE id = ?", (source,)).fetchone()
        place = db.execute("SELECT pos, role FROM hit WHERE id = ?", (rowid,)).fetchone()
        try:
            session = Session(**json.loads(meta))
        except (TypeError, ValueError):
            continue  # written by another version: refreshed on the next search
        if place is not None:
            hits.append(Hit(session, score, snippet_of(session, path, place[0], terms, snippet_width), place[1] or ""))
    return hits


def message_at(session: Session, path: str | None, pos: int) -> str:
    """The text of the record a hit points at, read again from the transcript (bounded)."""
    from sessidx.apps import app_named

    app = app_named(session.app)
    if app is None:
        return ""
    if path and by_records(app, path):
        return "\n".join(t for _, t in safe_said(app, record_at(path, pos)))
    try:
        conversation = getattr(app, "conversation")(session)  # noqa: B009 - not every app has it
    except Exception:
        return ""
    return conversation[pos][1] if 0 <= pos < len(conversation) else ""


def snippet_of(session: Session, path: str | None, pos: int, terms: list[str], width: int = 120) -> str:
    """About `width` characters of the hit's message around the first word of the query found in
    it. Secrets are looked for in a region well beyond the cut (so none is cut in half at its edge)."""
    text = " ".join(message_at(session, path, pos).split())
    words = [w.strip('"* ') for t in terms for w in t.strip('"* ').split()]
    at = _first_of(words, text)
    region_start = max(0, at - 400)
    region = without_secrets(text[region_start:at + width + 400], "…")
    start = max(0, _first_of(words, region) - width // 3)
    cut = region[start:start + width]
    return ("…" if region_start + start else "") + cut + ("…" if start + width < len(region) or
                                                          at + width + 400 < len(text) else "")


def _first_of(words: list[str], text: str) -> int:
    """Where the first of `words` is in `text` (any case, and without accents if need be), else 0."""
    lowered = text.lower()
    at = min((i for w in words if (i := lowered.find(w.lower())) >= 0), default=-1)
    if at < 0 and not text.isascii():  # found by FTS5 without its accents (`umlaut` in `ümlaut`)
        folded = _fold(text)
        at = min((i for w in words if (i := folded.find(_fold(w))) >= 0), default=-1)
    return max(at, 0)


def _fold(text: str) -> str:
    import unicodedata

    return "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))


def words_of(query: str) -> list[str]:
    """The plain words of a query, for highlighting."""
    return [w.strip('"* ') for t in parse_query(query) for w in t.strip('"* ').split() if w]


def _rebuild_if_mostly_dead(db: sqlite3.Connection, force: bool = False) -> None:
    """Dead FTS rows cost space and query time: past half of the index, start over (the next
    refresh reads every source again)."""
    live = db.execute("SELECT count(*) FROM hit").fetchone()[0]
    rows = db.execute("SELECT fts FROM rows").fetchone()[0]
    if force or (rows > 10000 and live < rows // 2):
        db.executescript("""
            BEGIN; DELETE FROM hit; DELETE FROM source; UPDATE rows SET fts = 0, text = 0;
            INSERT INTO said(said) VALUES ('delete-all'); COMMIT;""")
