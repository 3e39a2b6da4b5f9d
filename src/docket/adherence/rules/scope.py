"""Where a rule applies inside a record, and the texts that scope selects.

Defined apart from :mod:`docket.adherence.rules` so that the checker catalogue can use
it without importing the rule model (which imports the catalogue to validate specs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

from docket.adherence.record import Record, role_problem

ScopeKind = Literal["record", "each_turn", "role", "field", "last_turn"]

TURN_SEPARATOR = "\n\n"
"""Joins turn texts when a text-level check runs over a whole record."""


class Scope(BaseModel):
    """The part of a record a rule is about.

    Attributes:
        kind: ``record`` (the whole record), ``each_turn`` (every turn on its own),
            ``role`` (every turn of ``role``), ``field`` (the named field) or
            ``last_turn`` (the latest turn only).
        role: the speaker for ``kind='role'``; must be empty otherwise.
        field: the field name for ``kind='field'``; must be empty otherwise.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ScopeKind = "record"
    role: str | None = None
    field: str | None = None

    @model_validator(mode="after")
    def _role_and_field_match_kind(self) -> Scope:
        if (self.kind == "role") != bool(self.role):
            raise ValueError("'role' is required exactly when kind is 'role'")
        if self.role and (problem := role_problem(self.role)) is not None:
            raise ValueError(problem)
        if (self.kind == "field") != bool(self.field):
            raise ValueError("'field' is required exactly when kind is 'field'")
        return self

    @property
    def per_turn(self) -> bool:
        """True when the scope looks at single turns (so only new turns need checking)."""
        return self.kind in ("each_turn", "role", "last_turn")

    def targets(self, record: Record, turn_index: int | None = None) -> list[Target]:
        """The texts this scope selects from ``record``, in order.

        Args:
            record: the record to look into.
            turn_index: for per-turn scopes, restrict to this turn (the new one in
                incremental checking); it is ignored by ``record`` and ``field`` scopes.

        Returns:
            One target per applicable text; an empty list when nothing applies (no turn
            of the role yet, or ``turn_index`` is not a turn this scope covers). A missing
            field gives one target with ``missing=True``.
        """
        if self.kind == "record":
            return [Target(None, record_text(record))]
        if self.kind == "field":
            value = record.fields.get(self.field or "")
            return [Target(None, value or "", field=self.field, missing=value is None)]
        return [Target(i, record.turns[i].text) for i in self._turn_indices(record, turn_index)]

    def _turn_indices(self, record: Record, turn_index: int | None) -> list[int]:
        if self.kind == "last_turn":
            indices = [len(record.turns) - 1] if record.turns else []
        elif self.kind == "role":
            indices = [i for i, turn in enumerate(record.turns) if turn.role == self.role]
        else:
            indices = list(range(len(record.turns)))
        if turn_index is not None:
            indices = [i for i in indices if i == turn_index]
        return indices

    def describe(self) -> str:
        """A short human description, e.g. ``turns of role 'assistant'``."""
        if self.kind == "role":
            return f"turns of role '{self.role}'"
        if self.kind == "field":
            return f"field '{self.field}'"
        return {"record": "whole record", "each_turn": "each turn", "last_turn": "last turn"}[
            self.kind
        ]


@dataclass(frozen=True)
class Target:
    """One text selected by a scope.

    Attributes:
        turn: the turn index, or None for a whole-record or field text.
        text: the text to check.
        field: the field name for field scopes.
        missing: the field does not exist in the record.
    """

    turn: int | None
    text: str
    field: str | None = None
    missing: bool = False


def record_text(record: Record) -> str:
    """All turn texts joined by :data:`TURN_SEPARATOR` (what record-scoped text checks see)."""
    return TURN_SEPARATOR.join(turn.text for turn in record.turns)


def locate_turn(record: Record, span: tuple[int, int]) -> tuple[int, tuple[int, int]] | None:
    """Map a span in :func:`record_text` to ``(turn index, span within that turn)``.

    Returns None when the span is not inside a single turn.
    """
    start = 0
    for index, turn in enumerate(record.turns):
        end = start + len(turn.text)
        if start <= span[0] and span[1] <= end:
            return index, (span[0] - start, span[1] - start)
        start = end + len(TURN_SEPARATOR)
    return None
