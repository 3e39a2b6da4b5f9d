"""Parsing the sim, sub and holistic replies: clear verdicts only, never a guessed pass."""

from __future__ import annotations

import pytest

from docket.adherence.verify.prompts import common_prefix_len, defuse
from docket.adherence.verify.replies import parse_holistic, parse_sim, parse_sub
from docket.errors import ParseError


@pytest.mark.parametrize("text", ["PASS", "pass", "**PASS**", "  PASS.\n", "Verdict: PASS"])
def test_sim_pass_variants(text: str) -> None:
    assert parse_sim(text).passed


def test_sim_fail_with_quote_and_fix() -> None:
    judgement = parse_sim('FAIL: greets nobody\nQUOTE: "Ok."\nFIX: start with Hello')
    assert (judgement.passed, judgement.reason, judgement.quote, judgement.fix) == (
        False,
        "greets nobody",
        "Ok.",
        "start with Hello",
    )


@pytest.mark.parametrize(
    "text", ["", "I think it passes", "The answer is PASS", "PASSED? maybe", "FAILURE"]
)
def test_sim_unclear_replies_raise(text: str) -> None:
    with pytest.raises(ParseError):
        parse_sim(text)


def test_sub_reasons_first_then_verdict() -> None:
    judgement = parse_sub(
        "REASONING: The reply is curt.\nIt ignores the user.\nVERDICT: FAIL\nQUOTE: none\nFIX: thank the user"
    )
    assert not judgement.passed
    assert judgement.reason == "The reply is curt. It ignores the user."
    assert (judgement.quote, judgement.fix) == ("", "thank the user")


def test_sub_contradicting_verdicts_raise() -> None:
    with pytest.raises(ParseError, match="both"):
        parse_sub("VERDICT: PASS\nVERDICT: FAIL")


@pytest.mark.parametrize(
    "text",
    [
        "VERDICT: PASS or VERDICT: FAIL",
        "VERDICT: PASS if the tone is kind",
        "PASS\nor\nFAIL: <reason>",
    ],
)
def test_copied_format_lines_are_not_verdicts(text: str) -> None:
    with pytest.raises(ParseError):
        parse_sub(text) if text.startswith("VERDICT") else parse_sim(text)


def test_sub_without_verdict_raises() -> None:
    with pytest.raises(ParseError):
        parse_sub("REASONING: it looks polite, so pass")


def test_holistic_reads_known_ids_and_ignores_others() -> None:
    verdicts = parse_holistic(
        "Here you go:\n[R1] PASS\n[R2] FAIL: too long\n[R9] FAIL: x\nR3: PASS", ["R1", "R2", "R3"]
    )
    assert {k: v.passed for k, v in verdicts.items()} == {"R1": True, "R2": False, "R3": True}
    assert verdicts["R2"].reason == "too long"


def test_holistic_pass_with_extra_text_is_not_a_verdict() -> None:
    verdicts = parse_holistic("[R1] PASS or FAIL: <reason>\n[R2] PASS.", ["R1", "R2"])
    assert set(verdicts) == {"R2"}


def test_holistic_without_any_rule_line_raises() -> None:
    with pytest.raises(ParseError):
        parse_holistic("All rules pass.", ["R1"])


def test_defuse_only_touches_our_tags() -> None:
    assert defuse("a </data> b <turn x> <b>bold</b>") == "a ‹/data> b ‹turn x> <b>bold</b>"


@pytest.mark.parametrize(
    ("a", "b", "n"), [("", "x", 0), ("abc", "abd", 2), ("same", "same", 4), ("ab", "abc", 2)]
)
def test_common_prefix_len(a: str, b: str, n: int) -> None:
    assert common_prefix_len(a, b) == n
