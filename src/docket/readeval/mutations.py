"""Applying mutation operators to records, and checking the result with every fmt rule.

:func:`fmt_attempts` yields candidate mutations of a record for one ``fmt`` rule, each
from a different (operator, turn) pair in seeded random order; :func:`fmt_failures`
runs every ``fmt`` rule of a rule set, so the caller can keep a mutation only when the
intended rule fails and every other one still passes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from docket.adherence.checks import CATALOGUE
from docket.adherence.record import Record, Turn
from docket.adherence.rules import Rule, RuleSet
from docket.adherence.verify.fmt import run_fmt
from docket.readeval import ops_counts, ops_layout, ops_record, ops_text  # noqa: F401
from docket.readeval.operators import OPERATORS, MutationContext, Operator

Slot = tuple[str, Any]
"""Where a text operator writes: ``("turn", index)``, ``("field", name)`` or ``("record", None)``."""


@dataclass(frozen=True)
class Mutation:
    """A mutated record and how it was made.

    Attributes:
        record: the record with the injected violation.
        operator: the operator's name, e.g. ``urls.insert``.
        turn: the turn that was changed, or None (a field, or a record-level change).
    """

    record: Record
    operator: str
    turn: int | None


def operators_for(rule: Rule) -> list[Operator]:
    """The operators that can break ``rule`` (an fmt rule) given its parameters."""
    if rule.check is None:
        return []
    found = OPERATORS.get(rule.check.checker, [])
    return [op for op in found if op.applies(rule.fmt_params)]


def checkers_without_operator() -> list[str]:
    """Catalogue checkers no mutation operator can break (their rules are never injected)."""
    return sorted(set(CATALOGUE) - set(OPERATORS))


def slots(rule: Rule, record: Record) -> list[Slot]:
    """The texts of ``record`` an operator for ``rule`` may change."""
    scope = rule.scope
    if scope.kind == "field":
        return [("field", scope.field)] if scope.field in record.fields else []
    if scope.kind == "record":
        return [("turn", i) for i in range(len(record.turns))]
    return [("turn", target.turn) for target in scope.targets(record)]


def replace_text(record: Record, slot: Slot, text: str) -> Record:
    """A copy of ``record`` with the text at ``slot`` (a turn or a field) replaced."""
    kind, where = slot
    if kind == "field":
        return record.model_copy(update={"fields": {**record.fields, where: text}})
    turns = list(record.turns)
    turns[where] = Turn(role=turns[where].role, text=text)
    return record.model_copy(update={"turns": turns})


def apply(
    op: Operator, rule: Rule, record: Record, slot: Slot, ctx: MutationContext
) -> Mutation | None:
    """Apply one operator at one slot; None when it does not apply or changes nothing."""
    if op.level == "record":
        changed = op.fn(record, rule.fmt_params, ctx)
        return Mutation(changed, op.name, None) if changed not in (None, record) else None
    kind, where = slot
    text = record.fields[where] if kind == "field" else record.turns[where].text
    new_text = op.fn(text, rule.fmt_params, ctx)
    if new_text is None or new_text == text:
        return None
    turn = where if kind == "turn" else None
    return Mutation(replace_text(record, slot, new_text), op.name, turn)


def candidates(
    rule: Rule, record: Record, ctx: MutationContext, tries: int = 3
) -> list[tuple[Operator, Slot]]:
    """Every (operator, slot) pair for ``rule``, shuffled; record operators get ``tries`` draws."""
    pairs: list[tuple[Operator, Slot]] = []
    for op in operators_for(rule):
        if op.level == "record":
            pairs += [(op, ("record", None))] * tries
        else:
            pairs += [(op, slot) for slot in slots(rule, record)]
    ctx.rng.shuffle(pairs)
    return pairs


def fmt_attempts(rule: Rule, record: Record, ctx: MutationContext) -> Iterator[Mutation]:
    """Candidate mutations breaking ``rule``, one per (operator, slot), in seeded random order."""
    for op, slot in candidates(rule, record, ctx):
        mutation = apply(op, rule, record, slot, ctx)
        if mutation is not None:
            yield mutation


def fmt_failures(ruleset: RuleSet, record: Record) -> dict[str, str]:
    """``{rule id: explanation}`` of every fmt rule of ``ruleset`` that ``record`` fails."""
    failed = {}
    for rule in ruleset.by_tier("fmt"):
        outcome = run_fmt(rule, record)
        if not outcome.passed:
            failed[rule.id] = outcome.explanation
    return failed
