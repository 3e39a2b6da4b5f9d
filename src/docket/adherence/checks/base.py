"""The checker registry: outcomes, the Checker record, registration and parameter validation."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from docket.errors import ConfigError
from docket.reading import first_problem

Level = Literal["text", "record"]


@dataclass(frozen=True)
class CheckOutcome:
    """The result of one deterministic check.

    Attributes:
        passed: True when the text or record satisfies the check.
        explanation: why it passed or failed, in one sentence a person can act on.
        span: ``(start, end)`` character offsets of the offending text, when there is one.
            Offsets are into the text of ``turn`` when ``turn`` is set, else into the
            checked text (the field value, or the record's turns joined by a blank line).
        turn: index of the offending turn, when the failure is in one turn.
        undecided: why no verdict could be reached (a checker raised, a pattern timed
            out); when set, ``passed`` is False and the outcome counts as needs_review,
            never as a pass and never as a failure of the text.
        pending: a failure that later turns can still repair (too few turns so far): in
            live checking it is "not yet", not "violated".
    """

    passed: bool
    explanation: str
    span: tuple[int, int] | None = None
    turn: int | None = None
    undecided: str = ""
    pending: bool = False

    @classmethod
    def unknown(cls, reason: str) -> CheckOutcome:
        """An outcome without a verdict: ``reason`` says why."""
        return cls(False, reason, undecided=reason)


class Params(BaseModel):
    """Base for checker parameter models: immutable, unknown keys rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Bounds(Params):
    """A count range: give ``min``, ``max``, both, or ``exact``."""

    min: int | None = None
    max: int | None = None
    exact: int | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Bounds:
        values = [v for v in (self.min, self.max, self.exact) if v is not None]
        if not values:
            raise ValueError("give at least one of 'min', 'max' or 'exact'")
        if any(v < 0 for v in values):
            raise ValueError("counts cannot be negative")
        if self.exact is not None and (self.min is not None or self.max is not None):
            raise ValueError("'exact' cannot be combined with 'min' or 'max'")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError("'min' is larger than 'max'")
        return self

    @property
    def low(self) -> int | None:
        """The smallest allowed count."""
        return self.exact if self.exact is not None else self.min

    @property
    def high(self) -> int | None:
        """The largest allowed count."""
        return self.exact if self.exact is not None else self.max

    def describe(self) -> str:
        """``exactly 3``, ``at least 2``, ``at most 5`` or ``between 2 and 5``."""
        if self.exact is not None:
            return f"exactly {self.exact}"
        if self.min is not None and self.max is not None:
            return f"between {self.min} and {self.max}"
        return f"at least {self.min}" if self.min is not None else f"at most {self.max}"

    def violation(self, count: int) -> str | None:
        """``'too many'``/``'too few'`` when ``count`` is out of range, else None."""
        if self.low is not None and count < self.low:
            return "too few"
        if self.high is not None and count > self.high:
            return "too many"
        return None


CheckFn = Callable[[Any, Any], CheckOutcome]


@dataclass(frozen=True)
class Checker:
    """One entry of the fixed checker catalogue.

    Attributes:
        name: the name used in rule specs (``check.checker``).
        level: ``text`` checkers get one string; ``record`` checkers get the whole Record.
        params: the pydantic model of the parameters.
        doc: what the checker verifies (shown by ``docket rules checkers``).
        fn: the pure function ``fn(target, params) -> CheckOutcome``.
    """

    name: str
    level: Level
    params: type[BaseModel]
    doc: str
    fn: CheckFn

    def run(self, target: Any, params: BaseModel | dict[str, Any]) -> CheckOutcome:
        """Run the check on a string (text level) or a Record (record level)."""
        if isinstance(params, dict):
            params = validate_params(self.name, params)
        return self.fn(target, params)


CATALOGUE: dict[str, Checker] = {}
"""All checkers by name; filled by the modules of this package at import."""


def checker(
    name: str, params: type[BaseModel], level: Level = "text"
) -> Callable[[CheckFn], CheckFn]:
    """Register the decorated function in :data:`CATALOGUE` under ``name``."""

    def register(fn: CheckFn) -> CheckFn:
        if name in CATALOGUE:
            raise ValueError(f"checker '{name}' registered twice")
        doc = inspect.getdoc(fn) or ""
        CATALOGUE[name] = Checker(name, level, params, doc.split("\n\n")[0].strip(), fn)
        return fn

    return register


def validate_params(checker_name: str, params: dict[str, Any]) -> BaseModel:
    """Validate ``params`` for ``checker_name`` and return the parameter model.

    Raises:
        ConfigError: unknown checker, or parameters that do not fit; the message names
            the checker and the offending parameter.
    """
    found = CATALOGUE.get(checker_name)
    if found is None:
        raise ConfigError(
            f"unknown checker '{checker_name}'",
            hint=f"use one of: {', '.join(sorted(CATALOGUE))} (see `docket rules checkers`)",
        )
    if not isinstance(params, dict):
        raise ConfigError(f"checker '{checker_name}': params must be a mapping")
    try:
        return found.params.model_validate(params)
    except ValidationError as exc:
        raise ConfigError(
            f"checker '{checker_name}': {describe_validation_error(exc)}",
            hint=f"parameters of '{checker_name}': {param_summary(found.params)}",
        ) from exc


def describe_validation_error(exc: ValidationError) -> str:
    """The first pydantic error as ``parameter 'x': message``."""
    loc, message, kind = first_problem(exc)
    if kind == "extra_forbidden":
        return f"unknown parameter '{loc}'"
    if kind == "missing":
        return f"parameter '{loc}' is required"
    return f"parameter '{loc}': {message}" if loc else message


def param_summary(model: type[BaseModel]) -> str:
    """``name: type = default, ...`` for a parameter model (for hints and prompts)."""
    parts = []
    for name, field in model.model_fields.items():
        kind = field.annotation
        annotation = kind.__name__ if isinstance(kind, type) else str(kind).replace("typing.", "")
        default = "" if field.is_required() else f" = {field.default!r}"
        parts.append(f"{field.alias or name}: {annotation}{default}")
    return ", ".join(parts) or "(none)"
