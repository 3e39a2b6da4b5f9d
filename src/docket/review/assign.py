"""Assigning tasks to reviewers: by hand, or balanced over a job.

A task without assignments is open to every reviewer (first come, up to its required
reviews); once a task has assignments, only the assigned reviewers may decide on it.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from sqlalchemy import exists, func, select
from sqlalchemy.orm import Session

from docket.errors import InputError
from docket.review.errors import TaskClosedError, UnknownTaskError
from docket.review.models import TASK_CLOSED, TASK_OPEN, Assignment, Decision, ReviewTask
from docket.review.queue import resolve_reviewer


def assign(
    session: Session, task_id: int, reviewers: Sequence[str], *, assigned_by: str = ""
) -> int:
    """Assign a task to reviewers (idempotent); return how many assignments are new.

    Raises:
        UnknownTaskError: no such task.
        TaskClosedError: the task is closed.
        UnknownReviewerError: a name is not an active reviewer.
    """
    task = session.get(ReviewTask, task_id)
    if task is None:
        raise UnknownTaskError(f"there is no review task {task_id}")
    if task.status == TASK_CLOSED:
        raise TaskClosedError(f"task {task_id} is closed; it cannot be assigned")
    people = [resolve_reviewer(session, name) for name in reviewers]
    have = set(session.scalars(select(Assignment.reviewer_id).where(Assignment.task_id == task_id)))
    new = [p for p in people if p.id not in have]
    for person in new:
        session.add(Assignment(task_id=task_id, reviewer_id=person.id, assigned_by=assigned_by))
    session.flush()
    return len(new)


def open_load(session: Session) -> Counter[int]:
    """Per reviewer id: open tasks assigned to them on which they have not decided."""
    undecided = ~exists().where(
        Decision.task_id == Assignment.task_id, Decision.reviewer_id == Assignment.reviewer_id
    )
    query = (
        select(Assignment.reviewer_id, func.count())
        .join(ReviewTask, ReviewTask.id == Assignment.task_id)
        .where(ReviewTask.status == TASK_OPEN, undecided)
        .group_by(Assignment.reviewer_id)
    )
    return Counter(dict(session.execute(query).all()))


def assign_job(
    session: Session,
    job: str,
    reviewers: Sequence[str],
    *,
    per_task: int | None = None,
    assigned_by: str = "",
) -> int:
    """Spread a job's open tasks over reviewers, least-loaded first.

    Each open task gets assignments up to ``per_task`` reviewers (default: the task's
    required reviews); a reviewer is never assigned the same task twice.

    Returns:
        The number of new assignments.

    Raises:
        InputError: no reviewers, or more reviewers per task than reviewers given.
        UnknownReviewerError: a name is not an active reviewer.
    """
    people = [resolve_reviewer(session, name) for name in dict.fromkeys(reviewers)]
    if not people:
        raise InputError("name at least one reviewer", field="reviewers")
    tasks = session.scalars(
        select(ReviewTask)
        .where(ReviewTask.job == job, ReviewTask.status == TASK_OPEN)
        .order_by(ReviewTask.id)
    ).all()
    existing: dict[int, set[int]] = {}
    for task_id, reviewer_id in session.execute(select(Assignment.task_id, Assignment.reviewer_id)):
        existing.setdefault(task_id, set()).add(reviewer_id)
    load = open_load(session)
    added = 0
    for task in tasks:
        have = existing.setdefault(task.id, set())
        needed = (per_task or task.required_reviews) - len(have)
        candidates = sorted(
            (p for p in people if p.id not in have), key=lambda p: (load[p.id], people.index(p))
        )
        if needed > len(candidates):
            raise InputError(
                f"task {task.id} needs {needed} more reviewer(s) but only "
                f"{len(candidates)} of those given are not assigned to it yet",
                field="reviewers",
            )
        for person in candidates[: max(needed, 0)]:
            session.add(Assignment(task_id=task.id, reviewer_id=person.id, assigned_by=assigned_by))
            have.add(person.id)
            load[person.id] += 1
            added += 1
    session.flush()
    return added


def mark_blind(session: Session, job: str, fraction: float, *, seed: int = 0) -> int:
    """Mark a random fraction of a job's undecided open tasks blind (debate hidden).

    For measuring the debate's effect: compare the ``blind`` and ``with_debate``
    rows of the statistics. Tasks with decisions are left alone so that no reviewer
    switches condition halfway. Returns how many tasks are blind afterwards (among
    the undecided open ones).

    Raises:
        InputError: the fraction is not between 0 and 1.
    """
    if not 0.0 <= fraction <= 1.0:
        raise InputError("must be between 0 and 1", field="fraction")
    decided = set(session.scalars(select(Decision.task_id).distinct()))
    tasks = [
        t
        for t in session.scalars(
            select(ReviewTask)
            .where(ReviewTask.job == job, ReviewTask.status == TASK_OPEN)
            .order_by(ReviewTask.id)
        )
        if t.id not in decided
    ]
    chosen = set(random.Random(seed).sample(range(len(tasks)), round(fraction * len(tasks))))
    for index, task in enumerate(tasks):
        task.blind = index in chosen
    session.flush()
    return len(chosen)
