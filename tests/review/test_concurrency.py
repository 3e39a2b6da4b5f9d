"""Simultaneous decisions never get lost or double-counted (SQLite, real threads)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
from sqlalchemy import func, select

from docket.review.auth import add_reviewer
from docket.review.errors import TaskClosedError
from docket.review.models import Decision, ReviewTask
from docket.review.queue import enqueue, final_labels, record_decision
from docket.store.base import Store
from tests.review.review_helpers import relevance_payload


def _setup(store: Store, reviewers: int, tasks: int, k: int) -> None:
    with store.session() as session:
        for i in range(reviewers):
            add_reviewer(session, f"r{i}")
        for t in range(tasks):
            enqueue(
                session,
                job="j",
                kind="relevance",
                item_key=f"k{t}",
                payload=relevance_payload(),
                required_reviews=k,
            )


def test_threads_deciding_at_once_respect_k(store: Store) -> None:
    reviewers, tasks, k = 6, 10, 2
    _setup(store, reviewers, tasks, k)
    start = threading.Barrier(reviewers)
    outcomes: list[str] = []

    def work(i: int) -> None:
        start.wait()
        for task_id in range(1, tasks + 1):
            try:
                with store.session() as session:
                    record_decision(session, task_id, f"r{i}", i % 2)
                outcomes.append("ok")
            except TaskClosedError:
                outcomes.append("refused")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(reviewers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count("ok") == tasks * k
    assert outcomes.count("refused") == tasks * (reviewers - k)
    with store.session() as session:
        per_task = dict(
            session.execute(
                select(Decision.task_id, func.count(Decision.id)).group_by(Decision.task_id)
            ).all()
        )
        statuses = set(session.scalars(select(ReviewTask.status)))
        labels = final_labels(session)
    assert per_task == {t: k for t in range(1, tasks + 1)} and statuses == {"done"}
    assert len(labels) == tasks and all(o.n_decisions == k for o in labels.values())


def test_concurrent_http_submissions(store: Store, live_server: str) -> None:
    reviewers, tasks = 4, 5
    _setup(store, 0, tasks, k=reviewers)  # every reviewer must decide every task
    with store.session() as session:
        tokens = [add_reviewer(session, f"w{i}")[1] for i in range(reviewers)]

    def submit(job: tuple[str, int]) -> int:
        token, task_id = job
        with httpx.Client(base_url=live_server, timeout=30) as client:
            response = client.post(
                f"/tasks/{task_id}/decision",
                json={"label": 1},
                headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
            )
            return response.status_code

    jobs = [(token, t) for t in range(1, tasks + 1) for token in tokens]
    with ThreadPoolExecutor(max_workers=reviewers * 2) as pool:
        codes = list(pool.map(submit, jobs))
    assert codes == [201] * len(jobs)
    with store.session() as session:
        assert session.scalar(select(func.count(Decision.id))) == len(jobs)
        assert set(session.scalars(select(ReviewTask.status))) == {"done"}


def test_racing_for_the_last_slot_over_http(store: Store, live_server: str) -> None:
    _setup(store, 0, 1, k=1)
    with store.session() as session:
        tokens = [add_reviewer(session, f"w{i}")[1] for i in range(6)]

    def submit(token: str) -> int:
        with httpx.Client(base_url=live_server, timeout=30) as client:
            return client.post(
                "/tasks/1/decision",
                json={"label": 0},
                headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
            ).status_code

    with ThreadPoolExecutor(max_workers=6) as pool:
        codes = sorted(pool.map(submit, tokens))
    assert codes == [201] + [409] * 5
    with store.session() as session:
        assert session.scalar(select(func.count(Decision.id))) == 1
