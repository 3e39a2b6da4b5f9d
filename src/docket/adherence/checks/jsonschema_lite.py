"""A small JSON Schema validator for the subset rule authors need.

Supported keywords: ``type`` (one or a list), ``enum``, ``const``, ``properties``,
``required``, ``additionalProperties`` (bool or schema), ``minProperties``,
``maxProperties``, ``items`` (one schema), ``minItems``, ``maxItems``, ``uniqueItems``,
``minLength``, ``maxLength``, ``pattern`` (screened like every rule regex), ``minimum``,
``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum``, ``anyOf``, ``allOf``, ``oneOf``,
``not``, plus annotations (``title``, ``description``, ``default``, ``examples``,
``$schema``, ``$id``, ``$comment``). ``$ref`` and anything else is refused when the rule
is loaded, so a schema never silently checks less than its author meant.
"""

from __future__ import annotations

from typing import Any

from docket.adherence.checks.safe_regex import (
    bounded,
    check_pattern,
    compiled,
    search,
)

_ANNOTATIONS = {"title", "description", "default", "examples", "$schema", "$id", "$comment"}
_SCHEMA_VALUED = {"additionalProperties", "items", "not"}
_SCHEMA_LISTS = {"anyOf", "allOf", "oneOf"}
_COUNTS = {"minProperties", "maxProperties", "minItems", "maxItems", "minLength", "maxLength"}
_NUMBERS = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
_OTHER = {"type", "enum", "const", "properties", "required", "uniqueItems", "pattern"}
SUPPORTED = _ANNOTATIONS | _SCHEMA_VALUED | _SCHEMA_LISTS | _COUNTS | _NUMBERS | _OTHER
TYPES = {"object", "array", "string", "integer", "number", "boolean", "null"}


def check_schema(schema: Any, where: str = "#") -> None:
    """Raise ValueError naming the location when ``schema`` leaves the supported subset."""
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise ValueError(f"{where}: a schema must be an object")
    unknown = sorted(set(schema) - SUPPORTED)
    if unknown:
        raise ValueError(f"{where}: unsupported schema keyword(s) {unknown}")
    types = schema.get("type", [])
    for name in [types] if isinstance(types, str) else types:
        if name not in TYPES:
            raise ValueError(f"{where}/type: unknown type '{name}'")
    if "pattern" in schema:
        check_pattern(schema["pattern"])
    for key, sub in schema.get("properties", {}).items():
        check_schema(sub, f"{where}/properties/{key}")
    for key in _SCHEMA_VALUED & set(schema):
        check_schema(schema[key], f"{where}/{key}")
    for key in _SCHEMA_LISTS & set(schema):
        for index, sub in enumerate(schema[key]):
            check_schema(sub, f"{where}/{key}/{index}")


def first_error(instance: Any, schema: Any, path: str = "") -> str | None:
    """The first way ``instance`` violates ``schema`` (with a JSON pointer), or None."""
    if schema is True:
        return None
    if schema is False:
        return f"{path or '/'}: no value is allowed here"
    for check in (_type, _enum, _object, _array, _string, _number, _combinators):
        if (error := check(instance, schema, path)) is not None:
            return error
    return None


def _is_type(value: Any, name: str) -> bool:
    if name == "integer":
        return (
            isinstance(value, int)
            and not isinstance(value, bool)
            or (isinstance(value, float) and value.is_integer())
        )
    python = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, python[name])


def _type(value: Any, schema: dict, path: str) -> str | None:
    types = schema.get("type")
    if types is None:
        return None
    names = [types] if isinstance(types, str) else types
    if any(_is_type(value, name) for name in names):
        return None
    return f"{path or '/'}: expected {' or '.join(names)}, got {_type_name(value)}"


def _type_name(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean"}.get(
        type(value), "null" if value is None else "number"
    )


def _enum(value: Any, schema: dict, path: str) -> str | None:
    if "const" in schema and value != schema["const"]:
        return f"{path or '/'}: must be {schema['const']!r}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{path or '/'}: must be one of {schema['enum']!r}"
    return None


def _object(value: Any, schema: dict, path: str) -> str | None:
    if not isinstance(value, dict):
        return None
    for key in schema.get("required", []):
        if key not in value:
            return f"{path or '/'}: missing required property '{key}'"
    if (error := _size(len(value), schema, "Properties", path, "properties")) is not None:
        return error
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        sub = properties.get(key, extra)
        if sub is False:
            return f"{path or '/'}: property '{key}' is not allowed"
        if (error := first_error(item, sub, f"{path}/{key}")) is not None:
            return error
    return None


def _array(value: Any, schema: dict, path: str) -> str | None:
    if not isinstance(value, list):
        return None
    if (error := _size(len(value), schema, "Items", path, "items")) is not None:
        return error
    if schema.get("uniqueItems") and len({repr(v) for v in value}) < len(value):
        return f"{path or '/'}: items must be unique"
    for index, item in enumerate(value):
        if (error := first_error(item, schema.get("items", True), f"{path}/{index}")) is not None:
            return error
    return None


def _string(value: Any, schema: dict, path: str) -> str | None:
    if not isinstance(value, str):
        return None
    if (error := _size(len(value), schema, "Length", path, "characters")) is not None:
        return error
    if "pattern" in schema:
        # A timeout raises RegexTimeout: the check is undecided, never a verdict.
        found = search(compiled(schema["pattern"]), bounded(value)[0])
        if found is None:
            return f"{path or '/'}: does not match /{schema['pattern']}/"
    return None


def _size(size: int, schema: dict, suffix: str, path: str, unit: str) -> str | None:
    low, high = schema.get(f"min{suffix}"), schema.get(f"max{suffix}")
    if low is not None and size < low:
        return f"{path or '/'}: {size} {unit}, at least {low} required"
    if high is not None and size > high:
        return f"{path or '/'}: {size} {unit}, at most {high} allowed"
    return None


def _number(value: Any, schema: dict, path: str) -> str | None:
    if not _is_type(value, "number"):
        return None
    bounds = (
        ("minimum", lambda b: value >= b, ">="),
        ("maximum", lambda b: value <= b, "<="),
        ("exclusiveMinimum", lambda b: value > b, ">"),
        ("exclusiveMaximum", lambda b: value < b, "<"),
    )
    for key, holds, symbol in bounds:
        if key in schema and not holds(schema[key]):
            return f"{path or '/'}: {value} is not {symbol} {schema[key]}"
    return None


def _combinators(value: Any, schema: dict, path: str) -> str | None:
    for sub in schema.get("allOf", []):
        if (error := first_error(value, sub, path)) is not None:
            return error
    if "anyOf" in schema and all(first_error(value, s, path) for s in schema["anyOf"]):
        return f"{path or '/'}: matches none of the anyOf schemas"
    if "oneOf" in schema:
        matching = sum(first_error(value, s, path) is None for s in schema["oneOf"])
        if matching != 1:
            return f"{path or '/'}: matches {matching} of the oneOf schemas, exactly 1 required"
    if "not" in schema and first_error(value, schema["not"], path) is None:
        return f"{path or '/'}: must not match the 'not' schema"
    return None
