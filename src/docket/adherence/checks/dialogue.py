"""Record-level checks on the dialogue as a whole: turn counts, role order, repeats, fields."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from docket.adherence.checks.base import Bounds, CheckOutcome, Params, checker
from docket.adherence.checks.counts import WORD
from docket.adherence.record import Record, role_problem


def _known_role(role: str | None) -> str | None:
    if role is not None and (problem := role_problem(role)) is not None:
        raise ValueError(problem)
    return role


class TurnCountParams(Bounds):
    """``role``: count only this speaker's turns (default: all turns)."""

    role: str | None = None

    @field_validator("role")
    @classmethod
    def _role_is_no_typo(cls, role: str | None) -> str | None:
        return _known_role(role)


@checker("turn_count", TurnCountParams, level="record")
def turn_count(record: Record, params: TurnCountParams) -> CheckOutcome:
    """The number of turns (optionally of one role) is within the range; the turn marks the first extra one."""
    indices = [i for i, t in enumerate(record.turns) if params.role in (None, t.role)]
    what = f"turns by '{params.role}'" if params.role else "turns"
    summary = f"{len(indices)} (allowed: {params.describe()})"
    problem = params.violation(len(indices))
    if problem is None:
        return CheckOutcome(True, f"{what}: {summary}")
    if problem == "too few":  # later turns can still bring the count into range
        return CheckOutcome(False, f"{problem} {what} so far: {summary}", pending=True)
    extra = indices[params.high] if params.high is not None else None
    return CheckOutcome(False, f"{problem} {what}: {summary}", turn=extra)


class AlternationParams(Params):
    """``roles``: the speakers in their cyclic order (default user, assistant);
    ``first_role``: who must speak first (default: any role of the cycle)."""

    roles: list[str] = Field(default=["user", "assistant"], min_length=2)
    first_role: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> AlternationParams:
        if len(set(self.roles)) != len(self.roles):
            raise ValueError("'roles' must not repeat a role")
        for role in self.roles:
            _known_role(role)
        if self.first_role is not None and self.first_role not in self.roles:
            raise ValueError(f"'first_role' must be one of {self.roles}")
        return self


@checker("role_alternation", AlternationParams, level="record")
def role_alternation(record: Record, params: AlternationParams) -> CheckOutcome:
    """Speakers take turns in the given cyclic order (e.g. user, assistant, user, ...), starting right."""
    if not record.turns:
        return CheckOutcome(True, "no turns yet")
    first = params.first_role or record.turns[0].role
    if first not in params.roles:
        return CheckOutcome(False, f"turn 0 is by '{first}', not one of {params.roles}", turn=0)
    start = params.roles.index(first)
    for index, turn in enumerate(record.turns):
        expected = params.roles[(start + index) % len(params.roles)]
        if turn.role != expected:
            explanation = f"turn {index} is by '{turn.role}' but '{expected}' was expected"
            return CheckOutcome(False, explanation, turn=index)
    return CheckOutcome(True, f"{len(record.turns)} turns alternate {' / '.join(params.roles)}")


class RepeatParams(Params):
    """``role``: compare only this speaker's turns (default: all);
    ``threshold``: word-set Jaccard similarity counted as a repeat (1.0 = same words, default)."""

    role: str | None = None
    threshold: float = Field(default=1.0, gt=0.0, le=1.0)


def _words(text: str) -> frozenset[str]:
    return frozenset(WORD.findall(text.casefold()))


def _normalised(text: str) -> str:
    return " ".join(WORD.findall(text.casefold()))


@checker("no_repeated_turns", RepeatParams, level="record")
def no_repeated_turns(record: Record, params: RepeatParams) -> CheckOutcome:
    """No turn repeats an earlier one (same words ignoring case and punctuation, or similar above a threshold)."""
    indices = [i for i, t in enumerate(record.turns) if params.role in (None, t.role)]
    if params.threshold >= 1.0:
        seen: dict[str, int] = {}
        for index in indices:
            key = _normalised(record.turns[index].text)
            if key and key in seen:
                return _repeat(record, index, seen[key], 1.0)
            seen.setdefault(key, index)
        return CheckOutcome(True, "no repeated turns")
    words = {i: _words(record.turns[i].text) for i in indices}
    for later_pos, later in enumerate(indices):
        for earlier in indices[:later_pos]:
            a, b = words[earlier], words[later]
            similarity = len(a & b) / len(a | b) if a and b else 0.0
            if similarity >= params.threshold:
                return _repeat(record, later, earlier, similarity)
    return CheckOutcome(True, f"no turns with similarity >= {params.threshold}")


def _repeat(record: Record, later: int, earlier: int, similarity: float) -> CheckOutcome:
    how = "repeats" if similarity >= 1.0 else f"is {similarity:.0%} similar to"
    span = (0, len(record.turns[later].text))
    return CheckOutcome(False, f"turn {later} {how} turn {earlier}", span, turn=later)


class FieldsParams(Params):
    """``names``: the fields that must exist; ``non_empty``: they must hold text (default true)."""

    names: list[str] = Field(min_length=1)
    non_empty: bool = True

    @field_validator("names")
    @classmethod
    def _no_blank(cls, value: list[str]) -> list[str]:
        if any(not name.strip() for name in value):
            raise ValueError("field names must not be empty")
        return value


@checker("fields_required", FieldsParams, level="record")
def fields_required(record: Record, params: FieldsParams) -> CheckOutcome:
    """The named fields exist in the record (and are not blank)."""
    for name in params.names:
        if name not in record.fields:
            return CheckOutcome(False, f"field '{name}' is missing")
        if params.non_empty and not record.fields[name].strip():
            return CheckOutcome(False, f"field '{name}' is empty")
    return CheckOutcome(True, f"fields present: {', '.join(params.names)}")
