"""Whether a string is, whole, a session id of an app's form: the last guard before an id
reaches a command line (a damaged cache, a hostile host). A key-press module: no `re` for
the commonest grammar."""

from __future__ import annotations

from sessidx.apps.base import UUID

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from typing import Any

_GRAMMARS: dict[str, Any] = {}
_HEX = frozenset("0123456789abcdefABCDEF")


def id_fits(pattern: str, ident: str) -> bool:
    """Whether `ident` is, whole, an id of the app whose `id_pattern` this is (compiled once, on
    first use: the warm key press compiles nothing). The commonest grammar, a UUID's, is
    checked without `re`, whose import is a tenth of a move in the picker."""
    if pattern == UUID:
        parts = ident.split("-")
        return list(map(len, parts)) == [8, 4, 4, 4, 12] and _HEX.issuperset("".join(parts))
    compiled = _GRAMMARS.get(pattern)
    if compiled is None:
        import re

        compiled = _GRAMMARS[pattern] = re.compile(pattern)
    return compiled.fullmatch(ident) is not None
