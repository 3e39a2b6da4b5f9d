"""Saving verification runs and annotator feedback, and the accepted-and-fixed statistics."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel
from sqlalchemy import func, select

from docket.adherence.models import FeedbackResponse, VerificationResult, VerificationRun
from docket.adherence.verify.verdict import FLAG_STATUSES, RuleResult, Verdict
from docket.errors import InputError
from docket.store.base import Store
from docket.version import __version__

Action = Literal["accepted", "dismissed"]


def start_run(store: Store, run_id: str, verdict_head: dict, **meta: object) -> None:
    """Insert a run in state ``running`` (results can then reference it while they arrive)."""
    with store.session() as session:
        session.add(VerificationRun(id=run_id, docket_version=__version__, **verdict_head, **meta))


def save_results(store: Store, run_id: str, results: Iterable[RuleResult]) -> None:
    """Insert results of a run in one transaction."""
    rows = [_result_row(run_id, result) for result in results]
    if not rows:
        return
    with store.session() as session:
        session.add_all(rows)


def finish_run(store: Store, run_id: str, verdict: Verdict) -> None:
    """Set the aggregate status, total time and per-tier timing of a run."""
    with store.session() as session:
        run = session.get(VerificationRun, run_id)
        if run is not None:
            run.status = verdict.status
            run.total_ms = verdict.total_ms
            run.tiers = {tier: timing.model_dump() for tier, timing in verdict.tiers.items()}


def save_verdict(store: Store, run_id: str, verdict: Verdict, **meta: object) -> None:
    """Save a whole verdict at once (batch mode)."""
    start_run(store, run_id, run_head(verdict), **meta)
    save_results(store, run_id, verdict.results)
    finish_run(store, run_id, verdict)


def run_head(verdict: Verdict) -> dict:
    """The run columns known before any result."""
    return {
        "record_id": verdict.record_id,
        "turn": verdict.turn,
        "mode": verdict.mode,
        "ruleset": verdict.ruleset,
        "ruleset_version": verdict.ruleset_version,
    }


def _result_row(run_id: str, result: RuleResult) -> VerificationResult:
    # ``cause`` is not a column: the reason itself is stored in ``error``.
    data = result.model_dump(exclude={"span", "call", "cause"})
    return VerificationResult(
        run_id=run_id,
        span=result.span.model_dump() if result.span else None,
        call=result.call.model_dump() if result.call else None,
        **data,
    )


def record_feedback(
    store: Store,
    result_id: str,
    action: Action,
    annotator: str,
    reason: str = "",
    fixed_text: str | None = None,
) -> FeedbackResponse:
    """Append an annotator's response to a flagged result.

    Raises:
        InputError: unknown result, a result that is not a flag (a pass or a ``not_yet``),
            or a dismissal without reason.
    """
    if action == "dismissed" and not reason.strip():
        raise InputError("a dismissal needs a reason", field="reason")
    with store.session() as session:
        result = session.get(VerificationResult, result_id)
        if result is None:
            raise InputError(f"unknown result '{result_id}'", field="result_id")
        if result.status not in FLAG_STATUSES:
            raise InputError(
                "only flagged results (fail, needs_review) take feedback", field="result_id"
            )
        row = FeedbackResponse(
            result_id=result_id,
            rule_id=result.rule_id,
            tier=result.tier,
            action=action,
            reason=reason.strip(),
            fixed_text=fixed_text,
            annotator=annotator,
        )
        session.add(row)
    return row


class RateRow(BaseModel):
    """Feedback counts for one rule (or one tier when ``rule_id`` is empty)."""

    rule_id: str = ""
    tier: str
    flags: int = 0
    accepted: int = 0
    dismissed: int = 0

    @property
    def responses(self) -> int:
        """Flags that got a response."""
        return self.accepted + self.dismissed

    @property
    def accepted_rate(self) -> float | None:
        """Accepted-and-fixed share of the responded flags; None without responses."""
        return self.accepted / self.responses if self.responses else None


def _latest_actions(store: Store) -> dict[str, tuple[str, str, str]]:
    # Append-only feedback: the latest response per flag counts.
    with store.session() as session:
        rows = session.execute(
            select(
                FeedbackResponse.result_id,
                FeedbackResponse.rule_id,
                FeedbackResponse.tier,
                FeedbackResponse.action,
            ).order_by(FeedbackResponse.id)
        ).all()
    return {result_id: (rule_id, tier, action) for result_id, rule_id, tier, action in rows}


def feedback_stats(store: Store) -> tuple[list[RateRow], list[RateRow]]:
    """Accepted-and-fixed counts per rule and per tier: ``(by_rule, by_tier)``.

    Flags are ``fail`` and ``needs_review`` results; a ``not_yet`` is not violated.
    """
    by_rule: dict[tuple[str, str], RateRow] = {}
    with store.session() as session:
        flags = session.execute(
            select(VerificationResult.rule_id, VerificationResult.tier, func.count())
            .where(VerificationResult.status.in_(FLAG_STATUSES))
            .group_by(VerificationResult.rule_id, VerificationResult.tier)
        ).all()
    for rule_id, tier, count in flags:
        by_rule[(rule_id, tier)] = RateRow(rule_id=rule_id, tier=tier, flags=count)
    for rule_id, tier, action in _latest_actions(store).values():
        row = by_rule.setdefault((rule_id, tier), RateRow(rule_id=rule_id, tier=tier))
        setattr(row, action, getattr(row, action) + 1)
    by_tier: dict[str, RateRow] = {}
    for row in by_rule.values():
        total = by_tier.setdefault(row.tier, RateRow(tier=row.tier))
        total.flags, total.accepted = total.flags + row.flags, total.accepted + row.accepted
        total.dismissed += row.dismissed
    rules = sorted(by_rule.values(), key=lambda r: (r.tier, r.rule_id))
    return rules, sorted(by_tier.values(), key=lambda r: r.tier)
