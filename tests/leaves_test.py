"""content/leaves.py: the terms read from FTS5's leaf pages are FTS5's vocabulary, by C and by
Python alike; a page that is not as the format has it, or an index of another format version,
makes the first index ask fts5vocab instead."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessidx.content import leaves, reading
from sessidx.content.store import HASH_SIZE


def native():  # noqa: ANN201 - the built function
    from sessidx import _words  # built by `pip install` wherever a C compiler is (CI's machine has one)

    return _words.leaf_terms


def said(page_size: int = 4050, hash_size: int = HASH_SIZE) -> sqlite3.Connection:
    """The content index's FTS5 table, alone, in memory; small pages make long lists span many."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.execute("CREATE VIRTUAL TABLE said USING fts5(body, content='', columnsize=0,"
               " tokenize='unicode61 remove_diacritics 2')")
    db.execute(f"INSERT INTO said(said, rank) VALUES ('pgsz', {page_size})")
    db.execute(f"INSERT INTO said(said, rank) VALUES ('hashsize', {hash_size})")
    return db


def vocabulary(db: sqlite3.Connection) -> set[str]:
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.said_terms USING fts5vocab(main, said, row)")
    return {t for (t,) in db.execute("SELECT term FROM temp.said_terms")}


def pages(db: sqlite3.Connection) -> list[bytes]:
    return [page for rowid, page in db.execute("SELECT id, block FROM said_data WHERE id >= ?", (leaves.SEGMENT_ROWIDS,))
            if not (rowid >> 31 & 0x3F or not rowid & 0x7FFFFFFF or rowid >> 53)]


def both_ways(page: bytes) -> tuple[bool, set[str]]:
    """What C and Python make of one page: the same, or the test fails here."""
    in_c: set[str] = set()
    in_python: set[str] = set()
    answer = native()(page, in_c)
    assert answer == leaves.leaf_terms(page, in_python)
    if answer:
        assert in_c == in_python
    return answer, in_c


_WORDS = st.text(st.sampled_from("abcxyz019_éÉßİ日本ŁÆ\ue000"), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_WORDS, min_size=1, max_size=40).map(" ".join), min_size=1, max_size=60),
       st.sampled_from([64, 300, 4050]), st.booleans())
def test_the_leaves_hold_the_vocabulary_written_so_far(bodies, page_size, commit_between):
    """Rows still in FTS5's memory (a first index reads its terms before its commit) and rows in
    segments of their own (one commit between), pages of any size: the same terms as fts5vocab."""
    db = said(page_size)
    db.execute("BEGIN")
    for i, body in enumerate(bodies, 1):
        db.execute("INSERT INTO said(rowid, body) VALUES (?, ?)", (i, body))
        if commit_between and i == len(bodies) // 2:
            db.execute("COMMIT")
            db.execute("BEGIN")
    found = leaves.terms(db)
    assert found == vocabulary(db)
    for page in pages(db):
        assert both_ways(page)[0]


def test_long_lists_and_long_terms_over_many_pages_and_segments():
    """A word in every row (its list spans pages with no term on them), tokens longer than a
    page, and several segments holding the same terms (a small FTS5 hash: it writes out often)."""
    db = said(page_size=128, hash_size=1024)
    db.execute("BEGIN")
    rows = [(i, f"common word{i % 50} {'z' * (300 + i)} Ünïcode{i % 3} 日本語") for i in range(1, 400)]
    db.executemany("INSERT INTO said(rowid, body) VALUES (?, ?)", rows)
    assert db.execute("SELECT count(DISTINCT id >> 37) FROM said_data WHERE id >= ?",
                      (leaves.SEGMENT_ROWIDS,)).fetchone()[0] > 1
    found = leaves.terms(db)
    assert found == vocabulary(db) and "common" in found and "z" * 699 in found and "unicode2" in found


def test_a_page_not_as_the_format_has_it_is_refused_both_ways():
    db = said(page_size=200)
    db.executemany("INSERT INTO said(rowid, body) VALUES (?, ?)", [(i, f"alpha beta{i} gamma") for i in range(1, 60)])
    page = max(pages(db), key=len)
    ok, terms = both_ways(page)
    assert ok and terms
    footer = page[2] << 8 | page[3]
    for broken in (page[:3], page[:2] + b"\x00\x02" + page[4:],  # no room for a header, a footer before it
                   page[:2] + bytes([(len(page) + 1) >> 8, (len(page) + 1) & 0xFF]) + page[4:],  # past the page
                   page[:footer] + b"\xff" * 9,  # a term's place past the footer
                   page[:footer] + b"\x00",  # a place that does not move on
                   page[:4] + b"\x05" + b"1" + page[6:]):  # a term of another index than the main one ('0')
        assert both_ways(broken)[0] is False, broken
    for huge in (1 << 57, (1 << 63) - 1, 1 << 63, (1 << 64) - 1):  # a ninth byte: past any page, or any size
        assert both_ways(page + nine_bytes(huge))[0] is False, huge


def nine_bytes(value: int) -> bytes:
    """`value` as the longest SQLite varint: eight bytes of seven bits, then one of eight."""
    return bytes((value >> (8 + 7 * (7 - k)) & 0x7F) | 0x80 for k in range(8)) + bytes([value & 0xFF])


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_read_as_a_page_give_the_same_answer_both_ways(page):
    both_ways(page)


_REAL = said(page_size=300)
_REAL.executemany("INSERT INTO said(rowid, body) VALUES (?, ?)",
                  [(i, f"Refactor widget{i} naïve {'q' * (i % 40)} café{i % 4}") for i in range(1, 80)])
_REAL_PAGES = pages(_REAL)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(_REAL_PAGES), st.lists(st.tuples(st.integers(0, 400), st.integers(0, 255)), max_size=4),
       st.integers(0, 400))
def test_a_real_page_with_bytes_changed_or_cut_gives_the_same_answer_both_ways(page, changes, cut):
    damaged = bytearray(page)
    for at, byte in changes:
        if at < len(damaged):
            damaged[at] = byte
    both_ways(bytes(damaged[:max(cut, 4)] if cut < len(damaged) else damaged))


def test_an_index_of_another_format_is_read_through_its_vocabulary(monkeypatch):
    """A `said_config` version that is not LEAF_FORMAT: no page is read, and the first index's
    `term` table still holds every term (from fts5vocab)."""
    db = said()
    db.execute("CREATE TABLE term(rev TEXT PRIMARY KEY) WITHOUT ROWID")
    db.executemany("INSERT INTO said(rowid, body) VALUES (?, ?)", [(i, f"Refactor widget{i} naïve") for i in range(1, 30)])
    monkeypatch.setattr(leaves, "LEAF_FORMAT", 5)
    assert leaves.terms(db) is None
    reading._all_terms(db)  # noqa: SLF001 - the first index's last step
    assert {t[::-1] for (t,) in db.execute("SELECT rev FROM term")} == vocabulary(db)


def test_a_first_index_reads_the_leaves_in_c():
    """The C part is what a first index runs (`pip install` builds it where a compiler is)."""
    pytest.importorskip("sessidx._words")
    from sessidx.compiled import compiled

    assert compiled("_words", "leaf_terms") is native()
