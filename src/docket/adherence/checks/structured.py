"""JSON checks: the text parses as JSON, and fits a JSON Schema (supported subset)."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import Field, field_validator

from docket.adherence.checks.base import CheckOutcome, Params, checker
from docket.adherence.checks.jsonschema_lite import check_schema, first_error

# A Markdown code fence around the whole text, on several lines or on one
# (```json {"a": 1}```); the language tag, when there is one, is followed by a space.
_FENCE = re.compile(r"^\s*```(?:[A-Za-z][\w+-]*(?=\s))?\s*(.*?)\s*```\s*$", re.S)


class JsonParams(Params):
    """``strip_code_fence``: accept JSON wrapped in a Markdown ``` fence (default true)."""

    strip_code_fence: bool = True


def _parse(text: str, strip_fence: bool) -> tuple[Any, CheckOutcome | None]:
    offset, body = 0, text
    if strip_fence and (fence := _FENCE.match(text)):
        offset, body = fence.start(1), fence.group(1)
    try:
        return json.loads(body), None
    except json.JSONDecodeError as exc:
        position = offset + exc.pos
        span = (position, min(len(text), position + 1)) if text else None
        explanation = f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        return None, CheckOutcome(False, explanation, span)


@checker("json_valid", JsonParams)
def json_valid(text: str, params: JsonParams) -> CheckOutcome:
    """The text is valid JSON (optionally inside a ``` code fence)."""
    _, failure = _parse(text, params.strip_code_fence)
    return failure or CheckOutcome(True, "valid JSON")


class JsonSchemaParams(JsonParams):
    """``schema``: a JSON Schema in the supported subset (type, properties, required,
    items, enum, const, min/max sizes and values, pattern, anyOf/allOf/oneOf/not)."""

    # pydantic reserves the attribute name ``schema``; the parameter is still spelled ``schema``.
    schema_: dict[str, Any] | bool = Field(alias="schema")

    @field_validator("schema_")
    @classmethod
    def _supported(cls, value: dict[str, Any] | bool) -> dict[str, Any] | bool:
        check_schema(value)
        return value


@checker("json_schema", JsonSchemaParams)
def json_schema(text: str, params: JsonSchemaParams) -> CheckOutcome:
    """The text is JSON that fits the given schema; the explanation names the first violation."""
    value, failure = _parse(text, params.strip_code_fence)
    if failure is not None:
        return failure
    error = first_error(value, params.schema_)
    if error is not None:
        return CheckOutcome(False, f"JSON does not fit the schema: {error}")
    return CheckOutcome(True, "JSON fits the schema")
