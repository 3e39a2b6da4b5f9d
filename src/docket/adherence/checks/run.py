"""Running a rule's ``fmt`` check over the part of a record its scope selects."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from docket.adherence.checks.base import CATALOGUE, Checker, CheckOutcome
from docket.adherence.record import Record
from docket.adherence.scope import Target, locate_turn
from docket.errors import ConfigError

if TYPE_CHECKING:
    from docket.adherence.rules import Rule


def run_fmt(rule: Rule, record: Record, turn_index: int | None = None) -> CheckOutcome:
    """Check ``record`` against the deterministic rule ``rule``.

    Text-level checkers run over each text the rule's scope selects (each turn, the turns
    of a role, the last turn, a field, or all turns joined); the first failure wins and
    reports its turn index. Record-level checkers get the whole record. With
    ``turn_index``, per-turn scopes look only at that turn (incremental checking).
    A checker that raises gives a failed outcome saying so, never an exception.

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


def _guarded(found: Checker, target: Any, params: Any) -> CheckOutcome:
    try:
        return found.fn(target, params)
    except Exception as exc:  # a checker bug must not crash a verification request
        return CheckOutcome(False, f"checker '{found.name}' failed: {type(exc).__name__}: {exc}")


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
