"""Store faults give one line naming the fix, before any LLM call where they can be found."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from sqlalchemy import event, text

from docket.cli.main import main
from docket.errors import StoreError
from docket.relevance.types import Pair
from docket.runner import judge_pairs
from docket.store import open_store, upsert_job
from docket.store.base import display_url
from tests.helpers_judges import KeywordJudge
from tests.scripted_server import serve

GOOD = json.dumps({"label": "relevant", "evidence": ["S1"], "reasoning": "scripted"})


def _pairs(tmp_path: Path) -> Path:
    path = tmp_path / "pairs.jsonl"
    path.write_text(
        json.dumps({"qid": "q", "query": "egg", "docid": "d", "text": "An egg."}) + "\n"
    )
    return path


def _judge(monkeypatch, capsys, tmp_path: Path, db: str) -> tuple[int, str, int]:  # type: ignore[no-untyped-def]
    """Run ``docket judge`` against a scripted server; return exit code, stderr, calls."""
    with serve(lambda _body: GOOD) as server:
        argv = ["docket", "judge", str(_pairs(tmp_path)), "--method", "single"]
        monkeypatch.setattr(sys, "argv", [*argv, "--model", server.model(), "--db", db])
        with pytest.raises(SystemExit) as caught:
            main()
        return caught.value.code, capsys.readouterr().err.strip(), len(server.requests)


def _assert_one_line(code: int, err: str, calls: int, *phrases: str) -> None:
    assert code == 2 and calls == 0
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err
    for phrase in phrases:
        assert phrase in err


def test_missing_directory(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    db = str(tmp_path / "no-such-dir" / "d.db")
    code, err, calls = _judge(monkeypatch, capsys, tmp_path, db)
    _assert_one_line(code, err, calls, "does not exist", "create it first")


def test_a_file_that_is_not_sqlite(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "notes.db"
    db.write_text("my notes, not a database\n")
    code, err, calls = _judge(monkeypatch, capsys, tmp_path, str(db))
    _assert_one_line(code, err, calls, "is not a SQLite file")
    assert db.read_text() == "my notes, not a database\n"


def test_a_read_only_database(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "d.db"
    open_store(db).close()
    uri = f"sqlite:///file:{db}?mode=ro&uri=true"
    code, err, calls = _judge(monkeypatch, capsys, tmp_path, uri)
    _assert_one_line(code, err, calls, "readonly", "writable")


def test_a_database_from_a_newer_docket_is_refused(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "d.db"
    store = open_store(db)
    with store.engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO schema_version (version, name, applied_at) VALUES (99, 'future', '2030-01-01')"
            )
        )
    store.close()
    code, err, calls = _judge(monkeypatch, capsys, tmp_path, str(db))
    _assert_one_line(code, err, calls, "newer docket", "schema 99", "upgrade docket")


def test_passwords_are_masked(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("psycopg")
    url = "postgresql+psycopg://docket:s3cret-pw@127.0.0.1:1/docket"
    code, err, calls = _judge(monkeypatch, capsys, tmp_path, url)
    _assert_one_line(code, err, calls, "docket:***@127.0.0.1:1")
    assert "s3cret-pw" not in err
    assert display_url(url) == "postgresql+psycopg://docket:***@127.0.0.1:1/docket"


def test_a_full_disk_is_one_store_error_and_keeps_what_was_saved(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    store = open_store(db)
    with store.session() as session:
        upsert_job(session, name="j", method="keyword", model="none", options={}, source="t")
    store.engine.dispose()
    pages = {"n": 0}

    @event.listens_for(store.engine, "connect")
    def _small_disk(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        # SQLite's own cap on the file size: writes past it fail as on a full disk.
        cursor = dbapi_connection.cursor()
        pages["n"] = cursor.execute("PRAGMA page_count").fetchone()[0] + 3
        cursor.execute(f"PRAGMA max_page_count={pages['n']}")
        cursor.close()

    pairs = [Pair("q", "egg", f"d{i}", "egg " * 2000) for i in range(40)]
    with pytest.raises(StoreError) as caught:
        asyncio.run(judge_pairs(store, "j", pairs, KeywordJudge(), concurrency=2))
    assert "full" in caught.value.message and "free disk space" in caught.value.hint
