"""Near answers, asked only when the exact words found less than a screenful: each word also
as the start of a longer one (a prefix), in its other forms (a Snowball stemmer: English for
Latin script, Russian for Cyrillic), and with a typo (one edit, two for long words: a letter
dropped, added, changed, or two swapped; the first three letters as typed, or two of them
swapped). Forms and typos are looked up in the index's own
vocabulary (FTS5's fts5vocab), in the range of terms sharing the word's first letters, so the
index holds nothing more for them: no second table, no build time (measured in `make bench`).
"""

from __future__ import annotations

from sessidx.content.cjk import is_cjk

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

# What a part of an identifier is indexed with in front (content/tokens.py): a private-use
# character, a letter to unicode61 (its category Co), so a part is a term of its own that no
# typed word is, and a search asks for parts after the words as typed.
PART = "\ue000"
SCREEN = 20  # fewer exact answers than this: near ones are added below them
MOST_TERMS = 4000  # terms of the vocabulary looked at per range


class Near:
    """One query word and what else matches it, each tier's terms apart."""

    def __init__(self, word: str) -> None:
        self.word = word
        self.forms: list[str] = []
        self.typos: list[tuple[int, str]] = []  # (edits, term)
        # no other term of the index starts with its first three letters, nor a part of an identifier
        # with it, and it is plain ASCII (the very term FTS5 looks up for it: fold and the tokenizer
        # may spell others apart): its prefix is the word itself, and it has no forms
        self.alone = False

    def only_itself(self, typos: int) -> bool:
        """Whether match(typos) matches the rows of the word as asked, no more: it is alone (and
        so has no forms) and has no typo within `typos`."""
        return self.alone and not self.typos_within(typos)

    def typos_within(self, most: int) -> list[str]:
        return [t for n, t in self.typos if n <= most]

    def match(self, typos: int) -> str:
        """An FTS5 expression for the word, its prefix, its forms and its typos of at most `typos` edits."""
        alternatives = [f'"{self.word}"', f'"{self.word}" *', f'"{PART}{self.word}" *', *(f'"{t}"' for t in self.forms),
                        *(f'"{t}"' for t in self.typos_within(typos))]
        return "(" + " OR ".join(alternatives) + ")"


def fold(word: str) -> str:
    """A word as the index's tokenizer keeps it: lower case, without accents."""
    word = word.lower()
    if word.isascii():
        return word
    import unicodedata  # a word with an accent: not on every search

    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


def near_words(db: sqlite3.Connection, terms: list[str]) -> list[Near | str]:
    """Each of parse_query's phrases: a Near for a single plain word, else the phrase as it is."""
    _vocabulary(db)
    out: list[Near | str] = []
    for term in terms:
        word = term.strip('"* ')
        if " " in word or len(word) < 3 or any(is_cjk(c) for c in word) or word.isdigit():
            out.append(term)
            continue
        near = Near(fold(word))
        others = set(_terms(db, near.word[:3], 2)) - {near.word}
        near.forms = _forms(db, near.word) if others else []  # no other term starts so: no form (nor PyStemmer)
        near.alone = not others and word.isascii() and word.isalnum() and not _terms(db, PART + near.word, 1)
        out.append(near)
    return out


def add_typos(db: sqlite3.Connection, nears: list[Near | str]) -> None:
    """The typos of each word the index does not hold (a word it holds is no typo: `staging`
    is not `state` misspelt): looked for only when prefixes and forms were not enough."""
    for near in nears:
        if isinstance(near, Near) and not _holds(db, near.word):
            near.typos = [(n, t) for n, t in _typos(db, near.word) if t not in near.forms]


def _holds(db: sqlite3.Connection, word: str) -> bool:
    """Whether the index holds `word`. A plain ASCII word is its own term to FTS5, which finds
    its first row without reading the rest (the vocabulary reads them all, to count them: half
    a millisecond for a word in 10,000 rows); any other is looked up as the vocabulary spells it."""
    if word.isascii() and word.isalnum():
        return db.execute("SELECT 1 FROM said WHERE said MATCH ? LIMIT 1", (f'"{word}"',)).fetchone() is not None
    return db.execute("SELECT 1 FROM temp.said_terms WHERE term = ?", (word,)).fetchone() is not None


def _vocabulary(db: sqlite3.Connection) -> None:
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.said_terms USING fts5vocab(main, said, row)")


def terms_starting(db: sqlite3.Connection, start: str, most: int) -> list[str]:
    """The index's first `most` terms beginning with `start` (its vocabulary table made if need be)."""
    _vocabulary(db)
    return _terms(db, start, most)


def _terms(db: sqlite3.Connection, start: str, most: int = MOST_TERMS) -> list[str]:
    """The index's terms beginning with `start` (the first `most`)."""
    return [t for (t,) in db.execute("SELECT term FROM temp.said_terms WHERE term >= ? AND term < ? LIMIT ?",
                                     (start, start + "\U0010ffff", most))]


_STEMMERS: dict[str, Any] = {}


def _stemmer(word: str) -> Any:
    language = "russian" if "\u0400" <= word[0] <= "\u04ff" else "english"
    if language not in _STEMMERS:
        try:
            import Stemmer  # type: ignore[import-not-found,unused-ignore]  # PyStemmer: C, loads in a millisecond
        except ImportError:
            return None
        _STEMMERS[language] = Stemmer.Stemmer(language)
    return _STEMMERS[language]


def _forms(db: sqlite3.Connection, word: str) -> list[str]:
    """Terms of the index with the word's stem: `retry` for `retries`, `fails` for `failed`.
    (Asked once another term starts with the word's first three letters: a form would.)"""
    stemmer = _stemmer(word)
    if stemmer is None:
        return []
    stem = stemmer.stemWord(word)
    shared = 0
    while shared < min(len(stem), len(word)) and stem[shared] == word[shared]:
        shared += 1
    if shared < 3:
        return []
    # one letter less: a form may change the stem's last letter (`retry`, stem `retri`)
    candidates = [t for t in _terms(db, word[:max(3, shared - 1)]) if t != word]
    return [t for t, s in zip(candidates, stemmer.stemWords(candidates), strict=True) if s == stem]


def _typos(db: sqlite3.Connection, word: str) -> list[tuple[int, str]]:
    """(edits, term) of the index's terms one edit from the word (two from a long one), or whose
    stem is that far from the word's (`reconect` finds `reconnecting`; counted as two edits, so
    a typo of the word itself comes first), the edits anywhere in
    the word: among the terms that share its first three letters (an edit after them), or its
    second half (an edit before it; from the index's terms spelt backwards), or, for a short
    word, two of its first three letters swapped. (A range of FTS5's terms costs the reading of
    their lists of rows: two letters would cost a keystroke 30 ms.)"""
    if len(word) < 4 or not word.isalpha():
        return []
    most = 1 if len(word) < 8 else 2
    starts = [word[:3]] + ([] if len(word) >= 6 else [word[1] + word[0] + word[2], word[0] + word[2] + word[1]])
    candidates = dict.fromkeys(t for start in dict.fromkeys(starts) for t in _terms(db, start))
    if len(word) >= 6:
        candidates.update(dict.fromkeys(_ending(db, word[len(word) // 2:])))
    candidates.pop(word, None)
    terms = list(candidates)
    if not terms:
        return []
    stemmer = _stemmer(word)
    stem = stemmer.stemWord(word) if stemmer else word
    stems = stemmer.stemWords(terms) if stemmer else terms
    near = []
    for term, term_stem in zip(terms, stems, strict=True):
        n = edits(word, term, most) if abs(len(term) - len(word)) <= most else most + 1
        if n > most:
            if abs(len(term_stem) - len(stem)) > most or edits(stem, term_stem, most) > most:
                continue
            n = 2  # a typo of another form: after the typos of the word itself (the last tier)
        near.append((n, term))
    return near


def _ending(db: sqlite3.Connection, end: str) -> list[str]:
    """The index's terms ending with `end`."""
    rev = end[::-1]
    return [t[::-1] for (t,) in db.execute("SELECT rev FROM term WHERE rev >= ? AND rev < ? LIMIT ?",
                                           (rev, rev + "\U0010ffff", MOST_TERMS))]


def edits(a: str, b: str, most: int) -> int:
    """The optimal string alignment distance of `a` and `b` (swapping two neighbours is one
    edit), or more than `most` once it must be."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > most:
            return most + 1
        previous2, previous = previous, current
    return previous[-1]


def instead(text: str, nears: list[Near | str]) -> list[tuple[str, str]]:
    """What a near answer matched instead of the words asked, as (asked, found) pairs:
    `("retries", "retry")`, each word asked once, by what `text` holds."""
    from sessidx.querywords import whole_word  # for near answers alone: not loaded on every search

    folded = fold(text)
    said = []
    for near in nears:
        if isinstance(near, str) or whole_word(folded, near.word):
            continue
        found = next((t for t in (*near.forms, *near.typos_within(2)) if whole_word(folded, t)), None)
        if found is None and (at := folded.find(near.word)) >= 0:  # a prefix: the word it starts
            end = at
            while end < len(folded) and (folded[end].isalnum()):
                end += 1
            found = folded[at:end]
        if found and found != near.word:
            said.append((near.word, found))
    return said


def mark(pairs: list[tuple[str, str]]) -> str:
    """The pairs as a row's mark says them: `retries → retry, reconect → reconnect`."""
    return ", ".join(f"{asked} → {found}" for asked, found in pairs)


def groups(nears: list[Near | str]) -> list[list[str]]:
    """Per query word, every word a near answer may hold in its place (for its snippet)."""
    return [[w] for n in nears if isinstance(n, str) for w in n.strip('"* ').split()] + [
        [n.word, *n.forms, *n.typos_within(2)] for n in nears if isinstance(n, Near)]
