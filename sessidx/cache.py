"""The cache folder: an optional accelerator, never a reason to fail.

Everything sessidx keeps (the index, what each CLI's `--help` said) lives in
`$XDG_CACHE_HOME/sessidx` (default `~/.cache/sessidx`), a folder of mode 0700 with files of
mode 0600. A relative `XDG_CACHE_HOME` is ignored, as the XDG spec says: it would put the
cache wherever the command happens to run, an agent's home included. Anything at a cache
path that is not a regular file (a FIFO, a device, a link to one), a file over the size cap,
a folder that cannot be made or written: all mean "no cache" plus one line that `-v` shows.
"""

from __future__ import annotations

import os
import time

from sessidx.readers import open_regular

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from sessidx.config import Env

READ_CAP = 256 * 1024 * 1024  # a 50,000-session index is about 20 MB
STALE_TEMP_SECONDS = 600  # a temp file this old belongs to a run that died mid-write


def cache_dir(env: Env) -> str | None:
    """The cache folder, or None when no absolute one can be named."""
    base = env.get("XDG_CACHE_HOME")
    if not base or not os.path.isabs(base):
        home = env.vars.get("HOME") or os.path.expanduser("~")
        base = os.path.join(home, ".cache")
    return os.path.join(base, "sessidx") if os.path.isabs(base) else None


def folder_problem(folder: str) -> str | None:
    """Why the cache folder must not be used, as ssh refuses a `~/.ssh` others could write to:
    anyone who can write in it can plant a cache (sessions, folders and ids a resume acts on)
    or a link that makes a write land elsewhere. None when it is fine, or not made yet."""
    try:
        st = os.stat(folder)
    except FileNotFoundError:
        return None  # made 0700 on first write
    except OSError as exc:
        return f"cache folder {folder} cannot be checked ({exc.strerror or exc}); not used"
    if st.st_uid != os.geteuid():
        return f"cache folder {folder} is owned by uid {st.st_uid}, not by you; not used"
    if st.st_mode & 0o022:
        return f"cache folder {folder} is writable by others (mode {st.st_mode & 0o777:o}); not used: chmod 700 it"
    return None


def read(path: str | None, cap: int = READ_CAP) -> tuple[bytes | None, str | None]:
    """(contents, problem): None and no problem when the file is simply not there yet."""
    if path is None:
        return None, None
    if problem := folder_problem(os.path.dirname(path)):
        return None, problem
    f = open_regular(path)
    if f is None:
        return None, (f"cache {path} is not a regular file; not used" if os.path.lexists(path) else None)
    with f:
        try:
            data = f.read(cap + 1)
        except OSError as exc:
            return None, f"cache {path} cannot be read ({exc.strerror or exc}); not used"
    if len(data) > cap:
        return None, f"cache {path} is over {cap >> 20} MiB; not used"
    return data, None


def write(path: str | None, data: bytes) -> str | None:
    """Write `data` to `path` atomically (a temp file renamed into place, so two runs at once
    never tear it); returns what went wrong, or None."""
    if path is None:
        return "no absolute cache folder (HOME and XDG_CACHE_HOME are relative or unset); nothing cached"
    folder = os.path.dirname(path)
    tmp = None
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        if problem := folder_problem(folder):
            return problem
        fd, tmp = _new_temp(path)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        return f"cache {path} not written ({exc.strerror or exc})"
    finally:
        if tmp is not None:
            remove(tmp)
    _remove_stale_temps(folder, os.path.basename(path))
    return None


def _new_temp(path: str) -> tuple[int, str]:
    """A new file `<path>.<random>.tmp` only we can read, as tempfile.mkstemp makes one: with
    plain `os` calls, since tempfile loads shutil, random and re into the first press's stream."""
    for _ in range(16):
        tmp = f"{path}.{os.urandom(6).hex()}.tmp"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"{path}: no free temp name")


def remove(path: str) -> None:
    """Removes a file of ours if it is there; a file already gone, or one that cannot go, is no error."""
    try:  # noqa: SIM105 - contextlib is a load the cache write need not pay
        os.unlink(path)
    except OSError:
        pass


def _remove_stale_temps(folder: str, prefix: str) -> None:
    """Temp files left by runs that were killed mid-write (a live writer's is seconds old)."""
    limit = time.time() - STALE_TEMP_SECONDS
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.startswith(prefix) and entry.name.endswith(".tmp"):
                    try:
                        if entry.stat(follow_symlinks=False).st_mtime < limit:
                            os.unlink(entry.path)
                    except OSError:
                        pass
    except OSError:
        pass
