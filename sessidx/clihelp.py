"""What the installed agent CLI accepts and which version it is, learnt once from the CLI itself.

`PROGRAM <help args>` and `PROGRAM --version` are run once per binary (path, size, mtime) and
cached under the cache folder, so a CLI upgrade is seen at once and a key press never waits
for a Node start-up twice. The probes run in a throwaway home (`HOME`, `CODEX_HOME`, ... point
into a temp folder that is removed afterwards): `codex resume --help` writes
`~/.codex/tmp/arg0-linux/…` into whatever home it runs with, and the agents' homes are never
written. A probe that fails or times out is not cached and means "unknown": then only the
flags needed for safety are passed, with a warning.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

HELP_TIMEOUT = 10.0
# Where the agent CLIs keep their state; all of them point into the probe's throwaway home.
_HOME_VARIABLES = ("HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME", "COPILOT_HOME", "CLINE_DIR",
                   "QWEN_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")


class HelpText:
    """What one CLI accepts. `found`: it is on PATH; `known`: its help could be read.

    Not found: everything is assumed accepted (the command is shown as it would run, and the
    plan warns that the CLI is missing). Found but not known: nothing optional is assumed."""

    def __init__(self, text: str, found: bool, version: str | None = None, known: bool = True) -> None:
        self.text = text
        self.found = found
        self.version = version  # `2.1.332`, or None when the CLI did not say
        self.known = known and (not found or bool(text.strip()))

    def _word(self, word: str) -> bool:
        return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", self.text) is not None

    def has(self, flag: str) -> bool:
        if not self.found:
            return True
        return self.known and self._word(flag)

    def accepts(self, flag: str, value: str) -> bool:
        if not self.found:
            return True
        return self.known and self._word(flag) and self._word(value)

    def version_at_least(self, *wanted: int) -> bool | None:
        """Whether the installed version is at least `wanted` (None when unknown)."""
        numbers = re.findall(r"\d+", self.version or "")
        if not numbers:
            return None
        have = tuple(int(n) for n in numbers[: len(wanted)])
        return have >= wanted


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
    known: dict[str, list[str]] = {}
    data, _ = cache.read(store)
    try:
        loaded = json.loads(data) if data else None
    except ValueError:
        loaded = None
    if isinstance(loaded, dict):
        known = {k: v for k, v in loaded.items() if isinstance(v, list) and len(v) == 2
                 and all(isinstance(x, str) for x in v)}
    if key in known:
        cached_text, cached_version = known[key]
        return HelpText(cached_text, found=True, version=cached_version or None)
    probed, version = _probe(binary, help_args)
    if probed is None:
        return HelpText("", found=True, version=version, known=False)  # not cached: try again next time
    known = {k: v for k, v in known.items() if not k.startswith(binary + "\0")}
    known[key] = [probed, version or ""]
    cache.write(store, json.dumps(known).encode())  # a cache that cannot be written only costs time
    return HelpText(probed, found=True, version=version)


def _probe(binary: str, help_args: tuple[str, ...]) -> tuple[str | None, str | None]:
    """(help text, version) from the CLI, run in a throwaway home; help is None if it failed."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="sessidx-probe-") as home:
        env = {**os.environ, **{name: home for name in _HOME_VARIABLES}}
        help_text = _run([binary, *help_args], env, home)
        version_text = _run([binary, "--version"], env, home)
    found = re.search(r"\d+\.\d+(?:\.\d+)?", version_text or "")
    return help_text, found.group(0) if found else None


def _run(argv: list[str], env: dict[str, str], cwd: str) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, timeout=HELP_TIMEOUT, stdin=subprocess.DEVNULL,
                              env=env, cwd=cwd)
    except (OSError, subprocess.SubprocessError):
        return None
    text = (done.stdout + done.stderr).decode("utf-8", "replace")
    return text if done.returncode == 0 and text.strip() else None
