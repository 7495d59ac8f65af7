"""sessidx's compiled parts (setup.py builds them where a C compiler is; they are optional): a
function of one, imported on first use and remembered; None where the package was built without
it, and Python does the same work."""

from __future__ import annotations

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from typing import Any

_loaded: dict[tuple[str, str], Any] = {}


def compiled(module: str, name: str) -> Any:
    """`name` of the compiled module `sessidx.<module>` (`_stamps`, `_words`), or None."""
    key = (module, name)
    if key not in _loaded:
        try:
            _loaded[key] = getattr(__import__(f"sessidx.{module}", fromlist=[name]), name)
        except (ImportError, AttributeError):  # installed without a compiler
            _loaded[key] = None
    return _loaded[key]
