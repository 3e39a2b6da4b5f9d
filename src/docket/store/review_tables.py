"""Tables of the human review: reviewers, tasks, assignments, decisions.

Browser sessions live in the web kit's ``web_sessions`` table (``docket.store.web_tables``).

Decisions are append-only: a correction is a new row and the latest row per reviewer
wins. The ORM refuses updates and deletes of decisions, and on SQLite a trigger
refuses them at the database level too.

Declared in the store so that its migration ledger creates them without importing the
review package; the code above the store imports them from :mod:`docket.review.models`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    DDL,
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    event,
)
from sqlalchemy.orm import Mapped, mapped_column

from docket.errors import ReviewError
from docket.store.schema import Base, utcnow

TASK_OPEN, TASK_DONE, TASK_CLOSED = "open", "done", "closed"


class Reviewer(Base):
    """A person who reviews; only the SHA-256 of the login token is stored."""

    __tablename__ = "review_reviewers"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(120), unique=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    blind: Mapped[bool] = mapped_column(Boolean, default=False)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ReviewTask(Base):
    """One item waiting for (or having received) human review.

    ``status`` is ``open`` until ``required_reviews`` reviewers have decided, then
    ``done`` (its reviewers may still correct themselves); ``closed`` refuses every
    further decision. ``revision`` is bumped under lock by every decision so that
    concurrent submissions are serialised.
    """

    __tablename__ = "review_tasks"
    __table_args__ = (
        UniqueConstraint("job", "kind", "item_key", name="uq_review_task_item"),
        Index("ix_review_tasks_job_status", "job", "status"),  # counts without the payloads
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    job: Mapped[str] = mapped_column(String(200), index=True)
    kind: Mapped[str] = mapped_column(String(40))
    item_key: Mapped[str] = mapped_column(String(600))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    required_reviews: Mapped[int] = mapped_column(Integer, default=1)
    blind: Mapped[bool] = mapped_column(Boolean, default=False)
    status: Mapped[str] = mapped_column(String(20), default=TASK_OPEN, index=True)
    revision: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    closed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class Assignment(Base):
    """A task assigned to a reviewer; a task with assignments is closed to everyone else."""

    __tablename__ = "review_assignments"
    __table_args__ = (UniqueConstraint("task_id", "reviewer_id", name="uq_review_assignment"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("review_tasks.id"), index=True)
    reviewer_id: Mapped[int] = mapped_column(ForeignKey("review_reviewers.id"), index=True)
    assigned_by: Mapped[str] = mapped_column(String(120), default="")
    assigned_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Decision(Base):
    """One human decision (append-only): who, when, what, why, blind, seconds spent."""

    __tablename__ = "review_decisions"
    __table_args__ = (Index("ix_review_decisions_task_reviewer", "task_id", "reviewer_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("review_tasks.id"), index=True)
    reviewer_id: Mapped[int] = mapped_column(ForeignKey("review_reviewers.id"), index=True)
    label: Mapped[int] = mapped_column(Integer)
    grade: Mapped[int | None] = mapped_column(Integer, nullable=True)
    note: Mapped[str] = mapped_column(Text, default="")
    blind: Mapped[bool] = mapped_column(Boolean, default=False)
    seconds: Mapped[float | None] = mapped_column(Float, nullable=True)
    source: Mapped[str] = mapped_column(String(40), default="web")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


def _refuse_change(_mapper, _connection, _target) -> None:  # type: ignore[no-untyped-def]
    raise ReviewError("review decisions are append-only", hint="record a new decision")


event.listen(Decision, "before_update", _refuse_change)
event.listen(Decision, "before_delete", _refuse_change)
for _action in ("UPDATE", "DELETE"):
    event.listen(
        Decision.__table__,
        "after_create",
        DDL(
            f"CREATE TRIGGER review_decisions_no_{_action.lower()} BEFORE {_action} "
            "ON review_decisions BEGIN SELECT RAISE(ABORT, 'review decisions are "
            "append-only'); END"
        ).execute_if(dialect="sqlite"),
    )


class TaskFacets(Base):
    """What the queue filters, searches and shows, one row per task (kept out of the payload).

    Written when a task is enqueued; tasks from before this table existed get theirs
    the first time a queue is listed (:func:`docket.review.facets.backfill`).
    """

    __tablename__ = "review_task_facets"
    task_id: Mapped[int] = mapped_column(ForeignKey("review_tasks.id"), primary_key=True)
    qid: Mapped[str] = mapped_column(String(200), index=True)
    docid: Mapped[str] = mapped_column(String(400), index=True)
    disagreement: Mapped[str] = mapped_column(String(40), index=True)
    title: Mapped[str] = mapped_column(String(160), default="")
    subtitle: Mapped[str] = mapped_column(String(400), default="")
