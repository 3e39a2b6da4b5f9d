"""The review queue: enqueue, decisions (append-only, corrections), final labels."""

from __future__ import annotations

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import DatabaseError

from docket.errors import InputError, ReviewError
from docket.review.errors import TaskClosedError, UnknownReviewerError, UnknownTaskError
from docket.review.models import Decision, ReviewTask
from docket.review.queue import close_task, enqueue, final_labels, record_decision
from docket.store.base import Store
from tests.review.review_helpers import relevance_payload


def _task(store: Store, key: str = "q1/d1", k: int = 1, job: str = "j", **payload) -> int:
    with store.session() as session:
        return enqueue(
            session,
            job=job,
            kind="relevance",
            item_key=key,
            payload=relevance_payload(**payload),
            required_reviews=k,
        ).id


def _decide(store: Store, task_id: int, who: str, label: int, **kw) -> Decision:
    with store.session() as session:
        return record_decision(session, task_id, who, label, **kw)


def test_enqueue_is_idempotent(store: Store) -> None:
    first = _task(store)
    again = _task(store, query="a different query")
    assert again == first
    with store.session() as session:
        tasks = session.scalars(select(ReviewTask)).all()
        assert len(tasks) == 1 and tasks[0].payload["query"].startswith("what is")
    assert _task(store, job="other") != first  # another job is another task


def test_enqueue_validates_payload_and_kind(store: Store) -> None:
    with store.session() as session:
        with pytest.raises(InputError, match="payload.query"):
            enqueue(session, job="j", kind="relevance", item_key="k", payload={"qid": "q"})
        with pytest.raises(InputError, match="unknown task kind"):
            enqueue(session, job="j", kind="vibes", item_key="k", payload={})
        with pytest.raises(InputError, match="required_reviews"):
            enqueue(
                session,
                job="j",
                kind="relevance",
                item_key="k",
                payload=relevance_payload(),
                required_reviews=0,
            )


def test_enqueue_adherence_payload(store: Store) -> None:
    payload = {
        "record": {"turn": "hi"},
        "rule": {"id": "R1", "text": "greet", "tier": "sim"},
        "result": {"status": "fail", "explanation": "no greeting", "span": None},
    }
    with store.session() as session:
        task = enqueue(session, job="j", kind="adherence", item_key="r1", payload=payload)
        assert task.payload["rule"]["id"] == "R1"


def test_decision_completes_task_and_refuses_others(store: Store, tokens: dict) -> None:
    task_id = _task(store, k=1)
    _decide(store, task_id, "ann", 1, grade=3, note="clear", seconds=12.5)
    with pytest.raises(TaskClosedError, match="already has its 1 required review"):
        _decide(store, task_id, "bob", 0)
    with store.session() as session:
        assert session.get(ReviewTask, task_id).status == "done"


def test_correction_is_a_new_row_and_latest_wins(store: Store, tokens: dict) -> None:
    task_id = _task(store, k=2)
    _decide(store, task_id, "ann", 1)
    _decide(store, task_id, "ann", 0, note="misread S2")  # correction, not a second vote
    with store.session() as session:
        assert session.get(ReviewTask, task_id).status == "open"
        assert final_labels(session) == {}  # only one reviewer so far
    _decide(store, task_id, "bob", 0)
    with store.session() as session:
        rows = session.scalars(select(Decision).order_by(Decision.id)).all()
        assert [(r.reviewer_id, r.label) for r in rows] == [(1, 1), (1, 0), (2, 0)]
        outcome = final_labels(session)["q1/d1"]
    assert (outcome.label, outcome.n_decisions, outcome.reviewers) == (0, 2, ("ann", "bob"))


def test_final_labels_majority_ties_and_grades(store: Store, tokens: dict) -> None:
    tie, majority = _task(store, "t/tie", k=2), _task(store, "t/maj", k=3)
    _decide(store, tie, "ann", 1, grade=2)
    _decide(store, tie, "bob", 0, grade=1)
    for who, label, grade in (("ann", 1, 3), ("bob", 1, 3), ("root", 0, None)):
        _decide(store, majority, who, label, grade=grade)
    with store.session() as session:
        labels = final_labels(session, job="j")
        assert final_labels(session, job="nope") == {}
        assert final_labels(session, kind="adherence") == {}
    assert labels["t/tie"].label is None and labels["t/tie"].grade is None
    assert labels["t/maj"].label == 1 and labels["t/maj"].grade == 3


def test_closed_task_refuses_even_its_reviewers(store: Store, tokens: dict) -> None:
    task_id = _task(store, k=2)
    _decide(store, task_id, "ann", 1)
    with store.session() as session:
        close_task(session, task_id)
    with pytest.raises(TaskClosedError, match="closed"):
        _decide(store, task_id, "ann", 0)
    with store.session() as session:
        assert final_labels(session) == {}  # closed without its required reviews


def test_bad_values_unknown_task_and_reviewer(store: Store, tokens: dict) -> None:
    task_id = _task(store)
    for kwargs, field in (
        ({"label": 2}, "label"),
        ({"label": 1, "grade": 4}, "grade"),
        ({"label": 1, "note": "x" * 10_001}, "note"),
    ):
        with pytest.raises(InputError, match=field):
            _decide(store, task_id, "ann", **kwargs)
    with pytest.raises(UnknownTaskError):
        _decide(store, 999, "ann", 1)
    with pytest.raises(UnknownReviewerError):
        _decide(store, task_id, "mallory", 1)


def test_bogus_seconds_are_dropped(store: Store, tokens: dict) -> None:
    task_id = _task(store, k=3)
    assert _decide(store, task_id, "ann", 1, seconds=-3).seconds is None
    assert _decide(store, task_id, "bob", 1, seconds=10**6).seconds is None
    assert _decide(store, task_id, "root", 1, seconds=4.5).seconds == 4.5


def test_decisions_are_append_only(store: Store, tokens: dict) -> None:
    task_id = _task(store)
    decision_id = _decide(store, task_id, "ann", 1).id
    with pytest.raises(ReviewError, match="append-only"), store.session() as session:
        session.get(Decision, decision_id).label = 0
        session.flush()
    with pytest.raises(ReviewError, match="append-only"), store.session() as session:
        session.delete(session.get(Decision, decision_id))
        session.flush()
    # Below the ORM, the SQLite trigger refuses too.
    for statement in ("UPDATE review_decisions SET label = 0", "DELETE FROM review_decisions"):
        with pytest.raises(DatabaseError, match="append-only"), store.session() as session:
            session.execute(text(statement))
    with store.session() as session:
        assert session.get(Decision, decision_id).label == 1


def test_blind_is_recorded_from_task_or_reviewer(store: Store, tokens: dict) -> None:
    with store.session() as session:
        blind_task = enqueue(
            session,
            job="j",
            kind="relevance",
            item_key="b",
            payload=relevance_payload(),
            blind=True,
        ).id
    open_task = _task(store, k=2)
    assert _decide(store, blind_task, "ann", 1).blind is True
    assert _decide(store, open_task, "ann", 1).blind is False
    assert _decide(store, open_task, "bob", 1, blind=True).blind is True
