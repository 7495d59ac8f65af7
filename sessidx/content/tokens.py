"""The words of a message as the index's tokenizer (FTS5's unicode61) sees them, counted at
index time: where each message starts among its row's tokens (so a search can tell words said
in one message from words said in neighbouring ones, over every match, from the index alone),
the parts of its camelCase words (`flushPendingAcks` is also `flush pending acks` and
`pendingacks`), and its distinct terms (for typos early in a word: see near.py).

unicode61 makes a token of each run of letters and digits (ASCII: [0-9A-Za-z]; beyond it the
letters and numbers of Unicode), lower case and without accents; everything else parts them.
An ASCII message is split by bytes.translate, in C; another by a pattern of the same classes.
Where the package was built with its C part (sessidx/_words.c), the counting and the parts are
found there (`python_counted` is the same in Python: held equal by tests/words_test.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sessidx.compiled import compiled
from sessidx.content.near import PART, fold  # `selector` finds one saying it before one saying only `SelectorKey`

# sessidx/_words.c's `counted`; None: installed without a compiler (setup.py)
_native_counted: Callable[[str | bytes, str], tuple[int, list[str]]] | None = compiled("_words", "counted")

# every ASCII byte that is not a letter or a digit, as a space: what parts unicode61's tokens
_ASCII_SPLIT = bytes(b if chr(b).isalnum() or b >= 0x80 else 0x20 for b in range(256))
_WORD = re.compile(r"[^\W_]+")
# a word's letters and digits by their case (digits as lower case), everything else a space: a
# change of case inside a word (`aA`, `AAa`; not `Word`, `WORD`) is then found by bytes.find
_CASES = bytes(0x41 if chr(b).isupper() and b < 0x80 else 0x61 if chr(b).isalnum() and b < 0x80 else 0x20
               for b in range(256))
_PART = re.compile(rb"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def counted(text: str) -> tuple[int, list[str]]:
    """python_counted's answer, in C where it was built."""
    if _native_counted is None:
        return python_counted(text)
    if text.isascii():
        return _native_counted(text, PART)
    return len(_WORD.findall(text)), _native_counted(text.encode("ascii", "ignore"), PART)[1]


def python_counted(text: str) -> tuple[int, list[str]]:
    """How many tokens unicode61 makes of `text`, and the parts of its camelCase and PascalCase
    words, each distinct word once, as terms to index beside it (PART in front):
    `flushPendingAcks` gives flush, pending, acks and pendingacks, the parts and the joins of
    its last parts, so any inner part, or run of parts to the end, is found (a run that stops
    earlier is a prefix of one of these). An ASCII text is looked at by one bytes.translate and
    finds in C: tokens start where a space meets a letter, a word changes case inside."""
    if text.isascii():
        raw = text.encode()
        cases = raw.translate(_CASES)
        tokens = cases.count(b" a") + cases.count(b" A") + (cases[:1] not in (b"", b" "))
    else:
        tokens = len(_WORD.findall(text))
        raw = text.encode("ascii", "ignore")
        cases = raw.translate(_CASES)
    changes = _all(cases, b"aA", 1) + _all(cases, b"AAa", 1)
    if not changes:
        return tokens, []
    words = dict.fromkeys(raw[cases.rfind(b" ", 0, at) + 1:(end if (end := cases.find(b" ", at)) >= 0 else len(raw))]
                          for at in changes)
    out: dict[bytes, None] = {}
    for word in words:
        parts = _PART.findall(word)
        if len(parts) < 2:
            continue
        out.update(dict.fromkeys(parts))
        out.update(dict.fromkeys(b"".join(parts[i:]) for i in range(1, len(parts) - 1)))
    return tokens, [PART + part.decode() for part in out]


def _all(data: bytes, sub: bytes, skip: int) -> list[int]:
    """Where `sub` is in `data` (each place + `skip`)."""
    out = []
    at = data.find(sub)
    while at >= 0:
        out.append(at + skip)
        at = data.find(sub, at + len(sub))
    return out


def terms(text: str) -> set[bytes]:
    """The distinct terms of `text` as the index holds them (lower case, without accents), in UTF-8."""
    if PART in text:  # the parts are terms of the words beside them
        text = text.replace(PART, " ")
    if text.isascii():
        return set(text.encode().lower().translate(_ASCII_SPLIT).split())
    return {fold(w).encode() for w in set(_WORD.findall(text))}
