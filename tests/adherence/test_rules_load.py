"""Rule files: loading, error messages, round trip, versions, JSON schema; JSONL records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docket.adherence.record import Record, read_records
from docket.adherence.rules import (
    Rule,
    RuleSet,
    RulesFileError,
    dump_rules,
    load_rules,
    rules_json_schema,
    schema_text,
)
from docket.errors import ConfigError, InputError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "sop" / "rules.yaml"

GOOD_RULE = """\
  - id: R1
    text: Each assistant turn has at most 120 words.
    tier: fmt
    scope: {kind: role, role: assistant}
    check: {checker: word_count, params: {max: 120}}
"""


def write(tmp_path: Path, body: str, name: str = "rules.yaml") -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


def test_example_rule_set_loads_with_the_re_ad_eval_mix() -> None:
    ruleset = load_rules(EXAMPLE)
    assert ruleset.tier_counts() == {"fmt": 8, "sim": 5, "sub": 7}
    assert all(rule.source is not None for rule in ruleset.rules)
    assert ruleset.get("no-urls").fmt_params.present is False


def test_round_trip_keeps_content_and_version(tmp_path: Path) -> None:
    ruleset = load_rules(EXAMPLE)
    dump_rules(ruleset, tmp_path / "copy.yaml")
    again = load_rules(tmp_path / "copy.yaml")
    assert again == ruleset and again.version == ruleset.version
    assert "version" not in (tmp_path / "copy.yaml").read_text()


def test_versions_follow_content_not_id_or_source() -> None:
    rule = Rule(
        id="a", text="No URLs.", tier="fmt", check={"checker": "urls", "params": {"present": False}}
    )
    renamed = rule.model_copy(update={"id": "b"})
    assert Rule.model_validate(renamed.model_dump()).version == rule.version
    edited = Rule.model_validate({**rule.model_dump(), "text": "No links."})
    assert edited.version != rule.version
    reparam = Rule.model_validate(
        {**rule.model_dump(), "check": {"checker": "urls", "params": {"present": True}}}
    )
    assert reparam.version != rule.version
    first = RuleSet(name="s", rules=[rule, edited.model_copy(update={"id": "c"})])
    swapped = RuleSet(name="s", rules=list(reversed(first.rules)))
    assert first.version != swapped.version


def test_a_stale_version_in_the_file_is_ignored(tmp_path: Path) -> None:
    path = write(tmp_path, "name: s\nversion: bogus\nrules:\n" + GOOD_RULE + "    version: bogus\n")
    ruleset = load_rules(path)
    assert ruleset.rules[0].version != "bogus" and ruleset.version != "bogus"


@pytest.mark.parametrize(
    ("rule_yaml", "expected"),
    [
        (
            "  - {id: R9, text: t, tier: fmt, check: {checker: word_cnt, params: {max: 3}}}\n",
            ["rules[1] (id 'R9').check", "unknown checker 'word_cnt'"],
        ),
        (
            "  - {id: R9, text: t, tier: fmt, check: {checker: word_count, params: {maximum: 3}}}\n",
            ["rules[1] (id 'R9').check", "checker 'word_count'", "unknown parameter 'maximum'"],
        ),
        (
            "  - {id: R9, text: t, tier: fmt, check: {checker: word_count, params: {max: -1}}}\n",
            ["rules[1] (id 'R9').check", "checker 'word_count'", "counts cannot be negative"],
        ),
        ("  - {id: R9, text: t, tier: fmt}\n", ["rules[1] (id 'R9')", "needs a 'check'"]),
        (
            "  - {id: R9, text: t, tier: sim, check: {checker: urls, params: {present: false}}}\n",
            ["only 'fmt' rules have a 'check'"],
        ),
        (
            "  - {id: R9, text: t, tier: hard}\n",
            ["rules[1] (id 'R9').tier", "'fmt', 'sim' or 'sub'"],
        ),
        (
            "  - {id: R9, text: t, tier: sub, scope: {kind: role}}\n",
            ["rules[1] (id 'R9').scope", "'role' is required"],
        ),
        (
            "  - {id: R9, text: t, tier: sub, colour: red}\n",
            ["rules[1] (id 'R9').colour", "Extra inputs"],
        ),
        ("  - {text: t, tier: sub}\n", ["rules[1].id", "Field required"]),
        ("  - {id: R1, text: again, tier: sub}\n", ["rules[1].id", "duplicate rule id 'R1'"]),
        (
            "  - {id: R9, text: t, tier: fmt, scope: {kind: each_turn}, check: {checker: turn_count, params: {max: 3}}}\n",
            ["checks whole records", "scope is 'each_turn'"],
        ),
        ("  - just a string\n", ["rules[1]", "a rule must be a mapping"]),
    ],
)
def test_errors_name_file_line_rule_and_field(
    tmp_path: Path, rule_yaml: str, expected: list[str]
) -> None:
    path = write(tmp_path, "name: s\nrules:\n" + GOOD_RULE + rule_yaml)
    with pytest.raises(RulesFileError) as info:
        load_rules(path)
    message = info.value.one_line()
    assert message.startswith(f"{path}:8: ")  # the second rule starts on line 8
    for part in expected:
        assert part in message
    assert isinstance(info.value, ConfigError) and isinstance(info.value, InputError)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("name: s\nrules: [\n", "not valid YAML"),
        ("- a\n- b\n", "expected a mapping with a 'rules' list"),
        ("name: s\nrulez: []\n", "expected a mapping with a 'rules' list"),
        ("name: s\nrules: []\nextra: 1\n", "unknown top-level key(s) ['extra']"),
    ],
)
def test_file_level_errors(tmp_path: Path, body: str, expected: str) -> None:
    with pytest.raises(RulesFileError) as info:
        load_rules(write(tmp_path, body))
    assert expected in info.value.message


def test_yaml_syntax_error_has_a_line(tmp_path: Path) -> None:
    with pytest.raises(RulesFileError) as info:
        load_rules(write(tmp_path, "name: s\nrules:\n  - id: R1\n    text: [unclosed\n"))
    assert info.value.line is not None and info.value.line >= 4


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(RulesFileError, match="not found"):
        load_rules(tmp_path / "nope.yaml")


def test_committed_schema_is_current_and_lists_every_checker() -> None:
    committed = (ROOT / "docs" / "rules.schema.json").read_text()
    assert committed == schema_text()
    variants = rules_json_schema()["$defs"]["FmtSpec"]["oneOf"]
    from docket.adherence.checks import CATALOGUE

    assert {v["properties"]["checker"]["const"] for v in variants} == set(CATALOGUE)
    word_count = next(v for v in variants if v["title"] == "word_count")
    assert set(word_count["properties"]["params"]["properties"]) == {
        "min",
        "max",
        "exact",
        "joined",
    }
    json_schema = next(v for v in variants if v["title"] == "json_schema")
    assert "schema" in json_schema["properties"]["params"]["properties"]


# --- records -------------------------------------------------------------------------


def test_read_records_example() -> None:
    records = read_records(ROOT / "examples" / "sop" / "dialogues.jsonl")
    assert len(records) >= 5 and all(isinstance(r, Record) for r in records)
    assert records[0].turns[0].role == "user" and "scenario" in records[0].fields


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("{not json", "data.jsonl:2: not valid JSON"),
        ("[1, 2]", "data.jsonl:2: a record must be a JSON object"),
        ('{"turns": []}', "data.jsonl:2: field 'id': Field required"),
        (
            '{"id": "b", "turns": [{"role": "user"}]}',
            "data.jsonl:2: field 'turns.0.text': Field required",
        ),
        ('{"id": "b", "turns": [], "fields": {"n": 3}}', "data.jsonl:2: field 'fields.n'"),
        ('{"id": "a", "turns": []}', "data.jsonl:2: field 'id': duplicate id 'a'"),
    ],
)
def test_bad_record_lines_name_file_line_and_field(
    tmp_path: Path, line: str, expected: str
) -> None:
    path = tmp_path / "data.jsonl"
    path.write_text(
        json.dumps({"id": "a", "turns": [{"role": "user", "text": "hi"}]}) + "\n" + line + "\n"
    )
    with pytest.raises(InputError) as info:
        read_records(path)
    assert str(info.value).startswith(str(path)) and expected in str(info.value)


def test_model_copy_with_update_revalidates() -> None:
    rule = Rule(
        id="a", text="Short.", tier="fmt", check={"checker": "word_count", "params": {"max": 5}}
    )
    changed = rule.model_copy(update={"check": {"checker": "word_count", "params": {"max": 9}}})
    assert changed.fmt_params.max == 9 and changed.version != rule.version
    with pytest.raises(ConfigError, match="unknown checker"):
        rule.model_copy(update={"check": {"checker": "nope", "params": {}}})
    assert rule.model_copy().version == rule.version
    ruleset = RuleSet(name="s", rules=[rule])
    assert ruleset.model_copy(update={"rules": [changed]}).version != ruleset.version
