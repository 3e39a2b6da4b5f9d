"""Test-wide safety: no test can reach a remote endpoint or download anything."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from docket.store.base import Store, open_store

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"

os.environ["DOCKET_BLOCK_REMOTE"] = "1"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("MPLCONFIGDIR", str(PROJECT_ROOT / ".cache" / "matplotlib"))
os.environ.pop("OPENAI_API_KEY", None)
os.environ.pop("OPENAI_BASE_URL", None)


@pytest.fixture
def shared_data() -> Path:
    """The folder of real data shared with the project (TREC DL 2021 pairs)."""
    return SHARED_DATA


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    """A fresh SQLite database URL per test."""
    return f"sqlite:///{tmp_path / 'docket.db'}"


@pytest.fixture(autouse=True)
def _isolated_store_and_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets its own default store and response cache (never the user's)."""
    monkeypatch.setenv("DOCKET_DB", str(tmp_path / "default-docket.db"))
    monkeypatch.setenv("DOCKET_CACHE", str(tmp_path / "responses.sqlite"))


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    """A fresh store (every table) at ``db_url``, closed after the test."""
    opened = open_store(db_url)
    yield opened
    opened.close()
