"""Sentence splitting, evidence ids and the tolerant-but-strict reply parsers."""

from __future__ import annotations

import pytest

from docket.errors import ParseError
from docket.relevance import number_sentences, parse_evidence_ids, split_sentences
from docket.relevance.evidence import validate_evidence
from docket.relevance.parsing import parse_grade, parse_turn, parse_yes_no
from docket.relevance.prompts import PROMPT_HASH, neutralise


def test_split_sentences_keeps_abbreviations_and_decimals():
    text = (
        "Dr. Smith measured 3.5 kg, e.g. on Monday. It was heavy! Was it? "
        "J. R. R. Tolkien wrote books. the end is lowercase."
    )
    assert split_sentences(text) == [
        "Dr. Smith measured 3.5 kg, e.g. on Monday.",
        "It was heavy!",
        "Was it?",
        "J. R. R. Tolkien wrote books. the end is lowercase.",
    ]


def test_split_sentences_exact_on_plain_text():
    assert split_sentences("One here.  Two there?\tThree!") == ["One here.", "Two there?", "Three!"]
    assert split_sentences("") == [] and split_sentences("  \n ") == []
    assert split_sentences("no final period") == ["no final period"]


def test_split_sentences_lines_lists_and_hard_wraps():
    text = "Title:\n- first item\n- second item\nThis line is\nhard wrapped.\n\nNew paragraph"
    assert split_sentences(text) == [
        "Title:",
        "- first item",
        "- second item This line is hard wrapped.",
        "New paragraph",
    ]


def test_numbering_and_ids():
    assert number_sentences(["a.", "b."]) == "[S1] a.\n[S2] b."
    assert parse_evidence_ids("S2, [S4], s2 and 7") == [2, 4, 7]
    assert parse_evidence_ids("none") == [] and parse_evidence_ids(["S1", 3]) == [1, 3]
    assert validate_evidence([2, 9, 0, 3], 3) == ([2, 3], [9, 0])


@pytest.mark.parametrize(
    ("reply", "label", "evidence", "reasoning"),
    [
        ("LABEL: relevant\nEVIDENCE: S2, S4\nREASONING: it answers", 1, (2, 4), "it answers"),
        ("**Label:** Irrelevant\n**Evidence:** none\n**Reasoning:** off topic", 0, (), "off topic"),
        (
            "label: NOT relevant evidence: S1 reasoning: only shares words",
            0,
            (1,),
            "only shares words",
        ),
        ("- LABEL = non-relevant\nREASON = off topic", 0, (), "off topic"),
        (
            '```json\n{"label": "relevant", "evidence": ["S3"], "reasoning": "yes"}\n```',
            1,
            (3,),
            "yes",
        ),
        ('{"Label": 0, "evidence": "S1", "Rationale": "no"}', 0, (1,), "no"),
        ("Sure!\nLABEL: Relevant.\nEVIDENCE: [S1]\nREASONING: S1", 1, (1,), "S1"),
    ],
)
def test_parse_turn_is_tolerant(reply, label, evidence, reasoning):
    parsed = parse_turn(reply)
    assert (parsed.label, parsed.evidence, parsed.reasoning) == (label, evidence, reasoning)


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "The chunk is relevant.",  # no LABEL line: never guessed
        "LABEL: relevant|irrelevant",  # echoed template
        "LABEL: relevant or irrelevant\nREASONING: x",
        "LABEL: maybe\nEVIDENCE: S1",
        '{"label": "unsure"}',
        "EVIDENCE: S1\nREASONING: relevant",
    ],
)
def test_parse_turn_never_defaults_a_label(reply):
    with pytest.raises(ParseError):
        parse_turn(reply)


@pytest.mark.parametrize(
    ("reply", "label", "evidence"),
    [
        (
            'Sure! Here is my answer:\n{"label": "irrelevant", "evidence": [], "reasoning": "r"}',
            0,
            (),
        ),
        (
            '{"label": "relevant", "evidence": ["S2"], "reasoning": "r"} {"label": "irrelevant"}',
            1,
            (2,),
        ),
        ('{"label": "relevant", "reasoning": "no evidence member"}', 1, ()),
        ('{"note": "{not json"} {"label": "relevant", "evidence": "S1", "reason": "r"}', 1, (1,)),
        # cut off by max_tokens inside the reasoning: the complete members still count
        (
            '{"label": "irrelevant", "evidence": ["S1", "S3"], "reasoning": "The chunk talks',
            0,
            (1, 3),
        ),
    ],
)
def test_parse_turn_reads_the_first_json_object(reply, label, evidence):
    parsed = parse_turn(reply)
    assert (parsed.label, parsed.evidence) == (label, evidence)


@pytest.mark.parametrize(
    "reply",
    [
        '{"label": "relevant or irrelevant", "evidence": []}',
        '{"label": "rel',  # truncated inside the label itself
        '{"evidence": ["S1"], "reasoning": "it is relevant"}',
        '```json\n{"label": null}\n```',
    ],
)
def test_json_replies_stay_strict_about_the_label(reply):
    with pytest.raises(ParseError):
        parse_turn(reply)


@pytest.mark.parametrize(
    "reply",
    [
        '{"label": "irrelevant", "evidence": [], "reasoning": ""}',
        '{"label": "irrelevant", "evidence": [], "reasoning": " \\n\\t "}',
        '{"label": "relevant", "evidence": ["S1"]}',
        '{"label": "irrelevant", "evidence": [], "reasoning": "',
        "LABEL: relevant\nEVIDENCE: S1",
    ],
)
def test_a_reply_without_reasoning_is_unreadable(reply):
    with pytest.raises(ParseError, match="reasoning"):
        parse_turn(reply)


def test_an_empty_reasoning_is_unreadable_for_grades_too():
    for reply in ('{"grade": 2, "evidence": [], "reasoning": "  "}', "##final score: 2"):
        with pytest.raises(ParseError, match="reasoning"):
            parse_grade(reply)


def test_parse_grade_and_yes_no():
    assert parse_grade('{"grade": 2, "evidence": ["S1"], "reasoning": "r"}').grade == 2
    assert parse_grade('{"score": "3", "reason": "exact"}').grade == 3
    assert parse_grade('{"grade": 1, "evidence": ["S2", "S9"], "reasoning": "r"}').evidence == (
        2,
        9,
    )
    umbrela = parse_grade("M: 2, T: 1\n##final score: 2")
    assert (umbrela.grade, umbrela.reasoning) == (2, "M: 2, T: 1")
    assert parse_grade("Exact answer.\n**##Final Score:** 3").grade == 3
    assert parse_grade("M: 0\n##final score: 0").grade == 0
    for bad in ("score 2", "##final score: 7", "final answer: 2", '{"grade": 4}', '{"grade": "x"}'):
        with pytest.raises(ParseError):
            parse_grade(bad)
    assert parse_yes_no(" Yes.") == 1 and parse_yes_no("**no**") == 0
    assert parse_yes_no("Answer: yes") == 1 and parse_yes_no("Answer:Answer: No") == 0
    assert parse_yes_no('{"answer": "no"}') == 0
    assert parse_grade("T: 1\n##final score:##final score: 1").grade == 1
    for bad in ("Maybe", "yesterday", "The answer is yes"):
        with pytest.raises(ParseError):
            parse_yes_no(bad)


def test_neutralise_and_prompt_hash():
    assert neutralise("a </chunk> b <Query x> [S2] c") == "a &lt;/chunk> b &lt;Query x> (S2) c"
    assert neutralise("x < y and <b>bold</b>") == "x < y and <b>bold</b>"
    assert len(PROMPT_HASH) == 16 and int(PROMPT_HASH, 16) >= 0
