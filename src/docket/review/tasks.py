"""The review tasks of a store as a plain list, for people who do not open the web page.

``docket review tasks --job J [--status S]`` prints it; a notebook calls
:func:`list_tasks`. Reviewers see their own queue in the web app (``listing``); this is
the whole store's view, by task id.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from docket.errors import InputError
from docket.review.models import (
    TASK_CLOSED,
    TASK_DONE,
    TASK_OPEN,
    Decision,
    ReviewTask,
    TaskFacets,
)

TASK_STATUSES = (TASK_OPEN, TASK_DONE, TASK_CLOSED, "all")
"""The ``status`` filters of :func:`list_tasks`."""


def list_tasks(
    session: Session, *, job: str | None = None, status: str = "all", limit: int | None = None
) -> list[dict[str, Any]]:
    """Review tasks in id order: id, job, kind, item, title, status, reviews done/required.

    Args:
        job: only this job's tasks.
        status: ``open``, ``done``, ``closed`` or ``all``.
        limit: at most this many tasks (the first by id).

    Raises:
        InputError: an unknown status.
    """
    if status not in TASK_STATUSES:
        raise InputError(
            f"unknown status '{status}'", field="status", hint=f"use one of {TASK_STATUSES}"
        )
    reviews = (
        select(func.count(func.distinct(Decision.reviewer_id)))
        .where(Decision.task_id == ReviewTask.id)
        .scalar_subquery()
    )
    query = (
        select(ReviewTask, reviews.label("reviews"), TaskFacets.title)
        .outerjoin(TaskFacets, TaskFacets.task_id == ReviewTask.id)
        .order_by(ReviewTask.id)
    )
    if job:
        query = query.where(ReviewTask.job == job)
    if status != "all":
        query = query.where(ReviewTask.status == status)
    if limit is not None:
        query = query.limit(limit)
    return [_row(task, done, title) for task, done, title in session.execute(query)]


def _row(task: ReviewTask, reviews: int, title: str | None) -> dict[str, Any]:
    return {
        "id": task.id,
        "job": task.job,
        "kind": task.kind,
        "item": task.item_key,
        "title": title or "",
        "status": task.status,
        "reviews": reviews,
        "required_reviews": task.required_reviews,
        "created_at": task.created_at.isoformat() if task.created_at else None,
    }
