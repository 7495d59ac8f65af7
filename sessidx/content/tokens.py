"""The words of a message as the index's tokenizer (FTS5's unicode61) sees them, counted at
index time: where each message starts among its row's tokens (so a search can tell words said
in one message from words said in neighbouring ones, over every match, from the index alone),
the parts of its camelCase words (`flushPendingAcks` is also `flush pending acks` and
`pendingacks`), and its distinct terms (for typos early in a word: see near.py).

unicode61 makes a token of each run of letters and digits (ASCII: [0-9A-Za-z]; beyond it the
letters and numbers of Unicode), lower case and without accents; everything else parts them.
An ASCII message is split by bytes.translate, in C; another by a pattern of the same classes.
"""

from __future__ import annotations

import re

from sessidx.content.near import PART, fold  # `selector` finds one saying it before one saying only `SelectorKey`

# every ASCII byte that is not a letter or a digit, as a space: what parts unicode61's tokens
_ASCII_SPLIT = bytes(b if chr(b).isalnum() or b >= 0x80 else 0x20 for b in range(256))
_WORD = re.compile(r"[^\W_]+")
# a word with a change of case inside (not `Word`, `WORD`): from the start of its letters and digits
_CAMEL = re.compile(rb"(?<![A-Za-z0-9])[A-Za-z0-9]*?(?:[a-z0-9][A-Z]|[A-Z][A-Z][a-z])[A-Za-z0-9]*")
_PART = re.compile(rb"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def identifier_parts(text: str) -> list[str]:
    """The parts of the text's camelCase and PascalCase words, each distinct word once, as
    terms to index beside it (PART in front): `flushPendingAcks` gives flush, pending, acks and
    pendingacks, the parts and the joins of its last parts, so any inner part, or run of parts
    to the end, is found (a run that stops earlier is a prefix of one of these)."""
    raw = text.encode("ascii", "ignore") if not text.isascii() else text.encode()
    out: dict[bytes, None] = {}
    for word in dict.fromkeys(_CAMEL.findall(raw)):
        parts = _PART.findall(word)
        if len(parts) < 2:
            continue
        out.update(dict.fromkeys(parts))
        out.update(dict.fromkeys(b"".join(parts[i:]) for i in range(1, len(parts) - 1)))
    return [PART + part.decode() for part in out]


def count(text: str) -> int:
    """How many tokens unicode61 makes of `text`."""
    if text.isascii():
        return len(text.encode().translate(_ASCII_SPLIT).split())
    return len(_WORD.findall(text))


def terms(text: str) -> set[str]:
    """The distinct terms of `text` as the index holds them: lower case, without accents."""
    if PART in text:  # the parts are terms of the words beside them
        text = text.replace(PART, " ")
    if text.isascii():
        return {t.decode() for t in set(text.encode().lower().translate(_ASCII_SPLIT).split())}
    return {fold(w) for w in set(_WORD.findall(text))}
