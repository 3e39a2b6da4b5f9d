"""Tables of the relevance side: jobs and judgments (one row per judged pair)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from docket.store.base import Base, utcnow


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
