"""The app registry: every app guarded in the tests and part of the cache key, and named in the
README's table."""

from __future__ import annotations

import os
from pathlib import Path

from sessidx.apps import APPS


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
