"""The ``fmt`` check: a rule's deterministic checker run over the part its scope selects.

A checker that raises (a bug, a pattern that timed out) gives an undecided outcome with
the reason, so the rule is ``needs_review``: never a crash, never a pass, never a fail.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

from docket.adherence.checks import CATALOGUE, Checker, CheckOutcome
from docket.adherence.record import Record
from docket.adherence.rules import Rule
from docket.adherence.rules.scope import Target, locate_turn, record_text
from docket.adherence.verify.check import Started
from docket.adherence.verify.submission import Submission
from docket.adherence.verify.verdict import RuleResult, Span, Status, needs_review
from docket.errors import ConfigError

log = logging.getLogger(__name__)


def run_fmt(rule: Rule, record: Record, turn_index: int | None = None) -> CheckOutcome:
    """Check ``record`` against the deterministic rule ``rule``.

    Text-level checkers run over each text the rule's scope selects (each turn, the turns
    of a role, the last turn, a field, or all turns joined); the first failure wins and
    reports its turn index. Record-level checkers get the whole record. With
    ``turn_index``, per-turn scopes look only at that turn (incremental checking).
    A checker that raises gives an undecided outcome saying so, never an exception.

    Raises:
        ConfigError: the rule has no ``check`` (it is not a ``fmt`` rule).
    """
    if rule.check is None:
        raise ConfigError(f"rule '{rule.id}' has no fmt check (tier '{rule.tier}')")
    found = CATALOGUE[rule.check.checker]
    params = rule.fmt_params
    if found.level == "record":
        return _guarded(found, record, params)
    targets = rule.scope.targets(record, turn_index)
    if not targets:
        return CheckOutcome(True, f"not applicable: no {rule.scope.describe()} to check")
    outcome = CheckOutcome(True, "")
    for target in targets:
        if target.missing:
            return CheckOutcome(False, f"field '{target.field}' is missing")
        outcome = _guarded(found, target.text, params)
        if not outcome.passed:
            return _locate(outcome, target, record)
    if len(targets) == 1:
        return replace(outcome, turn=targets[0].turn)
    return CheckOutcome(True, f"all {len(targets)} texts pass ({rule.scope.describe()})")


def _guarded(found: Checker, target: str | Record, params: object) -> CheckOutcome:
    try:
        return found.fn(target, params)
    except Exception as exc:  # a checker bug must not crash a request nor decide the rule
        log.warning("checker %s raised %s: %s", found.name, type(exc).__name__, exc)
        return CheckOutcome.unknown(
            f"checker '{found.name}' could not decide: {type(exc).__name__}: {exc}"
        )


def _locate(outcome: CheckOutcome, target: Target, record: Record) -> CheckOutcome:
    if target.turn is not None:
        return replace(outcome, turn=target.turn)
    if (
        target.field is None
        and outcome.span is not None
        and (where := locate_turn(record, outcome.span))
    ):
        return replace(outcome, turn=where[0], span=where[1])
    return outcome


def outcome_status(outcome: CheckOutcome, live: bool) -> Status:
    """The rule status of a checker outcome; ``live``: later turns may still come."""
    if outcome.undecided:
        return "needs_review"
    if outcome.passed:
        return "pass"
    return "not_yet" if live and outcome.pending else "fail"


def check_fmt(rule: Rule, submission: Submission) -> RuleResult:
    """Run one ``fmt`` rule; per-turn rules look only at the new turn when there is one.

    A submission with a new turn is live checking: a failure that later turns can still
    repair (too few turns so far) is ``not_yet``, not ``fail``.
    """
    record = submission.record
    turn = submission.new_turn if rule.scope.per_turn else None
    try:
        outcome = run_fmt(rule, record, turn)
    except Exception as exc:  # a bug outside the checker (scope, spans) is undecided too
        log.exception("fmt rule %s raised", rule.id)
        outcome = CheckOutcome.unknown(f"the check raised {type(exc).__name__}: {exc}")
    status = outcome_status(outcome, live=submission.new_turn is not None)
    if status == "needs_review":
        return needs_review(rule.id, "fmt", outcome.undecided, rule_version=rule.version, turn=turn)
    failed = status == "fail"
    return RuleResult(
        rule_id=rule.id,
        rule_version=rule.version,
        tier="fmt",
        status=status,
        explanation=outcome.explanation,
        span=fmt_span(outcome, rule, record) if failed else None,
        fix=f"Revise the text so that it follows the rule: {rule.text}" if failed else "",
        turn=outcome.turn if outcome.turn is not None else turn,
    )


def fmt_span(outcome: CheckOutcome, rule: Rule, record: Record) -> Span | None:
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


class FmtCheck:
    """The :class:`~docket.adherence.verify.check.Check` of ``fmt`` rules: code, no model."""

    group = "fmt"

    def claims(self, rule: Rule) -> bool:
        """True for rules with a deterministic check."""
        return rule.check is not None

    def required_model(self) -> str | None:
        """No model needed."""
        return None

    def start(self, rules: Sequence[Rule], submission: Submission) -> Started:
        """Every result at once; no pending calls."""
        return [check_fmt(rule, submission) for rule in rules], []
