"""Audit draws on a stored job: strata, reproducibility, extension, blind tasks, bad input."""

from __future__ import annotations

import os

import pytest
from sqlalchemy import select

from docket.audit.draw import audit_labels, draw_audit, parse_size
from docket.audit.plan import plan_audit
from docket.errors import ConfigError, InputError
from docket.review.auth import add_reviewer
from docket.review.models import ReviewTask
from docket.review.queue import record_decision, select_tasks
from docket.store.audit_tables import AuditPairRow
from docket.store.base import Store
from docket.store.judgments import add_judgment_rows, upsert_job


def _row(i: int) -> dict:
    """Pair i: every tenth escalated; others agreed in round 1 (every third in round 2)."""
    escalated = i % 10 == 0
    return {
        "qid": f"q{i % 7}", "docid": f"d{i}", "query": "a question", "text": f"doc {i}.",
        "gold": i % 2, "method": "dream", "label": None if escalated else i % 2,
        "grade": None, "decided_by": "escalated" if escalated else "consensus",
        "rounds": 2 if escalated or i % 3 == 0 else 1, "transcript": [], "usage": {},
        "model": "fake:x", "prompt_hash": "h", "config": {},
    }  # fmt: skip


def _job(store: Store, n: int = 200, name: str = "j") -> None:
    with store.session() as session:
        upsert_job(session, name=name, method="dream", model="fake:x", options={}, source="t")
        add_judgment_rows(session, name, [_row(i) for i in range(n)])


def _drawn(store: Store) -> dict[tuple[str, str], float]:
    with store.session() as session:
        rows = session.scalars(select(AuditPairRow)).all()
        return {(r.qid, r.docid): r.inclusion_probability for r in rows}


def test_a_draw_is_stratified_reproducible_and_blind(store: Store, db_url: str) -> None:
    _job(store)
    result = draw_audit(store, "j", 36, seed=3)
    # 180 automatic pairs: round 1 relevant 67, irrelevant 53; round 2: 33 and 27.
    sizes = {s.name: s.population for s in result.strata}
    assert sizes == {
        "round1-irrelevant": 53, "round1-relevant": 67,
        "round2-irrelevant": 27, "round2-relevant": 33,
    }  # fmt: skip
    # Proportional: 36 / 180 = 0.2 of each (10.6, 13.4, 5.4, 6.6 by largest remainder).
    assert {s.name: s.drawn for s in result.strata} == {
        "round1-irrelevant": 11, "round1-relevant": 13,
        "round2-irrelevant": 5, "round2-relevant": 7,
    }  # fmt: skip
    assert result.census == 20 and result.size == 36 and result.added == 36
    first = _drawn(store)
    with store.session() as session:
        rows = session.scalars(select(AuditPairRow)).all()
    expected = {"round1-irrelevant": 11 / 53, "round1-relevant": 13 / 67,
                "round2-irrelevant": 5 / 27, "round2-relevant": 7 / 33}  # fmt: skip
    assert all(r.inclusion_probability == pytest.approx(expected[r.stratum]) for r in rows)
    with store.session() as session:
        tasks = select_tasks(session, job="j")
    assert len(tasks) == 36 and all(t.blind for t in tasks)
    assert all(t.payload["transcript"] == [] and "p_yes" not in t.payload for t in tasks)
    # Same seed on another store: the same pairs.
    from docket.store.base import open_store

    other = open_store(db_url.replace("docket.db", "other.db"))
    _job(other)
    draw_audit(other, "j", 36, seed=3)
    assert _drawn(other) == first
    draw_audit(other, "j", 36, seed=3)  # drawing the same size again adds nothing
    assert _drawn(other) == first
    other.close()


def test_a_larger_draw_keeps_the_pairs_and_rewrites_the_probabilities(store: Store) -> None:
    _job(store)
    draw_audit(store, "j", 36, seed=3)
    first = set(_drawn(store))
    result = draw_audit(store, "j", "30%", seed=3)
    assert result.size == 54 and result.added == 18
    now = _drawn(store)
    assert first <= set(now)
    with store.session() as session:
        rows = session.scalars(select(AuditPairRow)).all()
    sizes = {s.name: (s.drawn, s.population) for s in result.strata}
    assert all(r.inclusion_probability == sizes[r.stratum][0] / sizes[r.stratum][1] for r in rows)
    with store.session() as session:
        assert len(session.scalars(select(ReviewTask)).all()) == 54


def test_oversampling_and_answers_feed_labels_and_neyman(store: Store) -> None:
    _job(store)
    with pytest.raises(ConfigError, match="Neyman"):
        draw_audit(store, "j", 20, allocation="neyman")
    result = draw_audit(store, "j", 20, oversample={"round2-relevant": 4.0})
    split = {s.name: s.drawn for s in result.strata}
    assert split["round2-relevant"] > split["round2-irrelevant"]
    with store.session() as session:
        add_reviewer(session, "ann")
        for task in select_tasks(session, job="j"):
            record_decision(session, task.id, "ann", 1)
    pairs = audit_labels(store, "j")
    assert len(pairs) == 20 and all(p.human_label == 1 for p in pairs)
    assert {p.auto_label for p in pairs} == {0, 1}
    assert all(p.reviewers == ("ann",) for p in pairs)
    grown = draw_audit(store, "j", 40, allocation="neyman")
    assert grown.size == 40
    plan = plan_audit(store, "j", 0.05)
    assert plan.size >= 40 and plan.drawn == 40 and plan.expected_half_width <= 0.05


def test_bad_draws_are_refused(store: Store) -> None:
    _job(store)
    with pytest.raises(InputError, match="180 automatic labels"):
        draw_audit(store, "j", 181)
    with pytest.raises(ConfigError, match="no job named"):
        draw_audit(store, "nope", 10)
    with pytest.raises(InputError):
        parse_size("ten", 100)
    assert parse_size("5%", 180) == 9
    draw_audit(store, "j", 10, seed=1)
    with pytest.raises(ConfigError, match="--seed 1"):
        draw_audit(store, "j", 20, seed=2)
    with pytest.raises(InputError, match="180 automatic labels"):  # before the seed check
        draw_audit(store, "j", 999, seed=2)
    with pytest.raises(InputError, match="only grows"):
        draw_audit(store, "j", 5, seed=1)
    with pytest.raises(ConfigError, match="no stratum"):
        draw_audit(store, "j", 20, seed=1, oversample={"x": 2.0})
    assert len(_drawn(store)) == 10  # nothing half-written by a refused draw


@pytest.mark.skipif(
    not os.environ.get("DOCKET_TEST_POSTGRES_URL"), reason="needs PostgreSQL (test-services)"
)
def test_draw_extend_and_answer_on_postgresql() -> None:
    from docket.audit.report import certificate
    from docket.store.base import open_store
    from tests.pg_helpers import pg_schema_url

    pg = open_store(pg_schema_url(os.environ["DOCKET_TEST_POSTGRES_URL"]))
    try:
        _job(pg)
        draw_audit(pg, "j", 36, seed=3)
        grown = draw_audit(pg, "j", 54, seed=3)
        assert grown.size == 54 and grown.added == 18
        with pg.session() as session:
            add_reviewer(session, "ann")
            for task in select_tasks(session, job="j"):
                record_decision(session, task.id, "ann", int(task.payload["docid"][1:]) % 2)
        pairs = audit_labels(pg, "j")
        assert len(pairs) == 54 and all(p.human_label == p.auto_label for p in pairs)
        assert certificate(pg, "j").automatic_accuracy.estimate == pytest.approx(1.0)
    finally:
        pg.close()
