"""What a reviewer may see: their queue (keyset pages, filters, search) and the next task.

Everything is decided in SQL, so a page costs the same at 100,000 tasks as at 100:
pages are keyset-based (``after`` / ``before`` a task id, never an OFFSET), and the
count of matching tasks stops at :data:`COUNT_CAP` (shown as "1000+"); exact totals per
status are on the statistics page. Returned values are plain JSON data, rendered by the
templates or sent as JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, exists, func, or_, select, true
from sqlalchemy.orm import Session

from docket.errors import InputError
from docket.review.facets import KINDS
from docket.review.models import (
    TASK_CLOSED,
    TASK_DONE,
    TASK_OPEN,
    Assignment,
    Decision,
    Reviewer,
    ReviewTask,
    TaskFacets,
)

STATUSES = ("todo", "decided", TASK_OPEN, TASK_DONE, TASK_CLOSED, "all")
PAGE_SIZE = 50
COUNT_CAP = 1000


@dataclass(frozen=True)
class QueueQuery:
    """The filters and the page of a queue request (all optional but ``status``)."""

    job: str | None = None
    status: str = "todo"
    reviewer: str | None = None  # admins: tasks assigned to or decided by this reviewer
    disagreement: str | None = None
    search: str | None = None  # a qid or a docid, exactly
    after: int | None = None
    before: int | None = None
    limit: int = PAGE_SIZE


def check_status(status: str) -> str:
    """Validate a queue status filter."""
    if status not in STATUSES:
        raise InputError(
            f"unknown status '{status}'", field="status", hint=f"use one of {STATUSES}"
        )
    return status


# IN (subquery) rather than correlated EXISTS: SQLite then reads each subquery once (an
# index on reviewer_id) instead of probing it for every task row.
def _decided_by(reviewer_id: int) -> ColumnElement[bool]:
    return ReviewTask.id.in_(select(Decision.task_id).where(Decision.reviewer_id == reviewer_id))


def _assigned_to(reviewer_id: int) -> ColumnElement[bool]:
    mine = select(Assignment.task_id).where(Assignment.reviewer_id == reviewer_id)
    return ReviewTask.id.in_(mine)


def _eligible(reviewer_id: int) -> ColumnElement[bool]:
    # Correlated on assignments' task_id index: a probe per row, no list of every assignment.
    unassigned = ~exists().where(Assignment.task_id == ReviewTask.id)
    return or_(unassigned, _assigned_to(reviewer_id))


def _status(status: str, reviewer_id: int) -> ColumnElement[bool]:
    if status == "todo":
        open_ = ReviewTask.status == TASK_OPEN
        return and_(open_, ~_decided_by(reviewer_id), _eligible(reviewer_id))
    if status == "decided":
        return _decided_by(reviewer_id)
    return true() if status == "all" else ReviewTask.status == status


def _reviewer_id(session: Session, name: str) -> int:
    found = session.scalars(select(Reviewer.id).where(Reviewer.name == name)).first()
    if found is None:
        raise InputError(f"no reviewer named '{name}'", field="reviewer")
    return found


def _filters(session: Session, reviewer: Reviewer, query: QueueQuery) -> list[ColumnElement[bool]]:
    """Conditions every listed task meets: visibility, job, reviewer, disagreement, search."""
    me = reviewer.id
    conditions = [] if reviewer.is_admin else [or_(_eligible(me), _decided_by(me))]
    if query.job:
        conditions.append(ReviewTask.job == query.job)
    if query.reviewer:
        if not reviewer.is_admin:
            raise InputError("only admins filter by reviewer", field="reviewer")
        other = _reviewer_id(session, query.reviewer)
        theirs = (
            select(Assignment.task_id)
            .where(Assignment.reviewer_id == other)
            .union(select(Decision.task_id).where(Decision.reviewer_id == other))
        )
        conditions.append(ReviewTask.id.in_(theirs))
    if query.disagreement:
        if query.disagreement not in KINDS:
            raise InputError("unknown kind", field="disagreement", hint=f"use one of {KINDS}")
        if reviewer.blind and not reviewer.is_admin:
            raise InputError(
                "a blind reviewer does not filter by the agents' outcome", field="disagreement"
            )
        if not reviewer.is_admin:
            # A blind task (an audit pair or a blind escalation) never shows what the agents
            # did, not even through this filter: audit tasks stay indistinguishable.
            conditions.append(ReviewTask.blind.is_(False))
        # Correlated on the facets' primary key: cheap per row, and the capped scans stop
        # early, whereas an IN list of a common kind would hold most task ids.
        kind = TaskFacets.disagreement == query.disagreement
        conditions.append(exists().where(TaskFacets.task_id == ReviewTask.id, kind))
    if query.search:
        term = query.search.strip()
        # A qid or docid names few tasks: let the facets' indexes drive.
        found = select(TaskFacets.task_id).where(
            or_(TaskFacets.qid == term, TaskFacets.docid == term)
        )
        conditions.append(ReviewTask.id.in_(found))
    return conditions


def _count(session: Session, conditions: list[ColumnElement[bool]]) -> int:
    ids = select(ReviewTask.id).where(*conditions).limit(COUNT_CAP + 1).subquery()
    return int(session.scalar(select(func.count()).select_from(ids)) or 0)


def _page(query: QueueQuery, conditions: list[ColumnElement[bool]]) -> Select:
    columns = (ReviewTask.id, ReviewTask.job, ReviewTask.kind, ReviewTask.item_key)
    page = select(*columns, ReviewTask.status, ReviewTask.required_reviews).where(*conditions)
    if query.before is not None:
        return page.where(ReviewTask.id < query.before).order_by(ReviewTask.id.desc())
    if query.after is not None:
        page = page.where(ReviewTask.id > query.after)
    return page.order_by(ReviewTask.id)


def queue_view(session: Session, reviewer: Reviewer, query: QueueQuery) -> dict[str, Any]:
    """The queue page: filters, the capped count of matches, one keyset page of tasks."""
    check_status(query.status)
    conditions = [*_filters(session, reviewer, query), _status(query.status, reviewer.id)]
    rows = session.execute(_page(query, conditions).limit(query.limit + 1)).all()
    more = len(rows) > query.limit
    rows = rows[: query.limit]
    if query.before is not None:
        rows.reverse()
    tasks = _task_rows(session, reviewer, rows)
    first, last = (tasks[0]["id"], tasks[-1]["id"]) if tasks else (None, None)
    has_prev = query.after is not None or (query.before is not None and more)
    has_next = more if query.before is None else True
    return {
        "reviewer": reviewer.name,
        "filters": _filter_data(query),
        "jobs": job_names(session),
        "statuses": list(STATUSES),
        "kinds": [] if reviewer.blind and not reviewer.is_admin else list(KINDS),
        "count": _count(session, conditions),
        "count_cap": COUNT_CAP,
        "tasks": tasks,
        "next_after": last if has_next and tasks else None,
        "prev_before": first if has_prev and tasks else None,
    }


def job_names(session: Session, limit: int = 500) -> list[str]:
    """The distinct job names, one index seek each (a DISTINCT would read every task)."""
    names: list[str] = []
    while len(names) < limit:
        query = select(func.min(ReviewTask.job))
        found = session.scalar(query.where(ReviewTask.job > names[-1]) if names else query)
        if found is None:
            break
        names.append(found)
    return names


def _filter_data(query: QueueQuery) -> dict[str, Any]:
    return {
        "job": query.job or "",
        "status": query.status,
        "reviewer": query.reviewer or "",
        "disagreement": query.disagreement or "",
        "search": query.search or "",
    }


def _titles(session: Session, ids: list[int]) -> dict[int, tuple[str, str]]:
    """Short (title, subtitle) per task, from the facets of the shown rows only."""
    query = select(TaskFacets.task_id, TaskFacets.title, TaskFacets.subtitle)
    rows = session.execute(query.where(TaskFacets.task_id.in_(ids)))
    return {tid: (title, subtitle) for tid, title, subtitle in rows}


def _task_rows(session: Session, reviewer: Reviewer, rows: list[Any]) -> list[dict[str, Any]]:
    ids = [row.id for row in rows]
    titles = _titles(session, ids)
    pairs = session.execute(
        select(Decision.task_id, Decision.reviewer_id).where(Decision.task_id.in_(ids)).distinct()
    ).all()
    mine = {task for task, who in pairs if who == reviewer.id}
    tasks = []
    for row in rows:
        title, subtitle = titles.get(row.id, ("", ""))
        data = {
            "id": row.id,
            "job": row.job,
            "kind": row.kind,
            "item_key": row.item_key,
            "status": row.status,
            "required_reviews": row.required_reviews,
            "decided_by_me": row.id in mine,
            "title": title,
            "subtitle": subtitle,
        }
        if reviewer.is_admin:  # others never learn how many have decided before them
            data["n_reviews"] = sum(1 for task, _ in pairs if task == row.id)
        tasks.append(data)
    return tasks


def next_task(
    session: Session, reviewer: Reviewer, *, after: int | None = None, job: str | None = None
) -> int | None:
    """The reviewer's next open task after ``after`` (wrapping around), or None."""
    conditions = [_status("todo", reviewer.id)]
    if job:
        conditions.append(ReviewTask.job == job)
    if after is not None:
        later = select(ReviewTask.id).where(*conditions, ReviewTask.id > after)
        found = session.scalars(later.order_by(ReviewTask.id).limit(1)).first()
        if found is not None:
            return found
        conditions.append(ReviewTask.id != after)
    query = select(ReviewTask.id).where(*conditions).order_by(ReviewTask.id).limit(1)
    return session.scalars(query).first()
