"""The key press, in one function: fzf over the rows the last list kept, drawn before any index
or app module loads (picker.pick_kept); without kept rows (the first press, a new width, no
terminal) the full path through `commands.pick`; then Enter's choice is resumed.

The start-up boundary: this module imports nothing at its top but the picker's lean one, and
`commands` (every app module, the index) only once the kept rows could not answer or Enter chose.
tests/startup_test.py pins what a press loads.
"""

from __future__ import annotations

from sessidx.picker import pick_kept

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Callable

    from sessidx.config import Env


def pick(env: Env, out: Callable[[str], None], query: str | None, shell: str | None) -> int:
    kept = pick_kept(env, query, shell)
    from sessidx import commands  # the index, every app: past the first screen

    if kept is None:
        return commands.pick(env, out, query, shell)
    shell_name, picked = kept
    return commands.resume(env, out, picked.key, shell=shell_name, allow_permissive=picked.permissive)
