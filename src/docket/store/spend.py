"""A job's spend row: taken from atomically against caps, so caps hold across processes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from docket.store.tables import JobNote, JobSpend

DIMENSIONS = ("calls", "tokens", "cost", "escalations")


def ensure_spend(session: Session, job: str) -> None:
    """Create the job's spend row (all zero) if it has none."""
    if session.get(JobSpend, job) is None:
        session.add(JobSpend(job=job, calls=0, tokens=0, cost=0.0, escalations=0))
        session.flush()


def take(
    session: Session, job: str, delta: Mapping[str, float], caps: Mapping[str, float | None]
) -> bool:
    """Add ``delta`` to the job's spend unless that would pass a cap; True if added.

    One conditional UPDATE: two processes taking at once cannot both pass the check.
    """
    row = JobSpend.__table__.c
    checks = [
        row[name] + delta[name] <= cap
        for name, cap in caps.items()
        if cap is not None and delta.get(name, 0) > 0
    ]
    values = {name: row[name] + delta[name] for name in DIMENSIONS if delta.get(name)}
    if not values:
        return True
    result = session.execute(update(JobSpend).where(JobSpend.job == job, *checks).values(**values))
    return result.rowcount == 1


def give(session: Session, job: str, delta: Mapping[str, float]) -> None:
    """Add ``delta`` (negative: return a hold) to the job's spend, unconditionally."""
    row = JobSpend.__table__.c
    values = {name: row[name] + delta[name] for name in DIMENSIONS if delta.get(name)}
    if values:
        session.execute(update(JobSpend).where(JobSpend.job == job).values(**values))


def spend_of(session: Session, job: str) -> dict[str, float]:
    """The job's spend so far (zeros if it has no row)."""
    row = session.get(JobSpend, job)
    return {name: (getattr(row, name) if row else 0) for name in DIMENSIONS}


def add_note(session: Session, job: str, kind: str, data: dict[str, Any]) -> None:
    """Keep a plan or pilot (``kind``) with the job."""
    session.add(JobNote(job=job, kind=kind, data=data))


def notes_of(
    session: Session, job: str, kind: str | None = None
) -> list[tuple[str, dict[str, Any]]]:
    """``(kind, data)`` of the job's notes (only of ``kind`` when given), oldest first."""
    query = select(JobNote).where(JobNote.job == job)
    if kind is not None:
        query = query.where(JobNote.kind == kind)
    rows = session.scalars(query.order_by(JobNote.id))
    return [(r.kind, r.data) for r in rows]
