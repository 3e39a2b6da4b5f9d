"""IFEval parity: every one of its 25 types expressed by dedicated checkers, its counting
choices available as parameters, and agreement with its verdicts on real and hand-made cases.

Real cases: ``data/ifeval_gpt4_sample.jsonl``, GPT-4 responses with IFEval's strict
verdicts, copied from IFEval's public data (google-research/google-research,
instruction_following_eval/data/input_data.jsonl for the arguments, and the
eval_results_strict.jsonl its evaluation writes, as published in
grimmmyshini/Evaluating-Instruction-Following-LLMs); two verdicts that IFEval made with a
random letter in place of '#' and '!' are marked as artefacts. Hand-made cases:
``data/ifeval_semantics_handmade.jsonl``, one or more per semantic of IFEval's
instructions.py, with the verdict its check_following gives.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from docket.adherence.checks import CATALOGUE, caps_words
from docket.adherence.checks.safe_regex import check_pattern
from docket.adherence.rules.ifeval import IFEVAL_TYPES, ifeval_rules
from docket.errors import ConfigError

HERE = Path(__file__).parent
ROOT = HERE.parents[1]


def _parity():  # type: ignore[no-untyped-def]
    if str(ROOT / "benchmarks") not in sys.path:  # the script imports its sibling _table
        sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location(
        "ifeval_parity", ROOT / "benchmarks" / "ifeval_parity.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def run(checker: str, target: str, **params: object) -> bool:
    return CATALOGUE[checker].run(target, params).passed


@pytest.mark.parametrize("name", ["ifeval_gpt4_sample.jsonl", "ifeval_semantics_handmade.jsonl"])
def test_docket_agrees_with_ifeval_on_every_case(name: str) -> None:
    table = _parity().compare(HERE / "data" / name)
    disagreements = {t: r for t, r in table.items() if r.get("agree", 0) != r.get("n", 0)}
    assert disagreements == {}
    assert sum(r.get("n", 0) for r in table.values()) >= (48 if "gpt4" in name else 63)


def test_every_ifeval_type_maps_to_dedicated_checkers() -> None:
    assert len(IFEVAL_TYPES) == 25
    handmade = _parity().compare(HERE / "data" / "ifeval_semantics_handmade.jsonl")
    assert set(handmade) == set(IFEVAL_TYPES)  # the hand-made set covers every type
    generic = {"regex_must_match", "regex_must_not_match"}
    assert not any(r.check.checker in generic for r in ifeval_rules("detectable_format:title"))
    with pytest.raises(ConfigError, match="needs argument"):
        ifeval_rules("keywords:frequency", {"keyword": "x"})
    with pytest.raises(ConfigError, match="unknown IFEval instruction"):
        ifeval_rules("keywords:nope")


def test_sentence_count_ignores_list_numbers_decimals_and_abbreviations() -> None:
    assert run("sentence_count", "1. Apples are red.\n2. Pears are green.", exact=2)
    assert run("sentence_count", "  10. Tenth item here.\n11. Eleventh.", exact=2)
    assert run("sentence_count", "It costs 3.5 euros. Version 2.0 is out.", exact=2)
    assert run("sentence_count", "The U.S. team met Dr. Smith, e.g. at 5 p.m. today.", exact=1)
    assert run("sentence_count", "It rose by 5. Then it fell.", exact=2)  # not a list marker
    assert run("sentence_count", "*One.* Two. **Three!** _Four._", exact=4)
    assert run("sentence_count", "Did they listen? No. And then? See No. 5.", exact=4)


def test_paragraph_dividers_as_ifeval_and_as_whole_lines() -> None:
    assert run("paragraph_count", "One *** two", exact=2, separator="divider")
    assert not run("paragraph_count", "One *** two", exact=2, separator="divider_line")
    assert not run("paragraph_count", "One\n***\n***\ntwo", min=1, separator="divider")
    assert run("paragraph_count", "One\n***\n***\ntwo", exact=2, separator="divider_line")


def test_counting_choices_are_parameters() -> None:
    assert run("word_count", "don't stop well-known", exact=3)
    assert run("word_count", "don't stop well-known", exact=5, joined="split")
    assert run("uppercase_word_count", "I saw the B5 at NASA.", exact=1)
    assert run("uppercase_word_count", "I saw the B5 at NASA.", exact=3, min_letters=1)
    text = "* one\n*two\n- three\n**Bold** line\n+ four"
    assert run("bullet_list", text, exact=3)
    assert run("bullet_list", text, exact=3, markers="*-", space_after=False)
    assert run("letter_count", "Wow!! Great!", exact=3, letter="!")
    assert run("letter_count", "Aa", exact=1, letter="a", case_sensitive=True)


def caps(text: str, min_letters: int) -> list[str]:
    return [text[a:b] for a, b in caps_words(text, min_letters)]


def test_capital_words_with_min_letters_1_are_counted_over_nltk_tokens() -> None:
    # The tokens NLTK's word tokenizer gives, as IFEval counts them (checked against
    # nltk 3.9's NLTKWordTokenizer on all 541 GPT-4 responses and 621 other texts).
    assert caps("I'm here", 1) == ["I"]
    assert caps("IT'S ok; DON'T", 1) == ["IT", "'S", "DO", "N'T"]
    assert caps("P.P.S see the U.S. team", 1) == ["P.P.S", "U.S."]
    assert caps("**NOTE**: (FBI) at 12:00, OK", 1) == ["NOTE", "FBI", "OK"]
    assert caps("CANNOT, gonna", 1) == ["CAN", "NOT"]
    # docket's own words (the default): clitics and inner periods stay inside a word.
    assert caps("IT'S ok; DON'T see the U.S. and NASA", 2) == ["IT'S", "DON'T", "NASA"]
    assert run("uppercase_word_count", "IT'S the U.S.", exact=3, min_letters=1)


def test_first_word_ignores_punctuation_or_reads_it_as_ifeval_does() -> None:
    for text in ("Summary: it ends", "**Summary**, it ends", '"Summary;" it', "## Summary"):
        assert run("paragraph_first_word", text, paragraph=1, word="summary")
    assert not run(
        "paragraph_first_word", "Summary: it", paragraph=1, word="summary", punctuation="ifeval"
    )
    assert run(
        "paragraph_first_word", '"Summary." it', paragraph=1, word="summary", punctuation="ifeval"
    )
    assert not run("paragraph_first_word", "Summarised. it", paragraph=1, word="summary")


def test_json_in_a_one_line_fence_and_an_end_phrase_in_a_closing_quote() -> None:
    assert run("json_valid", '```json {"a": 1} ```')
    assert run("json_valid", '```{"a": [1, 2]}```')
    assert not run("json_valid", '```json {"a": 1}')
    quoted = '"That is all. Any other questions?"'
    assert not run("ends_with", quoted, text="Any other questions?")
    assert run("ends_with", quoted, text="Any other questions?", ignore_quotes=True)
    assert run("starts_with", '"Hello there."', text="Hello", ignore_quotes=True)


def test_bounded_repeats_of_a_literal_led_group_pass_the_guard() -> None:
    check_pattern(r"(?:SECTION\s?\d+[\s\S]*?){4}")
    assert run(
        "regex_must_match", "SECTION 1 a SECTION 2 b", pattern=r"(?:SECTION\s?\d+[\s\S]*?){2}"
    )
    for unsafe in (r"(a*){4}", r"(?:AB\d+){30}", r"((?:SECTION\d+.*?){3})+", r"(x+)+"):
        with pytest.raises(ValueError, match="nested repetition"):
            check_pattern(unsafe)


def test_language_of_a_text() -> None:
    assert run("response_language", "Das ist ein kleines Haus am Rande der Stadt.", language="de")
    assert not run(
        "response_language", "Das ist ein kleines Haus am Rande der Stadt.", language="en"
    )
    assert run("response_language", "Hi", language="de", min_chars=10)  # too short: not tested
    with pytest.raises(ValueError, match="no language could be detected"):
        CATALOGUE["response_language"].run("12345 !!!", {"language": "en"})
    with pytest.raises(ConfigError, match="unknown language code"):
        CATALOGUE["response_language"].run("x", {"language": "xx"})
