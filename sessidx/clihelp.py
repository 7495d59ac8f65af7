"""What the installed agent CLI accepts and which version it is, learnt once from the CLI itself.

`PROGRAM <help args>` and `PROGRAM --version` are run once per binary (path, size, mtime) and
cached under the cache folder, so a CLI upgrade is seen at once and a key press never waits
for a Node start-up twice. The probes run in a throwaway home (`HOME`, `CODEX_HOME`, ... point
into a temp folder that is removed afterwards): `codex resume --help` writes
`~/.codex/tmp/arg0-linux/…` into whatever home it runs with, and the agents' homes are never
written. A probe that fails or times out is not cached and means "unknown": then only the
flags needed for safety are passed, with a warning.

A slow machine must not cost the model: under load `gemini --help` took 7 s (2.6 s idle), so
each probe may take HELP_TIMEOUT. The preview never waits for one: it starts the probe in the
background (one per binary: a marker file names the process running it) and shows the plan as
"still being read". Enter (`resume`) waits for a probe already running, or runs it itself.
"""

from __future__ import annotations

import os
import sys
import time

from sessidx import cache
from sessidx.readers import json_value

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    import subprocess

# The preview (every arrow key) reads what a CLI accepts from the cache: without `json`, `re`,
# `shutil` or `subprocess` (16 ms of imports there); a probe imports what it runs.

HELP_TIMEOUT = 30.0  # for the help and the version together, run side by side
# Where the agent CLIs keep their state; all of them point into the probe's throwaway home.
_HOME_VARIABLES = ("HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME", "COPILOT_HOME", "CLINE_DIR",
                   "QWEN_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")


class HelpText:
    """What one CLI accepts. `found`: it is on PATH; `known`: its help could be read; `pending`:
    its probe is still running (the preview's answer before the first probe of a binary ends).

    Not found: everything is assumed accepted (the command is shown as it would run, and the
    plan warns that the CLI is missing). Found but not known: nothing optional is assumed."""

    def __init__(self, text: str, found: bool, version: str | None = None, known: bool = True,
                 pending: bool = False) -> None:
        self.text = text
        self.found = found
        self.version = version  # `2.1.332`, or None when the CLI did not say
        self.known = known and (not found or bool(text.strip()))
        self.pending = pending

    def _word(self, word: str) -> bool:
        """`word` in the text, not as part of a longer word or flag (regex `(?<![\\w-])word(?![\\w-])`)."""
        if not word:  # not asked by any app; as the regex answers it
            import re

            return re.search(r"(?<![\w-])(?![\w-])", self.text) is not None
        text, at = self.text, self.text.find(word)
        while at >= 0:
            end = at + len(word)
            if not (at and _in_word(text[at - 1])) and not (end < len(text) and _in_word(text[end])):
                return True
            at = text.find(word, at + 1)
        return False

    def has(self, flag: str) -> bool:
        if not self.found:
            return True
        return self.known and self._word(flag)

    def accepts(self, flag: str, value: str) -> bool:
        if not self.found:
            return True
        return self.known and self._word(flag) and self._word(value)

    def said(self) -> str:
        """The start of what the CLI printed, for a message: its first lines, at most 200 characters."""
        lines = [line.strip() for line in self.text.splitlines() if line.strip()]
        joined = " ".join(lines[:3])
        return joined if len(joined) <= 200 else joined[:199] + "…"

    def version_at_least(self, *wanted: int) -> bool | None:
        """Whether the installed version is at least `wanted` (None when unknown)."""
        numbers = "".join(c if c.isdecimal() else " " for c in self.version or "").split()
        if not numbers:
            return None
        have = tuple(int(n) for n in numbers[: len(wanted)])
        return have >= wanted


def _in_word(ch: str) -> bool:
    return ch.isalnum() or ch in "_-"  # regex's `\w` is str.isalnum() and `_`


def which(program: str, path: str | None) -> str | None:
    """`shutil.which(program, path=path)` on POSIX, without importing shutil."""
    def runnable(name: str) -> bool:
        return os.path.exists(name) and os.access(name, os.X_OK) and not os.path.isdir(name)

    if os.path.dirname(program):
        return program if runnable(program) else None
    if path is None:
        path = os.environ.get("PATH")
        if path is None:
            try:
                path = os.confstr("CS_PATH") or os.defpath
            except (AttributeError, ValueError):
                path = os.defpath
    seen = set()
    for folder in path.split(os.pathsep) if path else ():
        if folder not in seen:
            seen.add(folder)
            if runnable(name := os.path.join(folder, program)):
                return name
    return None


def learn(program: str, help_args: tuple[str, ...], cache_folder: str | None, path_env: str | None,
          wait: bool = True, timeout: float | None = None) -> HelpText:
    """What `program` on `path_env` accepts. `wait=False` (the preview): a binary not probed yet
    is probed in the background and answered as pending. `timeout`: the app's own limit where
    its help is slower than HELP_TIMEOUT (else it would time out, uncached, on every Enter)."""
    timeout = timeout or HELP_TIMEOUT
    binary = which(program, path_env)
    key = _key(binary, help_args) if binary else None
    if binary is None or key is None:
        return HelpText("", found=False)
    store = os.path.join(cache_folder, "clihelp.json") if cache_folder else None
    if (cached := _cached(store, key)) is not None:
        return cached
    marker = _marker_path(cache_folder, key)
    if not wait:
        if not _running(marker, timeout):
            _start_in_background(program, help_args, cache_folder, path_env, marker, timeout)
        return HelpText("", found=True, known=False, pending=True)
    if _running(marker, timeout):
        deadline = time.monotonic() + timeout + 5
        while _running(marker, timeout) and time.monotonic() < deadline:
            time.sleep(0.1)
        if (cached := _cached(store, key)) is not None:
            return cached
    _claim(marker, os.getpid())
    try:
        return _probe_and_store(binary, help_args, store, key, timeout)
    finally:
        _release(marker, os.getpid())


def _key(binary: str, help_args: tuple[str, ...]) -> str | None:
    """The cache key: the binary as it is now. An upgrade changes its inode or ctime even where
    size and mtime stay (npm gives every file the same mtime)."""
    try:
        st = os.stat(binary)
    except OSError:
        return None
    return f"{binary}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_ino}\0{' '.join(help_args)}"


def _cached(store: str | None, key: str) -> HelpText | None:
    data, _ = cache.read(store)
    found = _entries(data).get(key)
    return HelpText(found[0], found=True, version=found[1] or None) if found else None


def _entries(data: bytes | None) -> dict[str, list[str]]:
    loaded = json_value(data) if data else None
    if not isinstance(loaded, dict):
        return {}
    return {k: v for k, v in loaded.items()
            if isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) for x in v)}


def _probe_and_store(binary: str, help_args: tuple[str, ...], store: str | None, key: str,
                     timeout: float = HELP_TIMEOUT) -> HelpText:
    probed, version = _probe(binary, help_args, timeout)
    if probed is None:
        return HelpText("", found=True, version=version, known=False)  # not cached: try again next time
    known = {k: v for k, v in _entries(cache.read(store)[0]).items() if not k.startswith(binary + "\0")}
    known[key] = [probed, version or ""]
    import json

    cache.write(store, json.dumps(known).encode())  # a cache that cannot be written only costs time
    return HelpText(probed, found=True, version=version)


# --- one probe per binary at a time ---------------------------------------------------------

def _marker_path(cache_folder: str | None, key: str) -> str | None:
    import zlib

    return os.path.join(cache_folder, f"clihelp-{zlib.crc32(key.encode('utf-8', 'surrogateescape')):08x}.running") \
        if cache_folder else None


def _running(marker: str | None, timeout: float = HELP_TIMEOUT) -> bool:
    """A probe of this binary is running: the marker names a live process and is not older
    than a probe may take (a pid reused after a crash does not hold anyone up for long)."""
    if marker is None:
        return False
    try:
        with open(marker, encoding="ascii") as f:
            pid = int(f.read().strip() or 0)
        age = time.time() - os.stat(marker).st_mtime
    except (OSError, ValueError):
        return False
    if pid <= 0 or age > timeout + 10:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # alive, another user's
    return True


def _claim(marker: str | None, pid: int) -> None:
    if marker is None:
        return
    try:
        os.makedirs(os.path.dirname(marker), mode=0o700, exist_ok=True)
        tmp = f"{marker}.{os.getpid()}"
        with open(tmp, "w", encoding="ascii") as f:
            f.write(str(pid))
        os.replace(tmp, marker)
    except OSError:
        pass  # without a marker a second probe may run at once: it only costs time


def _release(marker: str | None, pid: int) -> None:
    if marker is None:
        return
    try:
        with open(marker, encoding="ascii") as f:
            mine = f.read().strip() == str(pid)
        if mine:
            os.unlink(marker)
    except OSError:
        pass


def _start_in_background(program: str, help_args: tuple[str, ...], cache_folder: str | None,
                         path_env: str | None, marker: str | None, timeout: float = HELP_TIMEOUT) -> None:
    """`python -m sessidx.clihelp` in a session of its own: it outlives the preview (fzf ends a
    preview on the next arrow key) and writes the cache when it is done."""
    import json
    import subprocess

    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
    request = json.dumps({"program": program, "help_args": list(help_args), "cache_folder": cache_folder,
                          "path_env": path_env, "timeout": timeout})
    try:
        child = subprocess.Popen([sys.executable, "-m", "sessidx.clihelp", request], env=env, cwd="/",
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 start_new_session=True)
    except OSError:
        return
    _claim(marker, child.pid)


def _probe(binary: str, help_args: tuple[str, ...], timeout: float = HELP_TIMEOUT) -> tuple[str | None, str | None]:
    """(help text, version) from the CLI, run in a throwaway home; help is None if it failed."""
    import re
    import tempfile

    with tempfile.TemporaryDirectory(prefix="sessidx-probe-") as home:
        env = {**os.environ, **{name: home for name in _HOME_VARIABLES}}
        deadline = time.monotonic() + timeout
        running = [_start([binary, *help_args], env, home), _start([binary, "--version"], env, home)]
        help_text, version_text = (_finish(p, deadline) for p in running)
    found = re.search(r"\d+\.\d+(?:\.\d+)?", version_text or "")
    return help_text, found.group(0) if found else None


def _start(argv: list[str], env: dict[str, str], cwd: str) -> subprocess.Popen[bytes] | None:
    import subprocess

    try:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                env=env, cwd=cwd, start_new_session=True)
    except OSError:
        return None


def _finish(process: subprocess.Popen[bytes] | None, deadline: float) -> str | None:
    """What it printed, if it exited 0 by the deadline; otherwise it is ended (with its children)."""
    if process is None:
        return None
    import subprocess

    try:
        out, _ = process.communicate(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        import contextlib
        import signal

        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return None
    text = out.decode("utf-8", "replace")
    return text if process.returncode == 0 and text.strip() else None


def _background_probe(request: str) -> None:
    """The preview's background probe: learn and cache, then release the marker."""
    import json

    asked = json.loads(request)
    program, help_args = asked["program"], tuple(asked["help_args"])
    binary = which(program, asked["path_env"])
    cache_folder = asked["cache_folder"]
    key = _key(binary, help_args) if binary else None
    if binary is None or key is None or not cache_folder:
        return
    marker = _marker_path(cache_folder, key)
    try:
        _probe_and_store(binary, help_args, os.path.join(cache_folder, "clihelp.json"), key,
                         float(asked.get("timeout") or HELP_TIMEOUT))
    finally:
        _release(marker, os.getpid())


if __name__ == "__main__":
    _background_probe(sys.argv[1])
