"""Every term of the content index's FTS5 table, read from its segments' leaf pages.

A first index fills the typo tier's `term` table with FTS5's vocabulary once its rows are
written. FTS5's own vocabulary table (`fts5vocab`) reads every term's whole list of rows to
count them: on a home of long outputs, whose lists are long, that was 80 ms of a 0.5 s index,
alone on one core at its end. The leaf pages say each term once per segment, ahead of its list,
and a page's footer says where each one starts (the record format is written down at the top of
SQLite's ext/fts5/fts5_index.c; the `version` FTS5 keeps in `said_config` is 4 for it). Any page
not as that format has it makes `terms` answer None, and the caller reads `fts5vocab` instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessidx.compiled import compiled

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable

LEAF_FORMAT = 4  # FTS5's structure version with these leaves (5: tables with secure-delete)
SEGMENT_ROWIDS = 1 << 37  # below: the averages and structure records (FTS5_SEGMENT_ROWID(1, 0))


def terms(db: sqlite3.Connection) -> set[str] | None:
    """Every term of `said`, what its pending rows hold included; None where FTS5's pages are
    of another format (the caller asks fts5vocab)."""
    if db.execute("SELECT v FROM said_config WHERE k = 'version'").fetchone() != (LEAF_FORMAT,):
        return None
    db.execute("SAVEPOINT leaves")  # FTS5 writes out the rows it holds in memory (its xSavepoint)
    db.execute("RELEASE leaves")
    read: Callable[[bytes, set[str]], bool] = compiled("_words", "leaf_terms") or leaf_terms
    found: set[str] = set()
    for rowid, page in db.execute("SELECT id, block FROM said_data WHERE id >= ?", (SEGMENT_ROWIDS,)):
        # a leaf: no doclist index flag, no height, a page number, a segment id below 2^16
        if rowid >> 31 & 0x3F or not rowid & 0x7FFFFFFF or rowid >> 53:
            continue
        if not isinstance(page, bytes) or not read(page, found):
            return None
    return found


def leaf_terms(page: bytes, found: set[str]) -> bool:
    """The terms of one leaf page into `found` (sessidx/_words.c's leaf_terms, in Python):
    whether the page was as the format has it."""
    if len(page) < 4:
        return False
    footer = page[2] << 8 | page[3]
    if not 4 <= footer <= len(page):
        return False
    at, place, term, first = footer, 0, b"", True
    while at < len(page):
        delta, at = _varint(page, at, len(page))
        if delta <= 0 or delta >= footer - place:  # the next term's place, before the footer
            return False
        place += delta
        read = place
        shared = 0
        if not first:  # the page's first term is written whole, each other after what it shares
            shared, read = _varint(page, read, footer)
        fresh, read = _varint(page, read, footer)
        first = False
        if not 0 <= shared <= len(term) or not 0 <= fresh <= footer - read or shared + fresh > footer:
            return False  # (C holds a term in as many bytes as the page's terms take)
        term = term[:shared] + page[read:read + fresh]
        if term[:1] != b"0":  # the main index's terms (no prefix index is made)
            return False
        try:
            found.add(term[1:].decode())
        except UnicodeDecodeError:
            return False
    return True


def _varint(page: bytes, at: int, end: int) -> tuple[int, int]:
    """An SQLite varint at `at` and where it ends; -1 where it runs past `end` or past what a size
    holds (as in C)."""
    value = 0
    for i in range(9):
        if at >= end:
            return -1, at
        byte = page[at]
        at += 1
        value = value << 8 | byte if i == 8 else value << 7 | byte & 0x7F
        if i == 8 or byte < 0x80:
            return (value if value < 1 << 63 else -1), at
    return -1, at
