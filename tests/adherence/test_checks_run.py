"""run_fmt: scopes, incremental turn selection, span mapping, and checker failures."""

from __future__ import annotations

import pytest

from docket.adherence.checks import CheckOutcome
from docket.adherence.checks.base import CATALOGUE, Checker, Params
from docket.adherence.record import Record, Turn
from docket.adherence.rules import Rule
from docket.adherence.verify.fmt import run_fmt
from docket.errors import ConfigError

U, A = "user", "assistant"
RECORD = Record(
    id="r1",
    turns=[
        Turn(role=U, text="Hi, my train was cancelled."),
        Turn(role=A, text="Sorry to hear that. See https://rail.example.com for refunds."),
        Turn(role=U, text="Ok."),
        Turn(role=A, text="Anything else?"),
    ],
    fields={"summary": "Refund for a cancelled train, see www.example.org"},
)


def rule(scope: dict, checker: str, params: dict, tier: str = "fmt") -> Rule:
    return Rule(
        id="x", text="t", tier=tier, scope=scope, check={"checker": checker, "params": params}
    )


def test_each_turn_reports_the_first_failing_turn_and_its_span() -> None:
    outcome = run_fmt(rule({"kind": "each_turn"}, "urls", {"present": False}), RECORD)
    assert not outcome.passed
    assert outcome.turn == 1
    assert RECORD.turns[1].text[slice(*outcome.span)] == "https://rail.example.com"


def test_role_scope_checks_only_that_role() -> None:
    min_words = rule({"kind": "role", "role": U}, "word_count", {"min": 2})
    assert run_fmt(min_words, RECORD).turn == 2
    assert run_fmt(rule({"kind": "role", "role": A}, "word_count", {"min": 2}), RECORD).passed


def test_turn_index_restricts_per_turn_scopes() -> None:
    no_urls = rule({"kind": "each_turn"}, "urls", {"present": False})
    assert run_fmt(no_urls, RECORD, turn_index=3).passed
    assert not run_fmt(no_urls, RECORD, turn_index=1).passed
    user_rule = rule({"kind": "role", "role": U}, "word_count", {"min": 2})
    outcome = run_fmt(user_rule, RECORD, turn_index=1)  # an assistant turn: nothing to check
    assert outcome.passed and outcome.explanation.startswith("not applicable")


def test_last_turn_scope() -> None:
    question = rule({"kind": "last_turn"}, "ends_with", {"text": "?"})
    assert run_fmt(question, RECORD).passed
    assert run_fmt(question, RECORD).turn == 3
    short = RECORD.model_copy(update={"turns": RECORD.turns[:3]})
    assert not run_fmt(question, short).passed
    assert run_fmt(question, RECORD, turn_index=2).explanation.startswith("not applicable")


def test_record_scope_maps_the_span_back_to_its_turn() -> None:
    outcome = run_fmt(
        rule({"kind": "record"}, "keywords_forbidden", {"keywords": ["refunds"]}), RECORD
    )
    assert not outcome.passed and outcome.turn == 1
    assert RECORD.turns[1].text[slice(*outcome.span)] == "refunds"


def test_record_scope_counts_over_all_turns() -> None:
    assert not run_fmt(rule({"kind": "record"}, "word_count", {"max": 15}), RECORD).passed
    assert run_fmt(rule({"kind": "record"}, "word_count", {"max": 30}), RECORD).passed


def test_field_scope_and_missing_field() -> None:
    in_field = run_fmt(
        rule({"kind": "field", "field": "summary"}, "urls", {"present": False}), RECORD
    )
    assert not in_field.passed and in_field.turn is None
    assert RECORD.fields["summary"][slice(*in_field.span)] == "www.example.org"
    missing = run_fmt(rule({"kind": "field", "field": "persona"}, "word_count", {"min": 1}), RECORD)
    assert not missing.passed and "missing" in missing.explanation


def test_record_level_checker_gets_the_record() -> None:
    outcome = run_fmt(rule({"kind": "record"}, "turn_count", {"max": 3}), RECORD)
    assert not outcome.passed and outcome.turn == 3


def test_a_raising_checker_becomes_a_failed_outcome() -> None:
    def broken(text: str, params: Params) -> CheckOutcome:
        raise RuntimeError("boom")

    CATALOGUE["_broken"] = Checker("_broken", "text", Params, "always raises", broken)
    try:
        outcome = run_fmt(rule({"kind": "each_turn"}, "_broken", {}), RECORD)
    finally:
        del CATALOGUE["_broken"]
    # A checker that raises decides nothing: undecided with the reason (needs_review).
    assert not outcome.passed and "RuntimeError: boom" in outcome.undecided


def test_run_fmt_refuses_a_rule_without_check() -> None:
    with pytest.raises(ConfigError, match="no fmt check"):
        run_fmt(Rule(id="s", text="polite", tier="sub"), RECORD)


def test_empty_record_passes_vacuously_for_turn_scopes() -> None:
    empty = Record(id="e")
    assert run_fmt(rule({"kind": "each_turn"}, "urls", {"present": False}), empty).passed
    assert run_fmt(rule({"kind": "record"}, "role_alternation", {}), empty).passed
