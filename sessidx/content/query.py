"""Searching: a query parsed into FTS5 phrases, matching sessions found and ranked."""

from __future__ import annotations

import marshal

from sessidx.content.cjk import cjk_apart, is_cjk
from sessidx.content.near import PART, SCREEN, Near, add_typos, fold, groups, instead, mark, near_words, terms_starting
from sessidx.content.snippets import best_message, find_word, snippet_of
from sessidx.model import Session

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    import sqlite3
    from typing import Any
else:  # the C module alone: the `sqlite3` package around it loads datetime and collections too
    from sessidx.csqlite import sqlite3


class Hit:
    def __init__(self, session: Session, score: float, snippet: str, role: str) -> None:
        self.session = session
        self.score = score
        self.snippet = snippet
        self.role = role
        self.pairs: list[tuple[str, str]] = []  # a near answer: (word asked, what it matched instead)
        self.also = ""  # the pairs said as the mark says them (`retries → retry`): near.mark


# What one query may hold: a pasted page of text cost seconds a keystroke, growing faster than
# its length. Beyond these, the rest is left out and the header (or stderr) says so.
MAX_WORDS = 16  # distinct words, those of "phrases" included
MAX_CHARS = 1000


def parse_query(query: str) -> list[str]:
    """FTS5 phrases, one per word or `"quoted phrase"`, each quoted so no character of the
    query is FTS5 syntax. The last word, while still being typed, also matches as a prefix.
    At most MAX_WORDS distinct words, from the first MAX_CHARS characters."""
    return _parsed(query)[0]


def query_note(query: str) -> str | None:
    """What of the query was left out, said in a few words; None when nothing was."""
    return _parsed(query)[1]


def _parsed(query: str) -> tuple[list[str], str | None]:
    note = None
    if len(query) > MAX_CHARS:
        query = query[:MAX_CHARS]
        note = f"the query is long: its first {MAX_CHARS:,} characters are searched"
    terms: list[str] = []
    seen: set[str] = set()
    budget = MAX_WORDS
    last_kept = False
    for i, part in enumerate(query.split('"')):  # odd parts were inside quotes
        for piece in [part] if i % 2 else part.split():
            words = "".join(c if c.isalnum() or c == "_" else " " for c in cjk_apart(piece)).split()
            if not words:
                continue
            last_kept = " ".join(words).casefold() not in seen  # the word being typed, unless said before
            if not last_kept:
                continue
            if len(words) > budget:
                note = f"the query is long: its first {MAX_WORDS} distinct words are searched"
                words = words[:budget]
                if not words:
                    break
            seen.add(" ".join(words).casefold())
            terms.append('"' + " ".join(words) + '"')
            budget -= len(words)
    # the word being typed matches as a prefix once it has 3 letters (fewer would match half the index)
    typing = terms[-1].strip('"') if last_kept and not note and not query.endswith((" ", '"')) else ""
    if len(typing) >= 3 and not any(is_cjk(c) for c in typing):
        terms[-1] += " *"
    return terms, note


PARTS = 1  # the tier of words found as parts of identifiers (`PendingAcks` in `flushPendingAcks`); near ones after
RANKED = 5000  # more rows than this hold a word: too common to look it up session by session
RANKED_ROWS = 1000  # more rows than this hold every word: too common to rank by; newest first then
# FTS rows with their session; a row of no chunk is dead (its source was read again or is gone)
_LIVE = "FROM said JOIN chunk c ON c.id = said.rowid WHERE said MATCH ?"


def search(db: sqlite3.Connection, query: str, app: str | None = None, limit: int = 50,
           session_key: str | None = None, snippet_width: int = 120, folder: str | None = None,
           since: int | None = None, until: int | None = None) -> list[Hit]:
    """Sessions (of `app`, in `folder`, when given) that said every word of `query`, best first,
    ranked over every match (`limit` only cuts the list): those where a stretch of the
    conversation (a row) holds every word, a title (the first prompt) holding them first, then
    one where a single message does, then by FTS5's bm25; then those where the words are
    further apart (a title hit first); ties by recency; last used from `since` to before `until` (ms), when given. Fewer
    than a screenful: near answers below them (near.py), prefixes and word forms, then typos of
    one edit, then two, each marked with what it matched instead. Words too common to rank by
    (in more than RANKED_ROWS rows): the newest sessions holding them together."""
    terms = parse_query(query)
    if not terms:
        return []
    _places.clear()
    _counts.clear()
    scope, scope_params = "", []
    if session_key:
        row = db.execute("SELECT id FROM source WHERE key = ?", (session_key,)).fetchone()
        if row is None:
            return []
        scope, scope_params = " AND c.source = ?", [row[0]]
    nears: list[Near | str] = []
    cut = None if folder or since is not None or until is not None else limit  # what SQL may cut (newest first)
    try:
        found = _matching(db, terms, scope, scope_params, app, cut, [_alternatives(t) for t in terms], whole=True)
        tiers = dict.fromkeys(found.sources, 0)
        enough = min(limit, SCREEN)
        if len(found.sources) < enough and _has_parts(db, terms):  # a word as a part of an identifier
            more = _matching(db, [_with_parts(t) for t in terms], scope, scope_params, app, cut,
                             [_alternatives(t, parts=True) for t in terms], whole=True)
            tiers.update(dict.fromkeys(more.sources.keys() - found.sources.keys(), PARTS))
            found.add(more)
        if len(found.sources) < enough:
            nears = near_words(db, terms)
            for tier, typos in ((PARTS + 1, 0), (PARTS + 2, 1), (PARTS + 3, 2)):  # prefixes and forms, typos
                if len(found.sources) >= enough:
                    break
                if typos == 1:
                    add_typos(db, nears)
                if not any(isinstance(n, Near) and (n.typos_within(typos) or not typos) for n in nears):
                    continue
                expanded = [n.match(typos) if isinstance(n, Near) else n for n in nears]
                if all((isinstance(n, Near) and n.only_itself(typos)) or _rows_of(db, e) == _rows_of(db, t)
                       for n, e, t in zip(nears, expanded, terms, strict=True)):
                    continue  # each holds the rows of the word itself, no more: found already
                more = _matching(db, expanded, scope, scope_params, app, cut, _wanted(nears, typos))
                tiers.update(dict.fromkeys(more.sources.keys() - found.sources.keys(), tier))
                found.add(more)
    except sqlite3.OperationalError:
        return []  # a query FTS5 cannot parse matches nothing
    return _hits(db, found, app, limit, terms, snippet_width, folder, tiers, nears, (since, until))


class Found:
    """The sources matching a tier: each with its best row and that row's bm25 (0: not ranked),
    those where one message holds every word (with that row), those ranked by recency alone."""

    def __init__(self) -> None:
        self.sources: dict[int, tuple[float, int]] = {}
        self.one_message: dict[int, int] = {}
        self.whole: dict[int, int] = {}  # of those, where the words are said whole (none only as a prefix)
        self.spread: set[int] = set()  # every word somewhere, in no one row
        self.newest: set[int] = set()  # words too common to rank by: these are the newest holding them

    def add(self, other: Found) -> None:
        for source, value in other.sources.items():
            if source not in self.sources:
                self.sources[source] = value
                if source in other.one_message:
                    self.one_message[source] = other.one_message[source]
                if source in other.whole:
                    self.whole[source] = other.whole[source]
                if source in other.spread:
                    self.spread.add(source)
                if source in other.newest:
                    self.newest.add(source)


def _matching(db: sqlite3.Connection, terms: list[str], scope: str, params: list[int], app: str | None,
              limit: int | None, wanted: list[list[Alternative]], whole: bool = False) -> Found:
    """Sources holding every term: together in a row (ranked, and whether in one message holds
    each of `wanted`, the terms as the index holds them; with `whole`, also whether it holds
    them whole, none only as a prefix), then further apart. Words too common to rank: only
    the `limit` newest that hold them in a row."""
    found = Found()
    rows = _together(db, terms, scope, params, app, limit, found)
    if rows:
        found.one_message = _in_one_message(db, wanted, rows, matched=True)
        # the word being typed said whole, not only as the start of a longer one (`selector`, not `selectorkey`)
        said = [[(words, False) for words, _ in alternatives] for alternatives in wanted]
        found.whole = (_in_one_message(db, said, rows) if whole and said != wanted and not _same_rows(db, said, wanted)
                       else found.one_message)
    # after every source holding them together: asked only when those are fewer than a limit
    if len(terms) > 1 and (limit is None or len(found.sources) < limit):
        for source, rowid in _spread(db, terms, scope, params).items():
            if source not in found.sources:
                found.sources[source] = (0.0, rowid)
                found.spread.add(source)
                if rows is None:
                    found.newest.add(source)
    return found


def _together(db: sqlite3.Connection, terms: list[str], scope: str, params: list[int], app: str | None,
              limit: int | None, found: Found) -> dict[int, tuple[int, float]] | None:
    """Into `found`, per source, its best row holding every term, with its bm25 score; returns
    every such row (its source and score), best first. Words too common to rank by: the `limit` newest
    sessions holding them (of `app`), each with its newest row, and None."""
    match = " AND ".join(terms)
    rows = _rows_of(db, match)
    if rows > RANKED_ROWS and not scope:
        match = " AND ".join(_spelt_out(db, t) for t in terms)  # the same rows; no rank to keep
        found.sources.update((source, (0.0, row)) for source, row in _newest(db, match, app, limit))
        found.newest.update(found.sources)
        return None
    every: dict[int, tuple[int, float]] = {}
    for score, rowid, source in db.execute(f"SELECT bm25(said), said.rowid, c.source {_LIVE}{scope} ORDER BY rank",
                                           [match, *params]):
        found.sources.setdefault(source, (score, rowid))  # best first
        every[rowid] = (source, score)
    return every


# Per connection, the rows each FTS5 expression matched in this search; search() empties it.
_counts: dict[int, dict[str, int]] = {}


def _rows_of(db: sqlite3.Connection, match: str) -> int:
    """How many FTS rows (dead ones too) match: asked once per search, though each tier asks."""
    asked = _counts.setdefault(id(db), {})
    if match not in asked:
        asked[match] = db.execute("SELECT count(*) FROM said WHERE said MATCH ?", [match]).fetchone()[0]
    return asked[match]


SPELT_OUT = 8  # a prefix standing for at most this many terms is asked as those terms


def _spelt_out(db: sqlite3.Connection, term: str) -> str:
    """parse_query's phrase; a single word's prefix (`"fix" *`) as the terms of the index it
    stands for (`("fix" OR "fixed" OR "fixes")`), when they are few: the same rows, but FTS5
    reads a prefix's every row each time it is asked, where it looks a term's row ids up."""
    word = term[1:-3]
    if not (term.startswith('"') and term.endswith('" *') and word.isascii() and word.isalnum()):
        return term
    spelt = terms_starting(db, word.lower(), SPELT_OUT + 1)  # lower case: as unicode61 folds an ASCII word
    return "(" + " OR ".join(f'"{t}"' for t in spelt) + ")" if 0 < len(spelt) <= SPELT_OUT else term


WALK = 4  # times the limit: the newest sessions asked one by one, before all of them are asked at once


def _newest(db: sqlite3.Connection, match: str, app: str | None, limit: int | None) -> list[tuple[int, int]]:
    """(source, its newest live row holding every word) of the `limit` newest sources (of
    `app`) holding them (all, without a limit), newest first, ties by source (as _hits ranks
    them): walked in the index `source_newest`'s order, stopping at the limit. A common word
    is in most sessions, so the newest WALK x `limit` are first asked of FTS5 one by one (a
    look-up of their rows' ids, ~0.03 ms; a prefix would cost a reading of its every term's
    rows each time); when fewer hold the words, every source is walked against the set of rows
    holding them, read once (~2.5 ms at 10,000 sessions holding them). Either walk gives the
    same order, whatever the limit."""
    only_app = " AND key >= ? AND key < ?" if app else ""  # `app:` up to `app;`, the next character
    bounds = [f"{app}:", f"{app};"] if app else []
    if limit is None:  # all of them: grouped, then sorted
        return db.execute(
            f"SELECT g.source, g.row FROM (SELECT c.source AS source, max(said.rowid) AS row {_LIVE} GROUP BY 1) AS g"
            f" JOIN source s ON s.id = g.source{only_app.replace('key', 's.key')} ORDER BY s.mtime DESC, s.id",
            [match, *bounds]).fetchall()
    if "*" not in match:  # no prefix: parse_query quotes every word, so a star is FTS5's
        walked = db.execute(
            "SELECT s.id, (SELECT max(c.id) FROM chunk c CROSS JOIN said ON said.rowid = c.id"
            "              WHERE c.source = s.id AND said MATCH ?) AS row"
            f" FROM (SELECT id, mtime FROM source INDEXED BY source_newest WHERE 1{only_app}"
            "       ORDER BY mtime DESC, id LIMIT ?) AS s"
            " WHERE row IS NOT NULL ORDER BY s.mtime DESC, s.id LIMIT ?",
            [match, *bounds, WALK * limit, limit]).fetchall()
        if len(walked) == limit:
            return walked
    # `+c.id`: the set of rows is looked up per chunk, not walked per source
    return db.execute(
        "SELECT s.id, (SELECT max(c.id) FROM chunk c WHERE c.source = s.id"
        "              AND +c.id IN (SELECT rowid FROM said WHERE said MATCH ?)) AS row"
        f" FROM source s INDEXED BY source_newest WHERE row IS NOT NULL{only_app} ORDER BY s.mtime DESC, s.id"
        " LIMIT ?", [match, *bounds, limit]).fetchall()


# A query word as the index may hold it: alternatives, each a run of terms (a phrase) of which
# the last may be a prefix.
Alternative = tuple[tuple[str, ...], bool]


def _alternatives(term: str, parts: bool = False) -> list[Alternative]:
    """parse_query's phrase as terms: folded as the index folds them; with `parts`, a single
    word also as the part of an identifier."""
    words = tuple(fold(w) for w in "".join(c if c.isalnum() else " " for c in term.strip('"* ')).split())
    prefix = term.endswith("*")
    return [(words, prefix), *([((PART + words[0],), prefix)] if parts and len(words) == 1 else [])]


def _single(term: str) -> bool:
    """Whether parse_query's phrase is one word (one that can be part of an identifier)."""
    word = term.strip('"* ')
    return word.isalnum() and word.isascii()


def _has_parts(db: sqlite3.Connection, terms: list[str]) -> bool:
    """Whether one of the query's words is, or begins, the part of an identifier in the index."""
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.said_terms USING fts5vocab(main, said, row)")
    for term in terms:
        if _single(term):
            word = PART + fold(term.strip('"* '))
            upper = word + "\U0010ffff" if term.endswith("*") else word + "\x00"
            if db.execute("SELECT 1 FROM temp.said_terms WHERE term >= ? AND term < ? LIMIT 1",
                          (word, upper)).fetchone():
                return True
    return False


def _with_parts(term: str) -> str:
    """parse_query's phrase, a single word also matching the part of an identifier (tokens.PART)."""
    if not _single(term):
        return term
    star = " *" if term.endswith("*") else ""
    return f'("{term.strip(chr(34) + "* ")}"{star} OR "{PART}{term.strip(chr(34) + "* ")}"{star})'


def _wanted(nears: list[Near | str], typos: int) -> list[list[Alternative]]:
    return [_alternatives(n, parts=True) if isinstance(n, str) else
            [((n.word,), True), ((PART + n.word,), True), *(((t,), False) for t in (*n.forms, *n.typos_within(typos)))]
            for n in nears]


MOST_PLACES = 5_000  # places of one term read to tell one message from a row: past this, a word counts as said


def _in_one_message(db: sqlite3.Connection, wanted: list[list[Alternative]],
                    rows: dict[int, tuple[int, float]], matched: bool = False) -> dict[int, int]:
    """Per source, its best row (by bm25) where a single message holds every wanted word, from
    the index alone: where each term is in each row (FTS5's instances) against where each of the
    row's messages starts. Every row is looked at (`rows`: _together's, best first), so the
    ranking never depends on a limit.
    `matched`: the rows were found by `wanted` itself, not by its prefixes."""
    if len(wanted) < 2 and (matched or all(len(words) == 1 for words, _ in wanted[0])):
        # one word (or its prefix, or its part): in one message in every row holding it
        said_whole = None if matched else {r for (r,) in db.execute("SELECT rowid FROM said WHERE said MATCH ?",
                                                                    [_either(wanted[0])])}
        best: dict[int, int] = {}
        for row, (source, _) in rows.items():  # best first already
            if said_whole is None or row in said_whole:
                best.setdefault(source, row)
        return best
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.said_places USING fts5vocab(main, said, instance)")
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.said_terms USING fts5vocab(main, said, row)")
    starts = {rowid: marshal.loads(blob) for rowid, blob in db.execute(
        f"SELECT id, starts FROM chunk WHERE id IN ({','.join('?' * len(rows))})", list(rows))}
    every = {(row, m) for row in starts for m in range(len(starts[row]))}
    holding: set[tuple[int, int]] = every  # (row, message) holding every word so far
    for alternatives in wanted:
        here: set[tuple[int, int]] = set()
        single = [words[0] for words, prefix in alternatives if len(words) == 1 and not prefix]
        runs = [(words, prefix) for words, prefix in alternatives if len(words) > 1 or prefix]
        if single:
            here |= _messages(db, "term IN (" + ",".join("?" * len(single)) + ")", single, starts, every)
        for words, prefix in runs:
            each = every
            for n, word in enumerate(words):
                if prefix and n == len(words) - 1:
                    each = each & _messages(db, "term >= ? AND term < ?", [word, word + "\U0010ffff"], starts, every)
                else:
                    each = each & _messages(db, "term = ?", [word], starts, every)
            here |= each
        holding &= here
        if not holding:
            return {}
    best = {}
    for row, _ in sorted(holding, key=lambda rm: rows[rm[0]][1]):
        best.setdefault(rows[row][0], row)
    return best


def _either(alternatives: list[Alternative]) -> str:
    """An FTS5 expression for one word's alternatives, each a single term."""
    return " OR ".join(f'"{words[0]}"' + (" *" if prefix else "") for words, prefix in alternatives)


def _same_rows(db: sqlite3.Connection, said: list[list[Alternative]], wanted: list[list[Alternative]]) -> bool:
    """Whether a single word said whole (`said`) is in as many rows as `wanted`, its prefix: the
    same rows, so each source's best row holding it is the same (a count, not a thousand rows
    read). Of several words, where in a row each is said matters too: not asked."""
    if len(wanted) > 1 or any(len(words) > 1 for words, _ in wanted[0]):
        return False
    return _rows_of(db, _either(said[0])) == _rows_of(db, _either(wanted[0]))


# Per connection, the places of each term asked in this search (None: too common to look at),
# asked again by each tier; search() empties it.
_places: dict[int, dict[str, list[tuple[int, int]] | None]] = {}


def _messages(db: sqlite3.Connection, where: str, args: list[str], starts: dict[int, list[int]],
              every: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """(row, message) of each place a term matching `where` is in, among the rows of `starts`;
    `every` message when the terms are too common to look at (then they count as said)."""
    asked = _places.setdefault(id(db), {})
    key = where + "\x00".join(args)
    if key not in asked:
        (many,) = db.execute(f"SELECT sum(cnt) FROM temp.said_terms WHERE {where}", args).fetchone()
        asked[key] = None if (many or 0) > MOST_PLACES else db.execute(
            f"SELECT doc, offset FROM temp.said_places WHERE {where}", args).fetchall()
    places = asked[key]
    if places is None:
        return every
    from bisect import bisect_right

    return {(doc, bisect_right(starts[doc], offset) - 1) for doc, offset in places if doc in starts}


MOST_VARIABLES = 30_000  # candidates named in one statement (SQLite allows 32,766 since 3.32)


def _spread(db: sqlite3.Connection, terms: list[str], scope: str, params: list[int]) -> dict[int, int]:
    """Sources holding every word somewhere, each with a row of its rarest word (for a snippet).
    Candidates come from the rarest word; a common word is then looked up only within them."""
    counts = [_rows_of(db, t) for t in terms]
    order = sorted(range(len(terms)), key=counts.__getitem__)
    candidates: dict[int, int] = {}
    for source, rowid in db.execute(f"SELECT c.source, said.rowid {_LIVE}{scope}", [terms[order[0]], *params]):
        candidates.setdefault(source, rowid)
    for i in order[1:]:
        if not candidates:
            break
        if len(candidates) > MOST_VARIABLES:
            holding = {s for (s,) in db.execute(f"SELECT c.source {_LIVE}{scope}", [terms[i], *params])}
        elif counts[i] <= RANKED or len(candidates) > 200:  # the word's sources among the candidates, in SQL
            holding = {s for (s,) in db.execute(
                f"SELECT DISTINCT c.source {_LIVE}{scope} AND c.source IN ({','.join('?' * len(candidates))})",
                [terms[i], *params, *candidates])}
        else:  # a common word: asked of each candidate's own rows (FTS5 looks a row id up)
            holding = {s for s in candidates if db.execute(
                "SELECT 1 FROM chunk c CROSS JOIN said ON said.rowid = c.id WHERE c.source = ? AND said MATCH ?"
                " LIMIT 1", (s, terms[i])).fetchone()}
        candidates = {s: r for s, r in candidates.items() if s in holding}
    return candidates


def _hits(db: sqlite3.Connection, found: Found, app: str | None, limit: int, terms: list[str], snippet_width: int,
          folder: str | None = None, tiers: dict[int, int] | None = None, nears: list[Near | str] | None = None,
          dates: tuple[int | None, int | None] = (None, None)) -> list[Hit]:
    """The best `limit` sessions of all found, their snippets read from the transcripts."""
    if not found.sources:
        return []
    tiers = tiers or {}
    # a thousand rows for a common word: a filter's column only when it is given (`app:` up to `app;`, as _newest)
    only_app, bounds = (" AND key >= ? AND key < ?", [f"{app}:", f"{app};"]) if app else ("", [])
    kept = db.execute(f"SELECT id, mtime, title{', session' if folder is not None else ''} FROM source"
                      f" WHERE id IN ({','.join('?' * len(found.sources))}){only_app}",
                      [*found.sources, *bounds]).fetchall()
    if folder is not None or dates != (None, None):
        from sessidx.when import within  # dates are the full path's: not loaded on every search

        kept = [row[:3] for row in kept if within(row[1], *dates)
                and (folder is None or ((session := _session(row[3])) is not None and session.cwd == folder))]
    words = _plain_words(terms)
    exact_groups = [[w] for w in words]
    near_groups = groups(nears) if nears else exact_groups
    exact_said, near_said = _lowered(exact_groups), _lowered(near_groups)
    ranked = []
    for source, mtime, title in kept:
        tier = tiers.get(source, 0)
        score, rowid = found.sources[source]
        one = found.whole.get(source) or found.one_message.get(source)
        # (the newest of a common word's: SQL cut them at `limit`, so a title must not lift one above another)
        in_title = source not in found.newest and _says_all(title, near_said if tier > PARTS else exact_said)
        ranked.append(((tier, source in found.spread, not in_title, source not in found.whole, one is None, score,
                        -mtime, source),
                       one or rowid))
    ranked.sort(key=lambda r: r[0])
    shown = _with_sessions(db, ranked, limit)
    places = dict(db.execute(f"SELECT id, places FROM chunk WHERE id IN ({','.join('?' * len(shown))})",
                             [r[1] for r in shown])) if shown else {}
    near_plain = [w for g in near_groups for w in g]
    hits = []
    for key, rowid, session in shown:
        wanted = near_plain if key[0] > PARTS else words
        role, text = best_message(session, marshal.loads(places[rowid]) if rowid in places else [], wanted)
        hit = Hit(session, key[5], snippet_of(text, wanted, snippet_width), role)
        if key[0] > PARTS and nears:
            hit.pairs = instead(text, nears) or instead(session.title or "", nears) or _may_hold(nears)
            hit.also = mark(hit.pairs)
        hits.append(hit)
    return hits


def _session(meta: object) -> Session | None:
    """The Session a source row keeps; None when written by another Python (refreshed on the next search)."""
    try:
        return Session(*marshal.loads(meta))  # type: ignore[arg-type]
    except (TypeError, ValueError, EOFError):
        return None


def _with_sessions(db: sqlite3.Connection, ranked: list[tuple[tuple[Any, ...], int]],
                   limit: int) -> list[tuple[tuple[Any, ...], int, Session]]:
    """The first `limit` of `ranked` whose Session can be read, each with it: read for those
    alone, not for every session found."""
    shown: list[tuple[tuple[Any, ...], int, Session]] = []
    at = 0
    while len(shown) < limit and at < len(ranked):
        batch = ranked[at:at + limit - len(shown)]
        at += len(batch)
        metas = dict(db.execute(f"SELECT id, session FROM source WHERE id IN ({','.join('?' * len(batch))})",
                                [key[-1] for key, _ in batch]))
        shown += [(key, rowid, session) for key, rowid in batch
                  if (session := _session(metas.get(key[-1]))) is not None]
    return shown


def _lowered(groups: list[list[str]]) -> list[tuple[list[str], list[str]]]:
    """Each group of words with the same words in lower case, for _says_all."""
    return [(group, [w.lower() for w in group]) for group in groups]


def _says_all(text: str, groups: list[tuple[list[str], list[str]]]) -> bool:
    """Whether `text` holds a word of each of `groups` (each with its words in lower case) as
    find_word finds it: in lower case (a look at each of a thousand titles), else without accents."""
    low = text.lower()
    for group, words in groups:  # loops, not all() and any(): once per match
        for word in words:
            if word in low:
                break
        else:
            if text.isascii() or not any(find_word(w, text) >= 0 for w in group):
                return False
    return True


def _may_hold(nears: list[Near | str]) -> list[tuple[str, str]]:
    """A near answer's pairs when its snippet shows none of what it matched (a prefix or a form
    said in another message of the row): the first thing each word may match instead."""
    return [(n.word, next(iter((*n.forms, *n.typos_within(2))), n.word + "…")) for n in nears if isinstance(n, Near)]


def session_matches(db: sqlite3.Connection, query: str, session_key: str) -> list[int]:
    """The rows of one session holding every word of `query`, for the preview to step through
    (Alt-N, Alt-P): its best by bm25 first (where the preview opens, the row search ranks it
    by), then the ones after it in the conversation, then those before it. Empty when no row
    holds them all (the words are spread out, or only a near answer matched)."""
    terms = parse_query(query)
    source = db.execute("SELECT id FROM source WHERE key = ?", (session_key,)).fetchone() if terms else None
    if source is None:
        return []
    try:
        ranked = db.execute(f"SELECT said.rowid {_LIVE} AND c.source = ? ORDER BY rank",
                            [" AND ".join(terms), source[0]]).fetchall()
    except sqlite3.OperationalError:
        return []
    if not ranked:
        return []
    ordered = sorted(r for (r,) in ranked)
    at = ordered.index(ranked[0][0])
    return ordered[at:] + ordered[:at]


def session_match(db: sqlite3.Connection, query: str, session: Session, row: int,
                  snippet_width: int) -> tuple[str, str]:
    """(role, snippet) of the message of `row` (one of session_matches) that best holds the words."""
    places = db.execute("SELECT places FROM chunk WHERE id = ?", (row,)).fetchone()
    words = words_of(query)
    role, text = best_message(session, marshal.loads(places[0]) if places else [], words)
    return role, snippet_of(text, words, snippet_width) if text else ""


def words_of(query: str) -> list[str]:
    """The plain words of a query, for highlighting."""
    return _plain_words(parse_query(query))


def _plain_words(terms: list[str]) -> list[str]:
    """The words of parse_query's phrases, without their quotes and prefix stars."""
    return [w for t in terms for w in t.strip('"* ').split()]
