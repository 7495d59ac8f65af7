"""The app registry: every app guarded in the tests and part of the cache key, and named in the
README's table."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sessidx.apps import APPS
from tests.conftest import REALDATA


def test_every_app_is_guarded_and_keys_the_cache():
    """Adding an app is one module and one registry line: the tests' real-home guard and the
    cache key come from what each app declares."""
    from sessidx.apps import HOME_VARS
    from tests.conftest import _REAL_HOMES

    home = os.path.expanduser("~")
    for app in APPS.values():
        assert app.home_dirs or getattr(app, "reads_known_folders", False), app.name  # Aider: in the projects
        assert {os.path.join(home, d) for d in app.home_dirs} <= set(_REAL_HOMES), app.name
        assert set(app.home_vars) <= set(HOME_VARS), app.name
    assert {"KIMI_SHARE_DIR", "VIBE_HOME", "CONTINUE_GLOBAL_DIR", "CRUSH_GLOBAL_DATA", "GOOSE_PATH_ROOT",
            "AMP_HOME"} <= set(HOME_VARS)


def test_the_readme_table_names_every_registered_app():
    readme = (Path(__file__).parent.parent.parent / "README.md").read_text()
    table = readme[readme.index("## Supported apps and what is read"):readme.index("What each shows")]
    for name in APPS:
        assert f"(`{name}`)" in table or f"`{name}`)" in table, name


def test_the_registry_knows_each_apps_home_without_importing_it():
    """`present` picks the modules to load from HOMES: a folder or variable missing there would
    leave that app's sessions out of the listing."""
    from sessidx.apps import HOMES

    assert list(HOMES) == list(APPS)
    for name, app in APPS.items():
        assert HOMES[name] == (app.home_vars, app.home_dirs), name


def test_a_build_of_a_claude_home_imports_no_other_app(home):
    """`sessidx build` on a home of one app loads that app's module, not twenty-five (nor sqlite3)."""
    import subprocess
    import sys

    from homes import ClaudeSession

    def loaded() -> set[str]:
        probe = ("import io, sys; from sessidx.cli import main; sys.stdout = io.StringIO(); main(['build']); "
                 "sys.stdout = sys.__stdout__; "
                 "print(' '.join(m for m in sys.modules if m.startswith('sessidx.apps.') or m == 'sqlite3'))")
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return set(done.stdout.split())

    ClaudeSession(cwd="/w").write(home)
    assert loaded() == {"sessidx.apps.claude", "sessidx.apps.base", "sessidx.apps.aider"}
    (home / ".codex").mkdir()  # a second home: its app loads too (so the probe can see more)
    assert {"sessidx.apps.codex", "sessidx.apps.claude"} <= loaded() and "sessidx.apps.gemini" not in loaded()


REAL_HOMES = sorted(p.name.removesuffix(".tar.gz") for p in REALDATA.glob("*-home*.tar.gz"))


def _listed_both_ways(monkeypatch, tmp_path: Path, label: str) -> tuple[list[tuple], list[tuple]]:
    """The index of the apps present beside the index of every app, each from a cold cache."""
    from sessidx.apps import present
    from sessidx.config import current_env
    from sessidx.index import build
    from sessidx.model import Session

    def fields(sessions) -> list[tuple]:
        return [tuple(getattr(s, f) for f in Session.__slots__) for s in sessions]

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / f"cache-every-{label}"))
    every = fields(build(current_env(), APPS.values()).sessions)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / f"cache-present-{label}"))
    return fields(build(current_env(), present(current_env())).sessions), every


@pytest.mark.parametrize("name", REAL_HOMES)
def test_the_apps_present_list_what_every_app_lists(realdata, tmp_path, monkeypatch, name):
    """Each real home in fixtures/realdata: loading only the apps whose homes exist changes nothing."""
    from tests.apps.realhome_documents import home_of

    app = name.removesuffix("-home").removesuffix("-home-legacy")
    home = home_of(app, realdata, tmp_path) if app == "crush" else realdata(name)
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    ours, every = _listed_both_ways(monkeypatch, tmp_path, name)
    assert ours == every and every, name


def test_the_apps_present_list_what_every_app_lists_in_the_synthetic_home(synthetic, tmp_path, monkeypatch):
    """Cursor, Kiro, Amazon Q, Qoder and Aider (in the folders of the others' sessions) beside them."""
    ours, every = _listed_both_ways(monkeypatch, tmp_path, "synthetic")
    assert ours == every and {row[0] for row in every} >= {"cursor", "kiro", "q", "qoder", "aider"}


def test_a_moved_home_is_found_by_its_variable(tmp_path, monkeypatch):
    """CODEX_HOME set: Codex's home is there, whatever is (or is not) under ~/.codex."""
    from sessidx.apps import present_names
    from sessidx.config import current_env

    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "elsewhere"))
    assert "codex" not in present_names(current_env())
    (tmp_path / "elsewhere").mkdir()
    assert present_names(current_env()) == ["codex", "aider"]
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    (tmp_path / "data" / "goose").mkdir(parents=True)
    assert present_names(current_env()) == ["codex", "goose", "aider"]
