"""CJK splitting: Han, kana and Hangul have no spaces between words."""

from __future__ import annotations

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from typing import Any

# Han, kana and Hangul have no spaces between words: each character is indexed as a token,
# and a query's run of them becomes a phrase of characters.
_CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF))


def is_cjk(c: str) -> bool:
    return any(low <= ord(c) <= high for low, high in _CJK_RANGES)


def cjk_apart(text: str) -> str:
    if text.isascii() or max(text) < "\u3040":  # both in C: most text has no CJK character
        return text
    if len(text) < 200:  # a query: not worth compiling a pattern for
        return "".join(f" {c} " if is_cjk(c) else c for c in text)
    global _cjk
    if _cjk is None:  # compiled on first use: the class alone costs 2 ms, which a keystroke need not pay
        import re

        _cjk = re.compile("([" + "".join(f"\\u{a:04x}-\\u{b:04x}" for a, b in _CJK_RANGES) + "])")
    return str(_cjk.sub(r" \1 ", text))


_cjk: Any = None
