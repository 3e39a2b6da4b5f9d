"""Every checker in the catalogue, with at least one passing and one failing case."""

from __future__ import annotations

import pytest

from docket.adherence.checks import CATALOGUE, validate_params
from docket.adherence.record import Record, Turn


def dialogue(*pairs: tuple[str, str], **fields: str) -> Record:
    return Record(id="r", turns=[Turn(role=r, text=t) for r, t in pairs], fields=fields)


U, A = "user", "assistant"
GOOD = dialogue(
    (U, "Hi, I need help."), (A, "Hello! Sure."), (U, "Thanks a lot."), (A, "Bye."), scenario="x"
)

# (checker, params, target, passed, span or None when not asserted)
CASES = [
    ("word_count", {"max": 3}, "one two three", True, None),
    ("word_count", {"max": 3}, "one two three four five", False, (14, 23)),
    ("word_count", {"min": 2}, "single", False, None),
    ("word_count", {"exact": 2}, "don't stop-now", True, None),
    ("sentence_count", {"max": 2}, "Dr. Smith came. He left!", True, None),
    ("sentence_count", {"max": 1}, "One. Two? Three!", False, (5, 16)),
    ("sentence_count", {"min": 2}, "Only one sentence here", False, None),
    (
        "sentence_count",
        {"exact": 2},
        "The U.S. team met at 5 p.m. (e.g. Bob). It went well.",
        True,
        None,
    ),
    ("paragraph_count", {"exact": 2}, "First para.\n\nSecond para.", True, None),
    ("paragraph_count", {"max": 1}, "A\n\n\nB\n  \nC", False, (4, 10)),
    ("paragraph_count", {"exact": 2, "separator": "divider"}, "A\n***\nB", True, None),
    ("char_count", {"max": 5}, "abcde", True, None),
    ("char_count", {"max": 5}, "abcdefg", False, (5, 7)),
    ("char_count", {"max": 3, "spaces": False}, "a b c", True, None),
    ("letter_count", {"letter": "e", "min": 3}, "Eve sees", True, None),
    ("letter_count", {"letter": "z", "min": 1}, "no such letter", False, None),
    ("uppercase_word_count", {"max": 1}, "NASA is OK", False, (8, 10)),
    ("uppercase_word_count", {"max": 1}, "NASA is great, I think", True, None),
    (
        "keywords_required",
        {"keywords": ["refund", "ticket"]},
        "Your Refund for the ticket.",
        True,
        None,
    ),
    (
        "keywords_required",
        {"keywords": ["refund", "ticket"]},
        "Your refunds are ready.",
        False,
        None,
    ),
    ("keywords_required", {"keywords": ["a", "b"], "mode": "any"}, "only b here", True, None),
    ("keywords_required", {"keywords": ["Refund"], "case_sensitive": True}, "refund", False, None),
    ("keywords_forbidden", {"keywords": ["damn", "hell"]}, "What the Hell, damn.", False, (9, 13)),
    ("keywords_forbidden", {"keywords": ["hell"]}, "Hello there", True, None),
    (
        "keywords_forbidden",
        {"keywords": ["hell"], "whole_word": False},
        "Hello there",
        False,
        (0, 4),
    ),
    ("keyword_count", {"keyword": "sorry", "max": 1}, "Sorry. So sorry!", False, (10, 15)),
    ("keyword_count", {"keyword": "sorry", "min": 1, "max": 2}, "Sorry about that.", True, None),
    ("regex_must_match", {"pattern": r"NR\d{5}"}, "booking NR48213", True, None),
    ("regex_must_match", {"pattern": r"^Dear ", "multiline": True}, "Hi\nHello", False, None),
    ("regex_must_not_match", {"pattern": r"\d{4}"}, "call 5551234", False, (5, 9)),
    ("regex_must_not_match", {"pattern": r"lol", "ignore_case": True}, "fine", True, None),
    ("starts_with", {"text": "Hello"}, "  Hello there", True, None),
    ("starts_with", {"text": "Hello"}, "Hi there", False, (0, 5)),
    ("starts_with", {"text": "hello", "case_sensitive": False}, "HELLO", True, None),
    (
        "ends_with",
        {"text": "Is there anything else?"},
        "Done. Is there anything else?\n",
        True,
        None,
    ),
    ("ends_with", {"text": "Goodbye."}, "See you soon.", False, (5, 13)),
    ("letter_case", {"case": "lower"}, "all lower, 123!", True, None),
    ("letter_case", {"case": "lower"}, "all lower But", False, (10, 11)),
    ("letter_case", {"case": "upper"}, "SHOUT it", False, (6, 7)),
    ("letter_case", {"case": "title"}, "The Lord of the Rings", True, None),
    ("letter_case", {"case": "title"}, "The lord of the Rings", False, (4, 8)),
    ("punctuation_banned", {"chars": ","}, "No commas here.", True, None),
    ("punctuation_banned", {"chars": ",!"}, "Wow! Great, thanks", False, (3, 4)),
    ("bullet_list", {"exact": 2}, "Items:\n- one\n* two\nend", True, None),
    ("bullet_list", {"min": 3}, "- one\n- two", False, None),
    ("bullet_list", {"max": 1}, "- one\n- two", False, (6, 11)),
    ("numbered_list", {"min": 2}, "1. first\n2) second", True, None),
    ("numbered_list", {"min": 2, "sequential": True}, "1. first\n3. third", False, (9, 10)),
    ("numbered_list", {"exact": 1}, "no list", False, None),
    ("highlighted_sections", {"min": 2}, "*one* and **two**", True, None),
    ("highlighted_sections", {"min": 1}, "* a bullet, not a highlight\n2 * 3 * 4", False, None),
    ("placeholders", {"max": 0}, "Hello [name], see [docs](http://x)", False, (6, 12)),
    ("placeholders", {"max": 0}, "see [docs](http://x)", True, None),
    ("placeholders", {"min": 2}, "[a] and [b]", True, None),
    ("json_valid", {}, '{"a": [1, 2]}', True, None),
    ("json_valid", {}, '```json\n{"a": 1}\n```', True, None),
    ("json_valid", {}, '{"a": 1,}', False, (8, 9)),
    ("json_schema", {"schema": {"type": "object", "required": ["a"]}}, '{"a": 1}', True, None),
    ("json_schema", {"schema": {"type": "object", "required": ["a"]}}, '{"b": 1}', False, None),
    ("json_schema", {"schema": {"type": "array"}}, "not json", False, (0, 1)),
    ("urls", {"present": False}, "Visit https://example.com/x today", False, (6, 27)),
    ("urls", {"present": False}, "see northwind.co.uk for times", False, (4, 19)),
    ("urls", {"present": False}, "e.g. this, i.e. that; mail a@b.com", True, None),
    ("urls", {"present": True}, "www.example.org", True, None),
    ("emails", {"present": False}, "write to help@rail.example.com now", False, (9, 30)),
    ("emails", {"present": True}, "no address", False, None),
    ("emails", {"present": False}, "no address, just @handles and a.b", True, None),
    ("phone_numbers", {"present": False}, "Call +44 20 7946 0958.", False, (5, 21)),
    ("phone_numbers", {"present": False}, "On 2024-05-01 at 17:40, 3 bikes, ref 1234.", True, None),
    ("phone_numbers", {"present": True}, "(555) 123-4567", True, None),
    ("turn_count", {"min": 4, "max": 12}, GOOD, True, None),
    ("turn_count", {"max": 1, "role": "user"}, GOOD, False, None),
    ("role_alternation", {"first_role": "user"}, GOOD, True, None),
    ("role_alternation", {"first_role": "assistant"}, GOOD, False, None),
    ("role_alternation", {}, dialogue((U, "a"), (U, "b")), False, None),
    ("no_repeated_turns", {}, GOOD, True, None),
    (
        "no_repeated_turns",
        {},
        dialogue((U, "Hi there!"), (A, "ok"), (U, "hi, THERE")),
        False,
        (0, 9),
    ),
    ("no_repeated_turns", {"threshold": 0.7}, dialogue((A, "a b c d"), (A, "a b c e")), True, None),
    (
        "no_repeated_turns",
        {"threshold": 0.6},
        dialogue((A, "a b c d"), (A, "a b c e")),
        False,
        None,
    ),
    ("fields_required", {"names": ["scenario"]}, GOOD, True, None),
    ("fields_required", {"names": ["persona"]}, GOOD, False, None),
    ("fields_required", {"names": ["scenario"]}, dialogue(scenario="  "), False, None),
    ("title", {}, "<<A Day at Sea>>\nWe sailed.", True, None),
    ("title", {}, "<< >> and <<\nno>>", False, None),
    ("section_count", {"min": 2}, "SECTION 1\nOne.\nSECTION 2\nTwo.", True, None),
    ("section_count", {"exact": 3}, "SECTION 1\nOne.\nSection 2\nTwo.", False, None),
    ("separated_responses", {}, "First answer.\n******\nSecond answer.", True, None),
    ("separated_responses", {}, "Same.\n******\nSame.", False, None),
    (
        "paragraph_first_word",
        {"paragraph": 2, "word": "then"},
        "A.\n\n'Then,' he said.",
        True,
        None,
    ),
    ("paragraph_first_word", {"paragraph": 2, "word": "then"}, "A.\n\nSo then.", False, (4, 6)),
    ("postscript", {"marker": "P.P.S"}, "Hi.\np. p. s. one more thing", True, None),
    ("postscript", {}, "Hi. There is no PS here.", False, None),
    ("wrapped_in", {}, ' "All quoted." ', True, None),
    ("wrapped_in", {}, '"Open only.', False, None),
    (
        "response_language",
        {"language": "fr"},
        "Bonjour, je voudrais un billet pour Paris.",
        True,
        None,
    ),
    (
        "response_language",
        {"language": "en"},
        "Bonjour, je voudrais un billet pour Paris.",
        False,
        None,
    ),
]


@pytest.mark.parametrize(("name", "params", "target", "passed", "span"), CASES)
def test_checker_case(name, params, target, passed, span) -> None:
    outcome = CATALOGUE[name].run(target, validate_params(name, params))
    assert outcome.passed is passed, outcome.explanation
    assert outcome.explanation
    if span is not None:
        assert outcome.span == span, (outcome.span, outcome.explanation)


def test_every_checker_has_a_passing_and_a_failing_case() -> None:
    passing = {name for name, _, _, ok, _ in CASES if ok}
    failing = {name for name, _, _, ok, _ in CASES if not ok}
    assert passing == set(CATALOGUE)
    assert failing == set(CATALOGUE)


def test_every_checker_is_documented_and_typed() -> None:
    for found in CATALOGUE.values():
        assert found.doc and found.level in ("text", "record")
        assert found.params.model_config.get("extra") == "forbid"


def test_failure_explanations_name_the_problem() -> None:
    outcome = CATALOGUE["word_count"].run("a b c d", {"max": 2})
    assert outcome.explanation == "too many words: 4 (allowed: at most 2)"
    outcome = CATALOGUE["role_alternation"].run(dialogue((U, "a"), (U, "b")), {})
    assert (outcome.turn, outcome.explanation) == (
        1,
        "turn 1 is by 'user' but 'assistant' was expected",
    )
