"""RE-AD-Eval fmt mutation operators: each breaks exactly its intended rule."""

from __future__ import annotations

import random

import pytest

from docket.adherence.checks import CATALOGUE
from docket.adherence.record import Record, Turn
from docket.adherence.rules import Rule
from docket.adherence.verify.fmt import run_fmt
from docket.readeval import (
    DEFAULT_PERSONAS,
    OPERATORS,
    MutationContext,
    checkers_without_operator,
    fmt_failures,
    operators_for,
)
from docket.readeval.mutations import apply, slots
from tests.adherence.bench_helpers import clean_seeds, example_rules

RULES = example_rules()
SEEDS = clean_seeds()
EXAMPLE_CASES = [
    pytest.param(rule, op, id=op.name + "@" + rule.id)
    for rule in RULES.by_tier("fmt")
    for op in operators_for(rule)
]


def _mutations(op, rule, record, draws=6):  # type: ignore[no-untyped-def]
    """Every applied mutation over all slots, for each persona and a few seeds."""
    places = slots(rule, record) if op.level == "text" else [("record", None)]
    for persona in DEFAULT_PERSONAS:
        for draw in range(draws):
            for place in places:
                ctx = MutationContext(random.Random(draw), persona)
                mutation = apply(op, rule, record, place, ctx)
                if mutation is not None:
                    yield mutation


def test_every_example_fmt_rule_has_an_operator() -> None:
    assert all(operators_for(rule) for rule in RULES.by_tier("fmt"))
    assert len(EXAMPLE_CASES) >= 8


@pytest.mark.parametrize(("rule", "op"), EXAMPLE_CASES)
def test_operator_breaks_exactly_its_rule_on_the_clean_dialogues(rule, op) -> None:  # type: ignore[no-untyped-def]
    exact = 0
    for seed in SEEDS:
        assert fmt_failures(RULES, seed) == {}
        for mutation in _mutations(op, rule, seed):
            failed = fmt_failures(RULES, mutation.record)
            assert rule.id in failed, (op.name, mutation.record)  # the intended rule always breaks
            exact += set(failed) == {rule.id}
    assert exact > 0, f"{op.name} never produced exactly the violation of {rule.id}"


OTHER_CHECKERS = [
    ("sentence_count", {"max": 3}, "One. Two here."),
    ("sentence_count", {"min": 2}, "One is here. Two is here. Three."),
    ("paragraph_count", {"max": 1}, "Just one paragraph."),
    ("paragraph_count", {"min": 2}, "First part.\n\nSecond part."),
    ("paragraph_count", {"max": 2, "separator": "divider"}, "First.\n***\nSecond."),
    ("char_count", {"max": 40}, "Short text."),
    ("char_count", {"min": 5, "spaces": False}, "Longer text here."),
    ("letter_count", {"letter": "e", "max": 3}, "A cat sat."),
    ("letter_count", {"letter": "a", "min": 2}, "A cat sat on a mat."),
    ("uppercase_word_count", {"max": 1}, "Hello there my good friend."),
    ("uppercase_word_count", {"min": 1}, "Hello THERE friend."),
    ("keywords_required", {"keywords": ["refund", "ticket"]}, "Your refund for the ticket."),
    ("keywords_required", {"keywords": ["refund", "ticket"], "mode": "any"}, "A refund now."),
    ("keywords_forbidden", {"keywords": ["damn"]}, "All is well. Thanks."),
    ("keyword_count", {"keyword": "train", "max": 1}, "The train is late."),
    ("keyword_count", {"keyword": "train", "min": 1}, "The train is late."),
    ("regex_must_match", {"pattern": r"NR\d{5}"}, "Booking NR12345 is fine."),
    ("starts_with", {"text": "Hello"}, "Hello, how can I help?"),
    ("ends_with", {"text": "Goodbye!"}, "Have a nice day. Goodbye!"),
    ("letter_case", {"case": "lower"}, "all lower case here."),
    ("letter_case", {"case": "upper"}, "ALL UPPER CASE HERE."),
    ("letter_case", {"case": "title"}, "A Title Of The Text"),
    ("punctuation_banned", {"chars": "!"}, "No exclamation here."),
    ("bullet_list", {"max": 1}, "Text\n- one item"),
    ("bullet_list", {"min": 1}, "Text\n- one item\n- two"),
    ("numbered_list", {"max": 1}, "Text\n1. one"),
    ("numbered_list", {"min": 1}, "Text\n1. one"),
    ("numbered_list", {"min": 1, "sequential": True}, "1. one\n2. two"),
    ("highlighted_sections", {"max": 1}, "Some **bold** text here."),
    ("highlighted_sections", {"min": 1}, "Some **bold** text here."),
    ("placeholders", {"max": 0}, "Dear customer, thanks."),
    ("placeholders", {"min": 1}, "Dear [name], thanks."),
    ("json_valid", {}, '{"a": 1}'),
    ("json_schema", {"schema": {"type": "object"}}, '{"a": 1}'),
    ("urls", {"present": False}, "Nothing to see. Really."),
    ("urls", {"present": True}, "See https://example.com/x now."),
    ("emails", {"present": False}, "Write to us. Thanks."),
    ("emails", {"present": True}, "Write to a@example.com now."),
    ("title", {}, "<<A Day Out>>\nWe went to the sea."),
    ("section_count", {"max": 2}, "SECTION 1\nOne.\nSECTION 2\nTwo."),
    ("section_count", {"min": 2}, "SECTION 1\nOne.\nSECTION 2\nTwo."),
    ("separated_responses", {}, "First answer.\n******\nSecond answer."),
    ("paragraph_first_word", {"paragraph": 2, "word": "then"}, "First.\n\nThen more."),
    ("postscript", {}, "Thanks for reading.\nP.S. See you soon."),
    ("wrapped_in", {}, '"All of it in quotes."'),
    ("phone_numbers", {"present": False}, "Call us. Thanks."),
    ("phone_numbers", {"present": True}, "Call 0161 496 0734 now."),
]


def _text_rule(checker: str, params: dict) -> Rule:  # type: ignore[type-arg]
    return Rule(
        id="R",
        text="t",
        tier="fmt",
        scope={"kind": "each_turn"},
        check={"checker": checker, "params": params},
    )


@pytest.mark.parametrize(("checker", "params", "text"), OTHER_CHECKERS)
def test_text_operators_of_the_whole_catalogue_break_their_checker(checker, params, text) -> None:  # type: ignore[no-untyped-def]
    rule = _text_rule(checker, params)
    record = Record(id="r", turns=[Turn(role="user", text=text)])
    assert run_fmt(rule, record).passed, "the test input must pass first"
    ops = operators_for(rule)
    assert ops, f"no operator for {checker} {params}"
    for op in ops:
        made = list(_mutations(op, rule, record, draws=2))
        assert made, f"{op.name} never applied"
        for mutation in made:
            assert not run_fmt(rule, mutation.record).passed, (op.name, mutation.record)


RECORD = Record(
    id="r",
    fields={"scenario": "a trip", "goal": "refund"},
    turns=[
        Turn(role="user" if i % 2 == 0 else "assistant", text=f"Turn number {i} of the dialogue.")
        for i in range(6)
    ],
)
RECORD_CASES = [
    ("turn_count", {"max": 8}),
    ("turn_count", {"min": 5}),
    ("turn_count", {"max": 3, "role": "user"}),
    ("role_alternation", {"first_role": "user"}),
    ("no_repeated_turns", {}),
    ("no_repeated_turns", {"threshold": 0.8, "role": "assistant"}),
    ("fields_required", {"names": ["scenario", "goal"]}),
]


@pytest.mark.parametrize(("checker", "params"), RECORD_CASES)
def test_record_operators_break_their_checker(checker, params) -> None:  # type: ignore[no-untyped-def]
    rule = Rule(id="R", text="t", tier="fmt", check={"checker": checker, "params": params})
    assert run_fmt(rule, RECORD).passed
    for op in operators_for(rule):
        made = list(_mutations(op, rule, RECORD, draws=3))
        assert made, f"{op.name} never applied"
        assert all(not run_fmt(rule, m.record).passed for m in made), op.name


def test_only_arbitrary_regex_matching_and_language_lack_an_operator() -> None:
    # A pattern to avoid and a language to write in have no generic way to break them.
    lacking = ["regex_must_not_match", "response_language"]
    assert checkers_without_operator() == lacking
    assert set(OPERATORS) == set(CATALOGUE) - set(lacking)


def test_a_mutation_is_reproducible_from_its_seed() -> None:
    rule = RULES.get("assistant-max-words")
    (op,) = operators_for(rule)
    made = [
        apply(
            op, rule, SEEDS[0], ("turn", 1), MutationContext(random.Random(7), DEFAULT_PERSONAS[2])
        )
        for _ in range(2)
    ]
    assert made[0] == made[1]
    other = apply(
        op, rule, SEEDS[0], ("turn", 1), MutationContext(random.Random(8), DEFAULT_PERSONAS[2])
    )
    assert other != made[0]
