"""The synthetic home of the apps whose data is built from their source (fixtures/synthetic_apps.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from synthetic_apps import make_home


@pytest.fixture
def synthetic(tmp_path, monkeypatch) -> tuple[Path, dict[str, list[dict]]]:
    expected = make_home(tmp_path / "syn")
    monkeypatch.setenv("SESSIDX_HOME", str(tmp_path / "syn" / "home"))
    return tmp_path / "syn", expected
