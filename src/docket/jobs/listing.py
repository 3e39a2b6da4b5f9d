"""Every job of a store at a glance: what ran, how far it got, what it cost.

:func:`list_jobs` counts in SQL (one GROUP BY per table); calls and tokens are summed
from the judgments' usage column alone (no text, no transcripts), since the job's spend
row is kept only when caps are given.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from docket.store.base import Store
from docket.store.review_tables import TASK_OPEN, ReviewTask
from docket.store.tables import Job, JobSpend, JudgmentRecord, PairClaim


@dataclass(frozen=True)
class JobSummary:
    """One job of a store.

    Attributes:
        name: the job's name (``--job``).
        kind: ``relevance`` (judging) or another kind of work.
        method: the judging method (``dream``, ``single``, ``lara`` ...).
        model: the model it ran with.
        judged: pairs with a stored judgment (automatic labels and escalations).
        escalated: judged pairs sent to human review.
        failed: pairs a server refused (retried with ``--retry-failed``).
        review_tasks: review tasks of the job.
        reviewed: review tasks done or closed.
        calls, tokens: LLM calls and tokens of the judged pairs (cache hits included,
            as the judgments record them), or the spend row's when caps counted more.
        cost: USD spent, as the spend row kept it (0 without caps or a price).
        created: when the job was made.
        last_judged: when its latest judgment was stored (None before the first).
    """

    name: str
    kind: str
    method: str
    model: str
    judged: int
    escalated: int
    failed: int
    review_tasks: int
    reviewed: int
    calls: int
    tokens: int
    cost: float
    created: datetime
    last_judged: datetime | None

    def to_json(self) -> dict[str, Any]:
        """A plain dict (dates as ISO 8601 text) for ``--json``."""
        data = asdict(self)
        data["created"] = self.created.isoformat()
        data["last_judged"] = self.last_judged.isoformat() if self.last_judged else None
        return data


def list_jobs(store: Store) -> list[JobSummary]:
    """Every job of ``store``, oldest first, with its counts, review progress and spend."""
    with store.read_session() as session:
        jobs = list(session.scalars(select(Job).order_by(Job.created_at, Job.name)))
        judged = _judged(session)
        failed = dict(
            session.execute(
                select(PairClaim.job, func.count())
                .where(PairClaim.failed.is_not(None))
                .group_by(PairClaim.job)
            ).all()
        )
        review = _review(session)
        spend = {row.job: row for row in session.scalars(select(JobSpend))}
        usage = _usage(session)
    return [_summary(job, judged, failed, review, spend, usage) for job in jobs]


def _usage(session: Session) -> dict[str, tuple[int, int]]:
    """Calls and tokens per job, from the usage column only."""
    totals: dict[str, list[int]] = {}
    query = select(JudgmentRecord.job, JudgmentRecord.usage).execution_options(yield_per=5000)
    for job, usage in session.execute(query):
        usage = usage or {}
        total = totals.setdefault(job, [0, 0])
        total[0] += int(usage.get("calls", 0))
        total[1] += int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))
    return {job: (calls, tokens) for job, (calls, tokens) in totals.items()}


def _judged(session: Session) -> dict[str, tuple[int, int, datetime | None]]:
    escalated = func.sum(case((JudgmentRecord.decided_by == "escalated", 1), else_=0))
    query = select(
        JudgmentRecord.job, func.count(), escalated, func.max(JudgmentRecord.updated_at)
    ).group_by(JudgmentRecord.job)
    return {job: (n, int(e or 0), last) for job, n, e, last in session.execute(query)}


def _review(session: Session) -> dict[str, tuple[int, int]]:
    closed = func.sum(case((ReviewTask.status != TASK_OPEN, 1), else_=0))
    query = select(ReviewTask.job, func.count(), closed).group_by(ReviewTask.job)
    return {job: (n, int(done or 0)) for job, n, done in session.execute(query)}


def _summary(
    job: Job,
    judged: dict[str, tuple[int, int, datetime | None]],
    failed: dict[str, int],
    review: dict[str, tuple[int, int]],
    spend: dict[str, JobSpend],
    usage: dict[str, tuple[int, int]],
) -> JobSummary:
    count, escalated, last = judged.get(job.name, (0, 0, None))
    tasks, reviewed = review.get(job.name, (0, 0))
    row = spend.get(job.name)
    calls, tokens = usage.get(job.name, (0, 0))
    return JobSummary(
        name=job.name,
        kind=job.kind,
        method=job.method,
        model=job.model,
        judged=count,
        escalated=escalated,
        failed=failed.get(job.name, 0),
        review_tasks=tasks,
        reviewed=reviewed,
        calls=max(calls, row.calls if row else 0),
        tokens=max(tokens, row.tokens if row else 0),
        cost=float(row.cost) if row else 0.0,
        created=job.created_at,
        last_judged=last,
    )
