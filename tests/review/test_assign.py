"""Assignment of tasks to reviewers, and blind-mode splits."""

from __future__ import annotations

from collections import Counter

import pytest
from sqlalchemy import select

from docket.errors import InputError
from docket.review.assign import assign, assign_job, mark_blind, open_load
from docket.review.auth import add_reviewer
from docket.review.errors import ForeignTaskError, TaskClosedError
from docket.review.models import Assignment, ReviewTask
from docket.review.queue import close_task, enqueue, record_decision
from docket.store.base import Store
from tests.review.review_helpers import relevance_payload


def _tasks(store: Store, n: int, k: int = 1, job: str = "j") -> list[int]:
    with store.session() as session:
        return [
            enqueue(
                session,
                job=job,
                kind="relevance",
                item_key=f"q/{i}",
                payload=relevance_payload(),
                required_reviews=k,
            ).id
            for i in range(n)
        ]


def test_assigned_task_refuses_other_reviewers(store: Store, tokens: dict) -> None:
    [task_id] = _tasks(store, 1)
    with store.session() as session:
        assert assign(session, task_id, ["ann"]) == 1
        assert assign(session, task_id, ["ann"]) == 0  # idempotent
    with pytest.raises(ForeignTaskError, match="other reviewers"), store.session() as session:
        record_decision(session, task_id, "bob", 1)
    with store.session() as session:
        record_decision(session, task_id, "ann", 1)


def test_unassigned_task_is_open_to_all_up_to_k(store: Store, tokens: dict) -> None:
    [task_id] = _tasks(store, 1, k=2)
    with store.session() as session:
        record_decision(session, task_id, "bob", 1)
        record_decision(session, task_id, "root", 0)
    with pytest.raises(TaskClosedError), store.session() as session:
        record_decision(session, task_id, "ann", 1)


def test_assign_job_balances_k_distinct_reviewers(store: Store, tokens: dict) -> None:
    ids = _tasks(store, 6, k=2)
    with store.session() as session:
        assert assign_job(session, "j", ["ann", "bob", "root"]) == 12
        assert assign_job(session, "j", ["ann", "bob", "root"]) == 0  # all tasks covered
        rows = session.execute(select(Assignment.task_id, Assignment.reviewer_id)).all()
        load = open_load(session)
    per_task = Counter(task for task, _ in rows)
    assert all(per_task[i] == 2 for i in ids)
    assert len(set(rows)) == 12  # never the same reviewer twice on a task
    assert sorted(Counter(r for _, r in rows).values()) == [4, 4, 4]
    assert sorted(load.values()) == [4, 4, 4]


def test_assign_job_prefers_least_loaded(store: Store, tokens: dict) -> None:
    first = _tasks(store, 2, job="a")
    with store.session() as session:
        for task_id in first:
            assign(session, task_id, ["ann"])
    _tasks(store, 2, job="b")
    with store.session() as session:
        assign_job(session, "b", ["ann", "bob"])
        query = select(Assignment.reviewer_id).join(ReviewTask).where(ReviewTask.job == "b")
        rows = session.scalars(query).all()
    assert Counter(rows) == Counter({2: 2})  # bob (id 2) takes both: ann already has two


def test_assign_job_needs_enough_reviewers(store: Store, tokens: dict) -> None:
    _tasks(store, 1, k=3)
    with pytest.raises(InputError, match="needs 3 more"), store.session() as session:
        assign_job(session, "j", ["ann", "bob"])
    with pytest.raises(InputError), store.session() as session:
        assign_job(session, "j", [])


def test_closed_task_cannot_be_assigned(store: Store, tokens: dict) -> None:
    [task_id] = _tasks(store, 1)
    with store.session() as session:
        close_task(session, task_id)
    with pytest.raises(TaskClosedError), store.session() as session:
        assign(session, task_id, ["ann"])


def test_mark_blind_splits_undecided_tasks(store: Store, tokens: dict) -> None:
    ids = _tasks(store, 10)
    with store.session() as session:
        record_decision(session, ids[0], "ann", 1)
        assert mark_blind(session, "j", 0.5, seed=1) == 4  # round(0.5 * 9 undecided)
        blind = {t.id for t in session.scalars(select(ReviewTask)) if t.blind}
        with pytest.raises(InputError, match="fraction"):
            mark_blind(session, "j", 1.5)
    assert len(blind) == 4 and ids[0] not in blind


def test_reviewer_names_are_checked(store: Store) -> None:
    with store.session() as session:
        add_reviewer(session, "ann.lee@example.org")
        with pytest.raises(InputError, match="letters"):
            add_reviewer(session, "<b>ann</b>")
