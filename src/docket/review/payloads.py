"""The shapes of task payloads, validated when a task is enqueued or imported.

Unknown extra fields are kept (and shown generically), so producers can add context
without a schema change. All text in a payload is untrusted and escaped when shown.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from docket.errors import InputError
from docket.reading import first_problem

KINDS = ("relevance", "adherence")
SENTENCE_ID = re.compile(r"^S([1-9][0-9]{0,5})$")


class Turn(BaseModel):
    """One agent's turn in one debate round."""

    model_config = ConfigDict(extra="allow")
    round: int = Field(ge=1)
    agent: str = Field(min_length=1, max_length=40)
    stance: Literal["relevant", "irrelevant", "neutral"] = "neutral"
    label: int | None = None
    evidence: list[str] = Field(default_factory=list)
    reasoning: str = ""
    parsed: bool = True

    @field_validator("stance", mode="before")
    @classmethod
    def _no_stance_is_neutral(cls, value: Any) -> Any:
        return "neutral" if value is None else value

    @field_validator("reasoning", mode="before")
    @classmethod
    def _no_reasoning_is_empty(cls, value: Any) -> Any:
        return "" if value is None else value


class RelevancePayload(BaseModel):
    """A query-chunk pair the agents could not agree on, with the whole debate."""

    model_config = ConfigDict(extra="allow")
    qid: str
    query: str
    docid: str
    text: str
    sentences: list[str] = Field(default_factory=list)
    method: str = ""
    transcript: list[Turn] = Field(default_factory=list)
    gold: int | None = None


class Rule(BaseModel):
    """The rule an adherence check applied."""

    model_config = ConfigDict(extra="allow")
    id: str
    text: str
    tier: str = ""


class CheckResult(BaseModel):
    """What the adherence check said."""

    model_config = ConfigDict(extra="allow")
    status: str
    explanation: str = ""
    span: Any = None


class AdherencePayload(BaseModel):
    """A submission flagged by a requirement check, for a human to confirm or overturn."""

    model_config = ConfigDict(extra="allow")
    record: dict[str, Any]
    rule: Rule
    result: CheckResult
    gold: int | None = None


MODELS: dict[str, type[BaseModel]] = {
    "relevance": RelevancePayload,
    "adherence": AdherencePayload,
}


class PayloadError(ValueError):
    """A payload does not fit its kind; ``field`` is the dotted path inside the payload."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


def check_payload(kind: str, payload: Any) -> dict[str, Any]:
    """Validate a payload and return it as plain JSON data.

    Raises:
        PayloadError: unknown kind or a payload that does not fit the kind's shape.
    """
    if kind not in MODELS:
        raise PayloadError("kind", f"unknown task kind '{kind}', use one of {KINDS}")
    try:
        model = MODELS[kind].model_validate(payload)
    except ValidationError as exc:
        field, message, _ = first_problem(exc)
        raise PayloadError(field or "payload", message) from exc
    data = model.model_dump(mode="json")
    if kind == "relevance" and not data["sentences"]:
        data["sentences"] = [data["text"]]
    return data


def validate_payload(kind: str, payload: Any) -> dict[str, Any]:
    """Like :func:`check_payload`, raising a user-facing :class:`InputError`."""
    try:
        return check_payload(kind, payload)
    except PayloadError as exc:
        field = "kind" if exc.field == "kind" else f"payload.{exc.field}"
        raise InputError(exc.message, field=field) from exc


def sentence_index(evidence_id: str, n_sentences: int) -> int | None:
    """Zero-based index of an evidence id like ``S3``, or None if invalid or out of range."""
    match = SENTENCE_ID.match(evidence_id.strip())
    if not match:
        return None
    index = int(match.group(1)) - 1
    return index if index < n_sentences else None
