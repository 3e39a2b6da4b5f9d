"""The ``fmt`` tier behind the common check interface: deterministic code, no LLM.

A checker that raises becomes a needs_review result with the error recorded, never a crash
and never a pass.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from docket.adherence.checks import run_fmt
from docket.adherence.scope import locate_turn, record_text
from docket.adherence.verdict import RuleResult, Span, needs_review

if TYPE_CHECKING:
    from docket.adherence.submission import Submission

log = logging.getLogger(__name__)


def check_fmt(rule: Any, submission: Submission) -> RuleResult:
    """Run one ``fmt`` rule; per-turn rules look only at the new turn when there is one."""
    record = submission.record
    turn = submission.new_turn if rule.scope.per_turn else None
    try:
        outcome = run_fmt(rule, record, turn)
    except Exception as exc:  # a check that raises is a recorded result, not a crash
        log.exception("fmt rule %s raised", rule.id)
        reason = f"the check raised {type(exc).__name__}: {exc}"
        return needs_review(rule.id, "fmt", reason, rule_version=rule.version, turn=turn)
    return RuleResult(
        rule_id=rule.id,
        rule_version=rule.version,
        tier="fmt",
        status="pass" if outcome.passed else "fail",
        explanation=outcome.explanation,
        span=None if outcome.passed else fmt_span(outcome, rule, record),
        fix="" if outcome.passed else f"Revise the text so that it follows the rule: {rule.text}",
        turn=outcome.turn if outcome.turn is not None else turn,
    )


def fmt_span(outcome: Any, rule: Any, record: Any) -> Span | None:
    """Turn a checker's offsets into a :class:`Span` with the offending text."""
    if outcome.span is None:
        return Span(turn=outcome.turn) if outcome.turn is not None else None
    start, end = outcome.span
    if outcome.turn is not None:
        text = record.turns[outcome.turn].text
        return Span(turn=outcome.turn, start=start, end=end, text=text[start:end])
    if rule.scope.kind == "field":
        text = record.fields.get(rule.scope.field or "", "")
        return Span(start=start, end=end, text=text[start:end])
    located = locate_turn(record, (start, end))
    if located is None:
        return Span(start=start, end=end, text=record_text(record)[start:end])
    index, (turn_start, turn_end) = located
    text = record.turns[index].text[turn_start:turn_end]
    return Span(turn=index, start=turn_start, end=turn_end, text=text)
