"""Every test runs against homes it makes itself; the real agent homes are off limits."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "fixtures"))
# Homes written by the real CLIs, with their expected listings: a copy of the steering repo's
# shared/realdata kept in the project, so a fresh clone runs every test.
REALDATA = Path(os.environ.get("SESSIDX_REALDATA", ROOT / "fixtures" / "realdata"))
from sessidx.apps import APPS, HOME_VARS  # noqa: E402

APP_HOME_VARS = (*HOME_VARS, "SESSIDX_SHELL", "SESSIDX_FZF_OPTS", "SESSIDX_KEY", "SESSIDX_ACCEPT", "SESSIDX_HOSTS",
                 "SESSIDX_SSH", "SESSIDX_HOSTS_TIMEOUT")


class YouForgotToPointSessidxAtATestHome(BaseException):
    """A test read the real ~/.claude or ~/.codex: set SESSIDX_HOME (the `home` fixture does).

    A BaseException, so that sessidx's own "skip what cannot be read" handlers, which catch
    Exception, cannot swallow it."""


# Every app's default folders under the real home, from the registry: a new app is guarded too.
_REAL_HOMES = tuple(os.path.join(os.path.expanduser("~"), folder) for app in APPS.values() for folder in app.home_dirs)


_GUARDED_EVENTS = {"open", "os.scandir", "os.listdir", "sqlite3.connect"}


def _guard(event: str, args: tuple[object, ...]) -> None:
    if event in _GUARDED_EVENTS and args and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.fsdecode(os.fspath(args[0]))
        if path.startswith(_REAL_HOMES):
            raise YouForgotToPointSessidxAtATestHome(path)


sys.addaudithook(_guard)


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty agent home and cache of this test's own; app overrides cleared."""
    agent_home = tmp_path / "home"
    agent_home.mkdir()
    for name in APP_HOME_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SESSIDX_HOME", str(agent_home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no hosts file of the user's
    return agent_home


def _data_without_absolute_links(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
    """tarfile's "data" filter, leaving out links to absolute paths instead of failing on them
    (gptme keeps a `workspace` link to the real folder in each conversation)."""
    if member.issym() and os.path.isabs(member.linkname):
        return None
    return tarfile.data_filter(member, path)


@pytest.fixture(scope="session")
def realdata(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """Extract `<name>-home.tar.gz` from shared/realdata once; returns the home folder."""
    cache: dict[str, Path] = {}

    def extract(name: str) -> Path:
        if name not in cache:
            archive = REALDATA / f"{name}.tar.gz"
            assert archive.exists(), f"real data missing: {archive} (fixtures/realdata is part of the project)"
            target = tmp_path_factory.mktemp(name)
            with tarfile.open(archive) as tar:
                tar.extractall(target, filter=_data_without_absolute_links)
            cache[name] = target
        return cache[name]

    return extract


def run_cli(*args: str, env: dict[str, str] | None = None, input: str | None = None,
            check: bool = False) -> subprocess.CompletedProcess[str]:
    """The installed entry point in a child process, as a user runs it."""
    done = subprocess.run(
        [sys.executable, "-m", "sessidx", *args], capture_output=True, text=True,
        env={**os.environ, **(env or {})}, input=input, timeout=60,
    )
    if check and done.returncode != 0:
        raise AssertionError(f"sessidx {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return done


@pytest.fixture
def cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    return run_cli


def require(tool: str) -> str:
    """A real tool the test needs; missing is a failure in CI and a skip elsewhere."""
    import shutil

    found = shutil.which(tool)
    if found is None:
        if os.environ.get("CI"):
            raise AssertionError(f"{tool} is not installed; .ci/run must install it")
        pytest.skip(f"{tool} not installed")
    return found


@pytest.fixture
def stub_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A PATH folder of stub agent CLIs that record argv (NUL-separated) and cwd, and print help."""
    folder = tmp_path / "bin"
    folder.mkdir()
    yield folder
