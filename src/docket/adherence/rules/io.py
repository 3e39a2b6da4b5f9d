"""Reading and writing rule files (YAML) and the published JSON schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from docket.adherence.checks import CATALOGUE
from docket.adherence.rules.model import Rule, RuleSet, RulesFileError
from docket.errors import ConfigError
from docket.reading import one_line, read_text, validation_error
from docket.writing import write_text

HEADER = (
    "# docket rule set: edit freely, then check with `docket rules validate {name}`.\n"
    "# Schema: docs/rules.schema.json (`docket rules schema`); checkers: `docket rules checkers`.\n"
)
_TOP_KEYS = {"name", "sop", "rules", "version"}


def load_rules(path: str | Path) -> RuleSet:
    """Load and validate a YAML rule file.

    Raises:
        RulesFileError: (a ConfigError and an InputError) naming the file, the line,
            the rule by index and id, and the field or checker parameter at fault.
    """
    path = Path(path)
    text = read_text(path, RulesFileError)
    data, lines = _parse_yaml(text, path)
    rules = [_rule(item, index, path, lines.get(index)) for index, item in enumerate(data["rules"])]
    _check_unique(rules, path, lines)
    name = data.get("name") or path.stem
    try:
        return RuleSet(name=str(name), sop=data.get("sop"), rules=rules)
    except ValidationError as exc:
        raise validation_error(exc, path, error=RulesFileError) from exc


def _parse_yaml(text: str, path: Path) -> tuple[dict[str, Any], dict[int, int]]:
    try:
        node, data = _load(text)
    except yaml.YAMLError as exc:
        message, line = _yaml_problem(exc, text)
        raise RulesFileError(f"not valid YAML: {message}", path=str(path), line=line) from None
    except RecursionError:
        raise RulesFileError("not usable YAML (nested too deeply)", path=str(path)) from None
    except ValueError as exc:  # a date that is no date, an integer of over 4300 digits
        raise RulesFileError(f"not usable YAML ({one_line(exc)})", path=str(path)) from None
    if not isinstance(data, dict) or not isinstance(data.get("rules"), list):
        raise RulesFileError(
            "expected a mapping with a 'rules' list",
            path=str(path),
            hint="see docs/rules.schema.json",
        )
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise RulesFileError(
            f"unknown top-level key(s) {unknown}", path=str(path), hint="allowed: name, sop, rules"
        )
    return data, _rule_lines(node)


# libyaml's parser when PyYAML was built with it: 40 times faster on a 1 MB rule text, and
# it bounds nesting itself; the pure-Python one otherwise (same safe constructor).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load(text: str) -> tuple[yaml.Node | None, Any]:
    """The document's node tree (for line numbers) and its data, parsed once."""
    loader = _LOADER(text)
    try:
        node = loader.get_single_node()
        return node, None if node is None else loader.construct_document(node)
    finally:
        loader.dispose()


def _yaml_problem(exc: yaml.YAMLError, text: str) -> tuple[str, int | None]:
    """The parser's problem as one line, and its 1-based line (PyYAML spreads both over lines)."""
    if isinstance(exc, yaml.reader.ReaderError):  # a character YAML does not allow
        line = text.count("\n", 0, exc.position) + 1
        return one_line(f"character {exc.character!r} is not allowed ({exc.reason})"), line
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark is not None else None
    problem = getattr(exc, "problem", None) or str(exc)
    context, opened = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if context and opened is not None and opened.line + 1 != line:
        context = f"{context} that starts on line {opened.line + 1}"  # e.g. an unclosed '['
    return one_line(f"{problem} ({context})" if context else problem), line


def _rule_lines(node: yaml.Node | None) -> dict[int, int]:
    """1-based line of each item of the ``rules`` sequence."""
    if not isinstance(node, yaml.MappingNode):
        return {}
    for key, value in node.value:
        if key.value == "rules" and isinstance(value, yaml.SequenceNode):
            return {i: item.start_mark.line + 1 for i, item in enumerate(value.value)}
    return {}


def _rule(item: Any, index: int, path: Path, line: int | None) -> Rule:
    rule_id = item.get("id") if isinstance(item, dict) else None
    where = f"rules[{index}]" + (f" (id '{rule_id}')" if rule_id else "")
    if not isinstance(item, dict):
        raise RulesFileError("a rule must be a mapping", path=str(path), line=line, field=where)
    try:
        return Rule.model_validate(item)
    except ValidationError as exc:
        raise validation_error(exc, path, line, prefix=where, error=RulesFileError) from exc
    except ConfigError as exc:
        message = exc.message.split(": ", 1)[-1]  # the rule id is already in `where`
        raise RulesFileError(
            message, path=str(path), line=line, field=f"{where}.check", hint=exc.hint
        ) from exc


def _check_unique(rules: list[Rule], path: Path, lines: dict[int, int]) -> None:
    first_index: dict[str, int] = {}
    for index, rule in enumerate(rules):
        if rule.id in first_index:
            raise RulesFileError(
                f"duplicate rule id '{rule.id}' (first used by rules[{first_index[rule.id]}])",
                path=str(path),
                line=lines.get(index),
                field=f"rules[{index}].id",
            )
        first_index[rule.id] = index


def rule_to_data(rule: Rule) -> dict[str, Any]:
    """A rule as plain data for YAML, without computed or empty fields."""
    return rule.model_dump(mode="json", exclude_none=True, exclude={"version"})


class _CompactDumper(yaml.SafeDumper):
    """Block style for the structure, flow style for short leaves (``{kind: role, role: user}``)."""


def _is_short_leaf(value: dict | list) -> bool:
    items = value.values() if isinstance(value, dict) else value
    scalar = all(isinstance(v, str | int | float | bool) or v is None for v in items)
    return scalar and len(str(value)) <= 80


def _represent_dict(dumper: yaml.SafeDumper, value: dict) -> yaml.Node:
    return dumper.represent_mapping(
        "tag:yaml.org,2002:map", value.items(), flow_style=_is_short_leaf(value) or None
    )


def _represent_list(dumper: yaml.SafeDumper, value: list) -> yaml.Node:
    return dumper.represent_sequence(
        "tag:yaml.org,2002:seq", value, flow_style=_is_short_leaf(value) or None
    )


_CompactDumper.add_representer(dict, _represent_dict)
_CompactDumper.add_representer(list, _represent_list)


def dump_rules(ruleset: RuleSet, path: str | Path) -> None:
    """Write ``ruleset`` as YAML (atomically: a partial file is never left behind; ``-``:
    standard output)."""
    path = Path(path)
    data: dict[str, Any] = {"name": ruleset.name}
    if ruleset.sop:
        data["sop"] = ruleset.sop
    data["rules"] = [rule_to_data(rule) for rule in ruleset.rules]
    body = yaml.dump(data, Dumper=_CompactDumper, sort_keys=False, allow_unicode=True, width=100)
    write_text(path, HEADER.format(name=path.name) + body)


def rules_json_schema() -> dict[str, Any]:
    """The JSON schema of a rule file, with one ``check`` variant per catalogue checker."""
    schema = RuleSet.model_json_schema(mode="validation")
    defs = schema.setdefault("$defs", {})
    variants = []
    for name, found in sorted(CATALOGUE.items()):
        params = found.params.model_json_schema(mode="validation", ref_template="#/$defs/{model}")
        defs.update(params.pop("$defs", {}))
        params["description"] = found.doc
        variants.append(
            {
                "type": "object",
                "title": name,
                "properties": {"checker": {"const": name}, "params": params},
                "required": ["checker"],
                "additionalProperties": False,
            }
        )
    defs["FmtSpec"] = {
        "title": "FmtSpec",
        "description": "A catalogue checker and its parameters.",
        "oneOf": variants,
    }
    ignored = {"type": "string", "description": "computed content hash; ignored when loading"}
    defs["Rule"]["properties"]["version"] = ignored
    schema["properties"]["version"] = ignored
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "docket rule set"
    return schema


def schema_text() -> str:
    """:func:`rules_json_schema` as stable, indented JSON (the committed docs file)."""
    return json.dumps(rules_json_schema(), indent=2, sort_keys=True) + "\n"
