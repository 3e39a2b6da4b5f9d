"""Store tables for verification: runs, per-rule results, annotator feedback, API tokens.

Feedback is append-only: a later response to the same flag is a new row, so every decision
stays queryable with who, when and why.

Declared in the store so that its migration ledger creates them without importing the
adherence package; the code above the store imports them from :mod:`docket.adherence.models`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, Float, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from docket.store.schema import Base, utcnow


class VerificationRun(Base):
    """One verified submission (a record, optionally with the turn just submitted)."""

    __tablename__ = "adherence_runs"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    record_id: Mapped[str] = mapped_column(String(200), index=True)
    turn: Mapped[int | None] = mapped_column(Integer, nullable=True)
    mode: Mapped[str] = mapped_column(String(16))
    ruleset: Mapped[str] = mapped_column(String(200))
    ruleset_version: Mapped[str] = mapped_column(String(80))
    status: Mapped[str] = mapped_column(String(16), default="running")
    total_ms: Mapped[float] = mapped_column(Float, default=0.0)
    tiers: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    models: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    source: Mapped[str] = mapped_column(String(16), default="api")
    annotator: Mapped[str | None] = mapped_column(String(200), nullable=True)
    prompt_version: Mapped[str] = mapped_column(String(40), default="")
    docket_version: Mapped[str] = mapped_column(String(40), default="")


class VerificationResult(Base):
    """One rule's result within a run, with everything needed to rebuild it."""

    __tablename__ = "adherence_results"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("adherence_runs.id"), index=True)
    rule_id: Mapped[str] = mapped_column(String(200), index=True)
    rule_version: Mapped[str] = mapped_column(String(80), default="")
    tier: Mapped[str] = mapped_column(String(8))
    status: Mapped[str] = mapped_column(String(16))
    explanation: Mapped[str] = mapped_column(Text, default="")
    span: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    fix: Mapped[str] = mapped_column(Text, default="")
    turn: Mapped[int | None] = mapped_column(Integer, nullable=True)
    cached: Mapped[bool] = mapped_column(Boolean, default=False)
    truncated: Mapped[bool] = mapped_column(Boolean, default=False)
    error: Mapped[str] = mapped_column(Text, default="")
    call: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class FeedbackResponse(Base):
    """An annotator's response to a flag: accepted (and fixed) or dismissed with a reason."""

    __tablename__ = "adherence_feedback"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    result_id: Mapped[str] = mapped_column(ForeignKey("adherence_results.id"), index=True)
    rule_id: Mapped[str] = mapped_column(String(200), index=True)
    tier: Mapped[str] = mapped_column(String(8))
    action: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str] = mapped_column(Text, default="")
    fixed_text: Mapped[str | None] = mapped_column(Text, nullable=True)
    annotator: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ApiToken(Base):
    """A bearer token for the verification API and page; only its SHA-256 is stored."""

    __tablename__ = "adherence_tokens"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(200))
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)
