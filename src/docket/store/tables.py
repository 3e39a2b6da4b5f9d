"""Tables of the relevance side: jobs and judgments (one row per judged pair)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from docket.store.schema import Base, utcnow


class Job(Base):
    """A named batch of work with the configuration it ran with."""

    __tablename__ = "jobs"
    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    kind: Mapped[str] = mapped_column(String(40), default="relevance")
    method: Mapped[str] = mapped_column(String(40))
    model: Mapped[str] = mapped_column(String(400))
    options: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    source: Mapped[str] = mapped_column(Text, default="")
    docket_version: Mapped[str] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class JudgmentRecord(Base):
    """One judged pair, with everything needed to rebuild the judgment.

    ``label`` is None while an escalated pair waits for a human; the human's decision is
    stored append-only by the review package and never overwrites this row.
    """

    __tablename__ = "judgments"
    __table_args__ = (UniqueConstraint("job", "qid", "docid", name="uq_judgment_pair"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    job: Mapped[str] = mapped_column(ForeignKey("jobs.name"), index=True)
    qid: Mapped[str] = mapped_column(String(200))
    docid: Mapped[str] = mapped_column(String(400))
    query: Mapped[str] = mapped_column(Text)
    text: Mapped[str] = mapped_column(Text)
    gold: Mapped[int | None] = mapped_column(Integer, nullable=True)
    method: Mapped[str] = mapped_column(String(40))
    label: Mapped[int | None] = mapped_column(Integer, nullable=True)
    grade: Mapped[int | None] = mapped_column(Integer, nullable=True)
    confidence: Mapped[float | None] = mapped_column(nullable=True)
    decided_by: Mapped[str] = mapped_column(String(40))
    rounds: Mapped[int] = mapped_column(Integer, default=1)
    transcript: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    usage: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    model: Mapped[str] = mapped_column(String(400))
    prompt_hash: Mapped[str] = mapped_column(String(80))
    config: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    parse_failures: Mapped[int] = mapped_column(Integer, default=0)
    invalid_evidence: Mapped[int] = mapped_column(Integer, default=0)
    docket_version: Mapped[str] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class PairClaim(Base):
    """A pair of a job that a worker holds (a lease) or that failed, until it is judged.

    A live claim (``owner`` set, ``expires_at`` in the future) keeps other workers off the
    pair; the owner renews it while the pair's calls run, and the row goes when the
    judgment is saved. A worker that dies leaves a lease that expires, and the pair is
    claimed again. ``failed`` holds the reason a server refused the pair (e.g. HTTP 400);
    such a pair is retried only when the user asks (``--retry-failed``).
    """

    __tablename__ = "pair_claims"

    job: Mapped[str] = mapped_column(ForeignKey("jobs.name"), primary_key=True)
    qid: Mapped[str] = mapped_column(String(200), primary_key=True)
    docid: Mapped[str] = mapped_column(String(400), primary_key=True)
    owner: Mapped[str | None] = mapped_column(String(200), nullable=True, index=True)
    # Seconds since the epoch: compared across processes and machines without time zones.
    expires_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    failed: Mapped[str | None] = mapped_column(Text, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)


class JobSpend(Base):
    """What a job has spent (and holds for pairs in flight), shared by every process on it.

    Budget caps (``--max-calls`` ...) take from this row with one conditional UPDATE, so
    processes and workers sharing a job can never pass a cap together.
    """

    __tablename__ = "job_spend"

    job: Mapped[str] = mapped_column(ForeignKey("jobs.name"), primary_key=True)
    calls: Mapped[int] = mapped_column(Integer, default=0)
    tokens: Mapped[int] = mapped_column(Integer, default=0)
    cost: Mapped[float] = mapped_column(Float, default=0.0)
    escalations: Mapped[int] = mapped_column(Integer, default=0)


class JobNote(Base):
    """A plan or a pilot kept with its job (``docket show --job`` reports them)."""

    __tablename__ = "job_notes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    job: Mapped[str] = mapped_column(ForeignKey("jobs.name"), index=True)
    kind: Mapped[str] = mapped_column(String(40))
    data: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class CallRecord(Base):
    """One answered LLM call of a pair not yet saved: the job's call journal.

    A run writes the answered calls of its unfinished pairs here (every half second, and
    when it stops), whatever the response cache setting, and deletes them in the
    transaction that saves the pair; a resume on any worker replays them instead of
    paying for them again. ``key`` is the hash of the canonical request
    (:meth:`docket.llm.types.Request.cache_key`), the response cache's key too.
    """

    __tablename__ = "call_journal"

    job: Mapped[str] = mapped_column(String(200), primary_key=True)
    qid: Mapped[str] = mapped_column(String(200), primary_key=True)
    docid: Mapped[str] = mapped_column(String(400), primary_key=True)
    key: Mapped[str] = mapped_column(String(80), primary_key=True)
    model: Mapped[str] = mapped_column(String(400))
    completion: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
