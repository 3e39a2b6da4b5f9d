"""The runner's batched judgment insert stores exactly what the ORM stores for one record."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sqlalchemy import select

from docket.store import open_store, upsert_job
from docket.store.judgments import add_judgment_rows, put_judgment
from docket.store.tables import JudgmentRecord

ROW = {
    "qid": "q1", "docid": "d1", "query": "how long to boil an egg",
    "text": "Boil it for 6 minutes. Ünïcode and 'quotes' and \"more\".", "gold": 1,
    "method": "dream", "label": 1, "grade": None, "confidence": 0.75,
    "decided_by": "consensus", "rounds": 2,
    "transcript": [{"round": 1, "agent": "A", "label": 1, "evidence": ["S1"],
                    "reasoning": "says 6 min", "nested": {"k": [1, 2.5, None, True]}}],
    "usage": {"calls": 2, "prompt_tokens": 300, "latency_s": 0.25}, "model": "m",
    "prompt_hash": "h", "config": {"rounds": 2}, "parse_failures": 1, "invalid_evidence": 0,
}  # fmt: skip


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'rows.db'}"
    if "DOCKET_TEST_POSTGRES_URL" not in os.environ:
        pytest.skip("PostgreSQL not started (make test starts it)")
    from tests.pg_helpers import pg_schema_url

    return pg_schema_url(os.environ["DOCKET_TEST_POSTGRES_URL"])


def _record(session, job: str) -> dict:  # type: ignore[no-untyped-def]
    record = session.scalar(select(JudgmentRecord).where(JudgmentRecord.job == job))
    values = {c.name: getattr(record, c.name) for c in JudgmentRecord.__table__.columns}
    return {k: v for k, v in values.items() if k not in ("id", "job")}


def test_batched_rows_read_back_as_the_orm_stores_them(url: str) -> None:
    store = open_store(url)
    with store.session() as session:
        for job in ("orm", "batch"):
            upsert_job(session, name=job, method="dream", model="m", options={}, source="")
        put_judgment(session, "orm", dict(ROW))
        add_judgment_rows(session, "batch", [dict(ROW)])
    with store.read_session() as session:
        orm, batch = _record(session, "orm"), _record(session, "batch")
    for stamp in ("created_at", "updated_at"):  # both are datetimes, a moment apart
        assert type(orm.pop(stamp)) is type(batch.pop(stamp))
    assert batch == orm
    assert batch["transcript"] == ROW["transcript"] and batch["text"] == ROW["text"]
    store.close()


def test_a_pair_that_has_a_record_keeps_it(url: str) -> None:
    store = open_store(url)
    with store.session() as session:
        upsert_job(session, name="j", method="dream", model="m", options={}, source="")
        add_judgment_rows(session, "j", [dict(ROW)])
        add_judgment_rows(session, "j", [{**ROW, "label": 0}, {**ROW, "docid": "d2"}])
    with store.read_session() as session:
        labels = dict(session.execute(select(JudgmentRecord.docid, JudgmentRecord.label)).all())
        assert labels == {"d1": 1, "d2": 1}  # the first record of d1 won
    store.close()
