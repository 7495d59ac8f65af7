"""Snippets: a hit's best message read again from the transcript, cut around its words."""

from __future__ import annotations

from sessidx.apps import app_named
from sessidx.conversation import by_records, lines_holding, safe_said, transcript_of
from sessidx.model import Session
from sessidx.readers import json_value
from sessidx.redact import mask

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Sequence


def best_message(session: Session, places: Sequence[int], words: list[str]) -> tuple[str, str]:
    """(role, text) of the message among `places` (a hit's records) holding most of `words`,
    read again from the transcript: each record's raw line is looked at first, and only the
    best one is parsed."""
    app = app_named(session.app)
    if app is None or not places:
        return "", ""
    first: tuple[str, str] | None = None
    path = transcript_of(app, session)
    if by_records(app, path):
        # the best three by a look at their bytes, parsed until one holds a word: JSON escapes
        # (\u00fc) can hide a word from that look
        for line in lines_holding(path or "", places, [w.lower().encode() for w in words]):
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
    return sum(find_word(w, text) >= 0 for w in words)


def snippet_of(text: str, words: list[str], width: int = 120) -> str:
    """About `width` characters of `text` around the first of `words` found in it. Secrets are
    looked for in a region well beyond the cut (so none is cut in half at its edge)."""
    text = " ".join(text.split())
    at = max(0, min((i for w in words if (i := find_word(w, text)) >= 0), default=0))
    region_start = max(0, at - 400)
    region = mask(text[region_start:at + width + 400])
    start = max(0, min((i for w in words if (i := find_word(w, region)) >= 0), default=0) - width // 3)
    cut = region[start:start + width]
    return ("…" if region_start + start else "") + cut + ("…" if start + width < len(region) or
                                                          at + width + 400 < len(text) else "")


def find_word(word: str, text: str) -> int:
    """Where `word` is in `text` (any case, and without accents if need be), else -1."""
    at = text.lower().find(word.lower())
    if at < 0 and not text.isascii():  # found by FTS5 without its accents (`umlaut` in `ümlaut`)
        at = _fold(text).find(_fold(word))
    return at


def _fold(text: str) -> str:
    import unicodedata

    return "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))
