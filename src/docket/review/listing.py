"""What a reviewer may see: their queue with counts and filters, and the next task.

Everything returned is plain JSON data, rendered by the templates or sent as JSON.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from docket.errors import InputError
from docket.review.models import (
    TASK_CLOSED,
    TASK_DONE,
    TASK_OPEN,
    Assignment,
    Decision,
    Reviewer,
    ReviewTask,
)

STATUSES = ("todo", "decided", TASK_OPEN, TASK_DONE, TASK_CLOSED, "all")
PAGE_LIMIT = 500


@dataclass(frozen=True)
class _Row:
    id: int
    job: str
    kind: str
    item_key: str
    status: str
    required: int
    assigned: frozenset[int]
    mine: bool
    n_reviews: int

    def eligible(self, reviewer: Reviewer) -> bool:
        return not self.assigned or reviewer.id in self.assigned

    def matches(self, status: str, reviewer: Reviewer) -> bool:
        if status == "todo":
            return self.status == TASK_OPEN and not self.mine and self.eligible(reviewer)
        if status == "decided":
            return self.mine
        return status == "all" or self.status == status


def _rows(session: Session, reviewer: Reviewer) -> list[_Row]:
    """Every task the reviewer may see (admins see all)."""
    assigned: dict[int, set[int]] = {}
    for task_id, reviewer_id in session.execute(select(Assignment.task_id, Assignment.reviewer_id)):
        assigned.setdefault(task_id, set()).add(reviewer_id)
    pairs = {tuple(r) for r in session.execute(select(Decision.task_id, Decision.reviewer_id))}
    n_reviews = Counter(task_id for task_id, _ in pairs)
    query = select(
        ReviewTask.id,
        ReviewTask.job,
        ReviewTask.kind,
        ReviewTask.item_key,
        ReviewTask.status,
        ReviewTask.required_reviews,
    ).order_by(ReviewTask.id)
    rows = []
    for tid, job, kind, key, status, required in session.execute(query):
        row = _Row(
            tid,
            job,
            kind,
            key,
            status,
            required,
            frozenset(assigned.get(tid, ())),
            (tid, reviewer.id) in pairs,
            n_reviews[tid],
        )
        if reviewer.is_admin or row.eligible(reviewer) or row.mine:
            rows.append(row)
    return rows


def _titles(session: Session, ids: list[int]) -> dict[int, tuple[str, str]]:
    """Short (title, subtitle) per task, read from the payloads of the shown rows only."""
    titles = {}
    query = select(ReviewTask.id, ReviewTask.kind, ReviewTask.payload)
    for tid, kind, payload in session.execute(query.where(ReviewTask.id.in_(ids))):
        if kind == "relevance":
            titles[tid] = (str(payload.get("query", ""))[:160], str(payload.get("docid", "")))
        else:
            rule = payload.get("rule", {})
            titles[tid] = (str(rule.get("text", ""))[:160], str(rule.get("id", "")))
    return titles


def check_status(status: str) -> str:
    """Validate a queue status filter."""
    if status not in STATUSES:
        raise InputError(
            f"unknown status '{status}'", field="status", hint=f"use one of {STATUSES}"
        )
    return status


def queue_view(
    session: Session, reviewer: Reviewer, *, job: str | None = None, status: str = "todo"
) -> dict[str, Any]:
    """The queue page: filters, counts per status, and the matching tasks."""
    check_status(status)
    rows = _rows(session, reviewer)
    jobs = sorted({r.job for r in rows})
    in_job = [r for r in rows if job in (None, "", r.job)]
    counts = {s: sum(r.matches(s, reviewer) for r in in_job) for s in STATUSES}
    shown = [r for r in in_job if r.matches(status, reviewer)]
    titles = _titles(session, [r.id for r in shown[:PAGE_LIMIT]])
    tasks = [_task_row(r, titles, reviewer) for r in shown[:PAGE_LIMIT]]
    return {
        "reviewer": reviewer.name,
        "filters": {"job": job or "", "status": status},
        "jobs": jobs,
        "statuses": list(STATUSES),
        "counts": counts,
        "tasks": tasks,
        "truncated": len(shown) > PAGE_LIMIT,
    }


def _task_row(row: _Row, titles: dict[int, tuple[str, str]], reviewer: Reviewer) -> dict:
    title, subtitle = titles.get(row.id, ("", ""))
    data = {
        "id": row.id,
        "job": row.job,
        "kind": row.kind,
        "item_key": row.item_key,
        "status": row.status,
        "required_reviews": row.required,
        "decided_by_me": row.mine,
        "title": title,
        "subtitle": subtitle,
    }
    if reviewer.is_admin:  # others never learn how many have decided before them
        data["n_reviews"] = row.n_reviews
    return data


def next_task(
    session: Session, reviewer: Reviewer, *, after: int | None = None, job: str | None = None
) -> int | None:
    """The reviewer's next open task after ``after`` (wrapping around), or None."""
    todo = [
        r.id
        for r in _rows(session, reviewer)
        if r.matches("todo", reviewer) and job in (None, "", r.job) and r.id != after
    ]
    if not todo:
        return None
    later = [tid for tid in todo if after is None or tid > after]
    return (later or todo)[0]
