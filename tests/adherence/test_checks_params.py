"""Parameter validation, the regex guard and the JSON-schema subset."""

from __future__ import annotations

import pytest

from docket.adherence.checks import CATALOGUE, validate_params
from docket.adherence.checks.jsonschema_lite import check_schema, first_error
from docket.adherence.checks.safe_regex import MAX_TEXT_CHARS, RegexTimeout, check_pattern
from docket.adherence.record import Record, Turn
from docket.adherence.rules import Rule
from docket.adherence.verify import Submission
from docket.adherence.verify.fmt import check_fmt, run_fmt
from docket.errors import ConfigError


def test_unknown_checker_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="unknown checker 'word_cnt'") as info:
        validate_params("word_cnt", {})
    assert "word_count" in info.value.hint


@pytest.mark.parametrize(
    ("checker", "params", "message"),
    [
        ("word_count", {"maximum": 3}, "unknown parameter 'maximum'"),
        ("word_count", {}, "give at least one of 'min', 'max' or 'exact'"),
        ("word_count", {"min": 5, "max": 2}, "'min' is larger than 'max'"),
        ("word_count", {"max": "many"}, "parameter 'max'"),
        ("urls", {}, "parameter 'present' is required"),
        (
            "letter_count",
            {"letter": "ab", "min": 1},
            "parameter 'letter': must be a single character",
        ),
        ("keywords_required", {"keywords": []}, "parameter 'keywords'"),
        ("keywords_forbidden", {"keywords": [" "]}, "none of them empty"),
        ("role_alternation", {"roles": ["user", "user"]}, "must not repeat"),
        ("role_alternation", {"first_role": "system"}, "'first_role' must be one of"),
        ("regex_must_match", {"pattern": "(a+)+$"}, "nested repetition"),
        ("regex_must_match", {"pattern": "([a-z]"}, "invalid regular expression"),
        ("json_schema", {"schema": {"$ref": "#/x"}}, "unsupported schema keyword"),
        ("json_schema", {"schema": {"type": "integr"}}, "unknown type 'integr'"),
        ("letter_case", {"case": "camel"}, "parameter 'case'"),
    ],
)
def test_bad_params_name_checker_and_parameter(checker: str, params: dict, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        validate_params(checker, params)
    assert f"checker '{checker}'" in info.value.message
    assert message in info.value.message


@pytest.mark.parametrize(
    "pattern", [r"(a+)+b", r"(\w*)*", r"(x+y?){2,}", r"((ab)+c)*", r"(?:a|b+)+", r"(a{2,5})+"]
)
def test_catastrophic_patterns_are_refused(pattern: str) -> None:
    with pytest.raises(ValueError, match="nested repetition"):
        check_pattern(pattern)


@pytest.mark.parametrize(
    "pattern", [r"(ab)+", r"[(+*]+", r"\(a+\)+", r"(a+)?", r"^\d{3}-\d{4}$", r"(?P<w>\w+) (?P=w)"]
)
def test_ordinary_patterns_are_accepted(pattern: str) -> None:
    check_pattern(pattern)


def test_overlong_pattern_is_refused() -> None:
    with pytest.raises(ValueError, match="longer than"):
        check_pattern("a" * 301)


def test_regex_runs_on_bounded_text() -> None:
    text = "x" * (MAX_TEXT_CHARS + 10) + "needle"
    outcome = CATALOGUE["regex_must_match"].run(text, {"pattern": "needle"})
    assert not outcome.passed and "first 20000 characters" in outcome.explanation


@pytest.mark.parametrize(
    ("pattern", "text"), [(r"(x|xx)+y", "x" * 80), (r"(a|aa)+$", "a" * 80 + "!")]
)
def test_slow_patterns_that_pass_the_screen_time_out_undecided(pattern: str, text: str) -> None:
    # Without the engine timeout these run for minutes on this text. A timeout decides
    # nothing: the checker raises, and the rule becomes needs_review with the reason.
    with pytest.raises(RegexTimeout, match="took longer than"):
        CATALOGUE["regex_must_match"].run(text, {"pattern": pattern})
    rule = Rule(
        id="R",
        text="matches",
        tier="fmt",
        scope={"kind": "last_turn"},
        check={"checker": "regex_must_match", "params": {"pattern": pattern}},
    )
    record = Record(id="r", turns=[Turn(role="user", text=text)])
    outcome = run_fmt(rule, record)
    assert not outcome.passed and "took longer than" in outcome.undecided
    result = check_fmt(rule, Submission(record))
    assert result.status == "needs_review" and "took longer than" in result.error


SCHEMA = {
    "type": "object",
    "required": ["name", "tags"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "minLength": 2, "pattern": "^[A-Z]"},
        "age": {"type": "integer", "minimum": 0, "exclusiveMaximum": 150},
        "tags": {
            "type": "array",
            "items": {"enum": ["a", "b"]},
            "uniqueItems": True,
            "maxItems": 2,
        },
        "kind": {"oneOf": [{"const": "x"}, {"type": "number"}]},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "flag": {"not": {"const": True}},
    },
}


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ({"name": "Al", "tags": ["a"]}, None),
        ({"name": "Al", "tags": ["a"], "age": 3, "kind": 2.5, "note": None, "flag": False}, None),
        ({"tags": []}, "/: missing required property 'name'"),
        ({"name": "al", "tags": []}, "/name: does not match /^[A-Z]/"),
        ({"name": "A", "tags": []}, "/name: 1 characters, at least 2 required"),
        ({"name": "Al", "tags": [], "age": 1.5}, "/age: expected integer, got number"),
        ({"name": "Al", "tags": [], "age": 150}, "/age: 150 is not < 150"),
        ({"name": "Al", "tags": ["a", "a"]}, "/tags: items must be unique"),
        ({"name": "Al", "tags": ["c"]}, "/tags/0: must be one of ['a', 'b']"),
        ({"name": "Al", "tags": ["a", "b", "a"]}, "/tags: 3 items, at most 2 allowed"),
        (
            {"name": "Al", "tags": [], "kind": "y"},
            "/kind: matches 0 of the oneOf schemas, exactly 1 required",
        ),
        ({"name": "Al", "tags": [], "note": 3}, "/note: matches none of the anyOf schemas"),
        ({"name": "Al", "tags": [], "flag": True}, "/flag: must not match the 'not' schema"),
        ({"name": "Al", "tags": [], "extra": 1}, "/: property 'extra' is not allowed"),
        ([1], "/: expected object, got array"),
        ({"name": "Al", "tags": [], "age": True}, "/age: expected integer, got boolean"),
    ],
)
def test_json_schema_subset(value, error) -> None:
    check_schema(SCHEMA)
    assert first_error(value, SCHEMA) == error


def test_json_schema_checker_reports_the_path() -> None:
    outcome = CATALOGUE["json_schema"].run('{"name": "al", "tags": []}', {"schema": SCHEMA})
    assert not outcome.passed and "/name" in outcome.explanation
