"""SQLite's C module, loaded without `functools`.

`_sqlite3` imports `functools` when it loads, for the one thing it takes from it:
`lru_cache(maxsize)`, which wraps each connection's statement cache. `functools` brings
`collections`, `operator`, `reprlib`, `keyword` and `types`: 2.5 ms of CPU on the test VM, as
much as a warm `sessidx search`'s query. The cache itself is C (`_functools._lru_cache_wrapper`),
so while `_sqlite3` loads it is handed a `functools` holding only an `lru_cache` that builds
that, and the real module is back in place before anything else runs: whoever imports
`functools` later gets the real one. Where `functools` is loaded already, or this Python's
`_functools` has no such wrapper, `_sqlite3` is simply imported.
"""

from __future__ import annotations

import _functools  # type: ignore[import-not-found,unused-ignore]  # compiled into the interpreter: no file to find
import sys

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["sqlite3"]


def _statement_cache(maxsize: int = 128, typed: bool = False) -> Callable[[Any], Any]:
    """What `functools.lru_cache(maxsize)` is to `_sqlite3`: the C cache around a function."""
    return lambda function: _functools._lru_cache_wrapper(function, maxsize, typed, lambda *info: info)


def _load() -> Any:
    if "functools" in sys.modules or not hasattr(_functools, "_lru_cache_wrapper"):
        import _sqlite3

        return _sqlite3
    standin = type(sys)("functools")
    standin.lru_cache = _statement_cache  # type: ignore[attr-defined]
    sys.modules["functools"] = standin
    try:
        import _sqlite3
    except Exception:  # noqa: BLE001 - a `_sqlite3` that wants more of functools: the real one, then
        sys.modules.pop("_sqlite3", None)
        del sys.modules["functools"]
        import _sqlite3
    finally:
        if sys.modules.get("functools") is standin:
            del sys.modules["functools"]
    return _sqlite3


try:
    sqlite3 = _load()
except ImportError:  # a Python built without `_sqlite3` on its own: the package may still have it
    import sqlite3
