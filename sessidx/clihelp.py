"""Which flags the installed agent CLI accepts, learnt once from its `--help`.

Cached per binary (path, size, mtime) under the cache folder, so a CLI upgrade is seen at
once and a key press never waits for a Node start-up twice.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

HELP_TIMEOUT = 10.0


class HelpText:
    """`has`/`accepts` answer True when nothing is known (no binary, or no help text)."""

    def __init__(self, text: str, found: bool) -> None:
        self.text = text
        self.found = found

    def _word(self, word: str) -> bool:
        return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", self.text) is not None

    def has(self, flag: str) -> bool:
        return not self.text.strip() or self._word(flag)

    def accepts(self, flag: str, value: str) -> bool:
        return not self.text.strip() or (self._word(flag) and self._word(value))


def learn(program: str, help_args: tuple[str, ...], cache_folder: str | None, path_env: str | None) -> HelpText:
    binary = shutil.which(program, path=path_env)
    if binary is None:
        return HelpText("", found=False)
    try:
        st = os.stat(binary)
    except OSError:
        return HelpText("", found=False)
    key = f"{binary}\0{st.st_size}\0{st.st_mtime_ns}\0{' '.join(help_args)}"
    from sessidx import cache

    store = os.path.join(cache_folder, "clihelp.json") if cache_folder else None
    known: dict[str, str] = {}
    data, _ = cache.read(store)
    try:
        loaded = json.loads(data) if data else None
    except ValueError:
        loaded = None
    if isinstance(loaded, dict):
        known = {k: v for k, v in loaded.items() if isinstance(v, str)}
    if key in known:
        return HelpText(known[key], found=True)
    try:
        done = subprocess.run(
            [binary, *help_args], capture_output=True, timeout=HELP_TIMEOUT, stdin=subprocess.DEVNULL,
        )
        text = (done.stdout + done.stderr).decode("utf-8", "replace")
    except (OSError, subprocess.SubprocessError):
        text = ""
    known = {k: v for k, v in known.items() if not k.startswith(binary + "\0")}
    known[key] = text
    cache.write(store, json.dumps(known).encode())  # a cache that cannot be written only costs time
    return HelpText(text, found=True)
