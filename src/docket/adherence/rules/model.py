"""The rule and rule-set models (public names are re-exported by :mod:`docket.adherence.rules`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from functools import cached_property
from typing import Any, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    computed_field,
    field_validator,
    model_validator,
)

from docket.adherence.checks import CATALOGUE, validate_params
from docket.adherence.rules.scope import Scope
from docket.errors import ConfigError, InputError

Tier = Literal["fmt", "sim", "sub"]
TIERS: tuple[Tier, ...] = ("fmt", "sim", "sub")
RULE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$"
_NULL_WORDS = frozenset({"None", "none", "null", "Null", "NULL", "~"})


class RulesFileError(InputError, ConfigError):
    """A rules file that cannot be used; names the file, line, rule and field."""


def content_hash(payload: Any) -> str:
    """First 16 hex digits of the SHA-256 of canonical JSON."""
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


class FmtSpec(BaseModel):
    """A declarative deterministic check: a catalogue checker and its parameters.

    Attributes:
        checker: a name from :data:`docket.adherence.checks.CATALOGUE`.
        params: the checker's parameters (validated against its parameter model).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    checker: str
    params: dict[str, Any] = {}


class Source(BaseModel):
    """Where in the SOP a rule comes from.

    Attributes:
        section: the heading path, e.g. ``"2 Format > 2.1 Length"``.
        lines: first and last line (1-based, inclusive) in the SOP's Markdown.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    section: str
    lines: tuple[int, int]

    @field_validator("lines")
    @classmethod
    def _ordered(cls, value: tuple[int, int]) -> tuple[int, int]:
        if value[0] < 1 or value[1] < value[0]:
            raise ValueError("lines must be [start, end] with 1 <= start <= end")
        return value


class _Versioned(BaseModel):
    """A model whose ``version`` is computed: a stored ``version`` in the input is ignored."""

    @model_validator(mode="before")
    @classmethod
    def _ignore_stored_version(cls, data: Any) -> Any:
        if isinstance(data, dict) and "version" in data:
            data = {k: v for k, v in data.items() if k != "version"}
        return data


class Rule(_Versioned):
    """One atomic, verifiable requirement.

    Attributes:
        id: unique within the rule set (letters, digits, ``_ . -``).
        text: the requirement in one sentence.
        tier: ``fmt`` (deterministic code), ``sim`` (small model), ``sub`` (large model).
        scope: what part of a record the rule is about.
        check: the declarative check; required for ``fmt``, forbidden otherwise.
        source: SOP section and lines it was extracted from, if known.
        note: a remark for the rule author (e.g. why a rule was downgraded); not hashed.
        version: content hash of text, tier, scope and check (computed).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=RULE_ID_PATTERN)
    text: str = Field(min_length=1)
    tier: Tier
    scope: Scope = Scope()
    check: FmtSpec | None = None
    source: Source | None = None
    note: str | None = None
    _params: BaseModel | None = PrivateAttr(default=None)

    @field_validator("text")
    @classmethod
    def _says_something(cls, text: str) -> str:
        # YAML reads `text: None` as the string "None"; neither it nor blanks are a rule.
        if not text.strip() or text.strip() in _NULL_WORDS:
            raise ValueError(f"the rule text is empty ({text.strip()!r}): write the requirement")
        return text

    @model_validator(mode="after")
    def _check_fits_tier(self) -> Rule:
        if self.tier == "fmt" and self.check is None:
            raise ValueError("a 'fmt' rule needs a 'check' (checker and params)")
        if self.tier != "fmt" and self.check is not None:
            raise ValueError(f"only 'fmt' rules have a 'check'; this rule is '{self.tier}'")
        if self.check is not None:
            self._params = _validated_params(self.id, self.check, self.scope)
        return self

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def version(self) -> str:
        """Content hash of text, tier, scope and check (not id, source or note)."""
        payload = self.model_dump(mode="json", include={"text", "tier", "scope", "check"})
        return content_hash(payload)

    @property
    def fmt_params(self) -> BaseModel | None:
        """The validated parameter model of ``check`` (None for sim/sub rules)."""
        return self._params

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy; with ``update`` the result is validated again, so checks and versions stay right."""
        if not update:
            return super().model_copy(deep=deep)
        return self.model_validate({**self.model_dump(exclude={"version"}), **update})


def _validated_params(rule_id: str, check: FmtSpec, scope: Scope) -> BaseModel:
    try:
        params = validate_params(check.checker, check.params)
    except ConfigError as exc:
        raise ConfigError(f"rule '{rule_id}': {exc.message}", hint=exc.hint) from exc
    if CATALOGUE[check.checker].level == "record" and scope.kind != "record":
        raise ConfigError(
            f"rule '{rule_id}': checker '{check.checker}' checks whole records, "
            f"but the scope is '{scope.kind}'",
            hint="use scope {kind: record} (the checker's own params select roles)",
        )
    return params


class RuleSet(_Versioned):
    """An ordered list of rules with unique ids.

    Attributes:
        name: a short name for the rule set.
        sop: the SOP the rules were extracted from, if any.
        rules: the rules, in prompt order.
        version: content hash over the rules' ids and versions, in order (computed).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    sop: str | None = None
    rules: list[Rule]

    @field_validator("rules")
    @classmethod
    def _unique_ids(cls, rules: list[Rule]) -> list[Rule]:
        seen: set[str] = set()
        for rule in rules:
            if rule.id in seen:
                raise ValueError(f"duplicate rule id '{rule.id}'")
            seen.add(rule.id)
        return rules

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def version(self) -> str:
        """Content hash over ``(id, version)`` of every rule, in order."""
        return content_hash([[rule.id, rule.version] for rule in self.rules])

    def get(self, rule_id: str) -> Rule:
        """The rule with ``rule_id``; KeyError if there is none."""
        for rule in self.rules:
            if rule.id == rule_id:
                return rule
        raise KeyError(rule_id)

    def by_tier(self, tier: Tier) -> list[Rule]:
        """The rules of one tier, in order."""
        return [rule for rule in self.rules if rule.tier == tier]

    def tier_counts(self) -> dict[str, int]:
        """``{'fmt': n, 'sim': n, 'sub': n}``."""
        return {tier: len(self.by_tier(tier)) for tier in TIERS}

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy; with ``update`` the result is validated again, so checks and versions stay right."""
        if not update:
            return super().model_copy(deep=deep)
        return self.model_validate({**self.model_dump(exclude={"version"}), **update})
