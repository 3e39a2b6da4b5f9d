"""The store keeps every judgment rebuildable, on SQLite and on a real PostgreSQL."""

from __future__ import annotations

import os

import pytest
from sqlalchemy import text

from docket.errors import ConfigError
from docket.relevance.types import Judgment, Pair
from docket.runner.records import judgment_from_record, save_judgment
from docket.store import finished_keys, load_judgments, open_store, upsert_job
from docket.store.migrations import LEDGER

PAIR = Pair("q1", "boil an egg", "d1", "Boil it six minutes.", label=1)
JUDGMENT = Judgment(
    "q1",
    "d1",
    "dream",
    1,
    "consensus",
    rounds=2,
    transcript=({"round": 1, "agent": "A", "label": 1, "evidence": ["S1"]},),
    usage={"calls": 4, "prompt_tokens": 400, "completion_tokens": 80},
    model="fake:x",
    prompt_hash="abc",
    config={"rounds": 2},
    parse_failures=1,
)


def _roundtrip(url: str) -> None:
    store = open_store(url)
    with store.session() as session:
        upsert_job(session, name="j", method="dream", model="fake:x", options={"r": 2}, source="p")
        save_judgment(session, "j", PAIR, JUDGMENT)
    with store.session() as session:
        records = load_judgments(session, "j")
        assert finished_keys(session, "j") == {("q1", "d1")}
    assert len(records) == 1
    assert judgment_from_record(records[0]) == JUDGMENT
    assert records[0].gold == 1 and records[0].docket_version
    store.close()


def test_sqlite_roundtrip_rebuilds_the_judgment(db_url: str) -> None:
    _roundtrip(db_url)


@pytest.mark.skipif(
    "DOCKET_TEST_POSTGRES_URL" not in os.environ,
    reason="PostgreSQL not started (make test starts it)",
)
def test_postgres_roundtrip_rebuilds_the_judgment() -> None:
    from tests.pg_helpers import pg_schema_url

    url = pg_schema_url(os.environ["DOCKET_TEST_POSTGRES_URL"])
    store = open_store(url)
    with store.engine.begin() as conn:  # a clean schema for this test
        for table in ("judgments", "pair_claims", "jobs"):
            conn.execute(text(f"DELETE FROM {table}"))
    store.close()
    _roundtrip(url)


def test_saving_twice_updates_instead_of_duplicating(db_url: str) -> None:
    store = open_store(db_url)
    with store.session() as session:
        upsert_job(session, name="j", method="dream", model="m", options={}, source="p")
        save_judgment(session, "j", PAIR, JUDGMENT)
        save_judgment(session, "j", PAIR, Judgment("q1", "d1", "dream", 0, "human"))
    with store.session() as session:
        records = load_judgments(session, "j")
    assert [(r.label, r.decided_by) for r in records] == [(0, "human")]


def test_resuming_a_job_with_other_settings_is_refused(db_url: str) -> None:
    store = open_store(db_url)
    with store.session() as session:
        upsert_job(session, name="j", method="dream", model="m", options={"rounds": 2}, source="p")
    with store.session() as session, pytest.raises(ConfigError, match="already exists"):
        upsert_job(session, name="j", method="dream", model="m", options={"rounds": 3}, source="p")


def test_schema_version_is_recorded(db_url: str) -> None:
    store = open_store(db_url)
    with store.engine.connect() as conn:
        versions = conn.execute(text("SELECT version FROM schema_version")).scalars().all()
    assert versions == [migration.version for migration in LEDGER]
