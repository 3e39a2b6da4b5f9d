"""The atomizer loop with the fake provider: split, merge, drop, depth bound, spec re-ask."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from docket.adherence.authoring.atomize import AtomizeOptions, atomize
from docket.adherence.authoring.prompts import parse_rule_list
from docket.adherence.authoring.sop import sop_from_markdown
from docket.errors import ParseError
from docket.llm import Model, Request
from docket.llm.fake import register_fake

SOP = sop_from_markdown(
    """# Guide

## Length

- Each assistant turn has at most 50 words and no exclamation marks.

## Tone

- Be polite.
- Always be courteous.
""",
    source="guide.md",
)
LENGTH_LINES = (3, 5)


def rule(
    text: str,
    tier: str = "sub",
    scope: str = "role:assistant",
    check: dict | None = None,
    lines=None,
) -> str:
    data = {"text": text, "tier": tier, "scope": scope}
    if check is not None:
        data["check"] = check
    if lines is not None:
        data["lines"] = lines
    return json.dumps(data)


ATOMIC = json.dumps({"atomic": True, "overlaps": None})
BOTH = rule("Each assistant turn has at most 50 words and no exclamation marks.", "fmt",
            check={"checker": "word_count", "params": {"max": 50}}, lines=[5, 5])  # fmt: skip
WORDS = rule(
    "Each assistant turn has at most 50 words.",
    "fmt",
    check={"checker": "word_count", "params": {"max": 50}},
)
BANG = rule("Assistant turns contain no exclamation marks.", "fmt",
            check={"checker": "punctuation_banned", "params": {"chars": "!"}})  # fmt: skip
POLITE, COURTEOUS = rule("Be polite."), rule("Always be courteous.")


def key_of(listing: str, text: str) -> str:
    match = re.search(rf"^(K\d+): {re.escape(text)}", listing, re.M)
    assert match, f"{text!r} not among kept rules:\n{listing}"
    return match.group(1)


def fake(
    name: str,
    propose: dict[str, str | list[str]],
    reflect: Callable[[str, str], str] = lambda candidate, listing: ATOMIC,
    fix: str = "NONE",
) -> Model:
    """A scripted model: proposals by section title, reflection by candidate text."""
    calls: dict[str, int] = {}

    def script(request: Request) -> str:
        prompt = request.messages[1].content
        if prompt.startswith("SOP section:"):
            title = prompt.splitlines()[0].rsplit("> ", 1)[-1]
            replies = propose.get(title, "NONE")
            if isinstance(replies, list):
                calls[title] = calls.get(title, 0) + 1
                return replies[min(calls[title], len(replies)) - 1]
            return replies
        if prompt.startswith("Rules kept so far:"):
            listing = prompt.split("\n\nCandidate rule: ")[0]
            candidate = prompt.split("Candidate rule: ", 1)[1].split(" [", 1)[0]
            return reflect(candidate, listing)
        if "has an invalid check" in prompt:
            return fix
        raise AssertionError(f"unexpected prompt: {prompt[:80]}")

    return Model(register_fake(name, script))


async def test_a_non_atomic_candidate_is_decomposed_into_checked_parts() -> None:
    def reflect(candidate: str, listing: str) -> str:
        if "and no exclamation" in candidate:
            return json.dumps({"atomic": False, "parts": [json.loads(WORDS), json.loads(BANG)]})
        return ATOMIC

    result = await atomize(SOP, fake("at-split", {"Length": BOTH}, reflect))
    rules = result.ruleset.rules
    assert [r.text for r in rules] == [
        "Each assistant turn has at most 50 words.",
        "Assistant turns contain no exclamation marks.",
    ]
    assert [r.check.checker for r in rules] == ["word_count", "punctuation_banned"]
    assert all(
        r.source.section == "Guide > Length" and r.source.lines == LENGTH_LINES for r in rules
    )
    assert [r.id for r in rules] == ["R1", "R2"]
    assert (result.report.decomposed, result.report.candidates, result.report.kept) == (1, 1, 2)


async def test_an_overlapping_candidate_already_covered_is_dropped() -> None:
    def reflect(candidate: str, listing: str) -> str:
        if candidate == "Always be courteous.":
            return json.dumps(
                {"atomic": True, "overlaps": key_of(listing, "Be polite."), "merged": None}
            )
        return ATOMIC

    result = await atomize(SOP, fake("at-drop", {"Tone": f"{POLITE}\n{COURTEOUS}"}, reflect))
    assert [r.text for r in result.ruleset.rules] == ["Be polite."]
    assert result.report.duplicates_dropped == 1


async def test_an_overlapping_candidate_is_merged_with_the_kept_rule() -> None:
    merged = {
        "text": "The assistant is polite and courteous.",
        "tier": "sub",
        "scope": "role:assistant",
        "lines": [10, 10],
    }

    def reflect(candidate: str, listing: str) -> str:
        if candidate == "Always be courteous.":
            return json.dumps(
                {"atomic": True, "overlaps": key_of(listing, "Be polite."), "merged": merged}
            )
        return ATOMIC

    first, second = rule("Be polite.", lines=[9, 9]), rule("Always be courteous.", lines=[10, 10])
    result = await atomize(SOP, fake("at-merge", {"Tone": f"{first}\n{second}"}, reflect))
    (only,) = result.ruleset.rules
    assert only.text == "The assistant is polite and courteous."
    assert only.source.lines == (9, 10)  # the union of both candidates' lines
    assert result.report.merged == 1


async def test_recursion_stops_at_the_depth_bound() -> None:
    seen: list[str] = []

    def always_split(candidate: str, listing: str) -> str:
        seen.append(candidate)
        parts = [json.loads(rule(f"{candidate} /a")), json.loads(rule(f"{candidate} /b"))]
        return json.dumps({"atomic": False, "parts": parts})

    result = await atomize(
        SOP, fake("at-depth", {"Tone": POLITE}, always_split), AtomizeOptions(max_depth=2)
    )
    # depth 0 splits into 2, depth 1 splits each into 2, depth 2 stops: 4 rules kept with a note.
    assert len(result.ruleset.rules) == 4
    assert {r.text for r in result.ruleset.rules} == {
        f"Be polite. /{x} /{y}" for x in "ab" for y in "ab"
    }
    assert all("depth bound" in r.note for r in result.ruleset.rules)
    assert (result.report.decomposed, result.report.depth_limited) == (3, 4)
    assert len(seen) == 1 + 2 + 4


async def test_an_invalid_fmt_spec_is_reasked_once_then_downgraded_to_sim() -> None:
    bad = rule(
        "Turns are short.",
        "fmt",
        "each_turn",
        check={"checker": "word_limit", "params": {"max": 50}},
    )
    model = fake(
        "at-downgrade", {"Length": bad}, fix='{"checker": "word_count", "params": {"maximum": 50}}'
    )
    result = await atomize(SOP, model)
    (only,) = result.ruleset.rules
    assert (only.tier, only.check) == ("sim", None)
    assert "unknown parameter 'maximum'" in only.note and "sim model" in only.note
    assert (result.report.spec_reasks, result.report.downgraded) == (1, 1)
    assert model.provider.calls == 4  # propose (2 sections), fix, reflect


async def test_an_invalid_fmt_spec_fixed_on_the_reask_stays_fmt() -> None:
    bad = rule(
        "Turns are short.",
        "fmt",
        "each_turn",
        check={"checker": "word_count", "params": {"maximum": 50}},
    )
    model = fake(
        "at-fixed",
        {"Length": bad},
        fix='```json\n{"checker": "word_count", "params": {"max": 50}}\n```',
    )
    result = await atomize(SOP, model)
    (only,) = result.ruleset.rules
    assert (only.tier, only.check.checker, only.check.params) == ("fmt", "word_count", {"max": 50})
    assert (result.report.spec_reasks, result.report.downgraded) == (1, 0)


async def test_a_record_level_checker_on_a_turn_scope_is_an_invalid_spec() -> None:
    bad = rule(
        "At most 8 turns.",
        "fmt",
        "each_turn",
        check={"checker": "turn_count", "params": {"max": 8}},
    )
    result = await atomize(SOP, fake("at-level", {"Length": bad}))  # fix replies NONE
    assert result.ruleset.rules[0].tier == "sim"
    assert "checks whole records" in result.ruleset.rules[0].note


async def test_an_unreadable_section_is_reasked_then_skipped_without_inventing_rules() -> None:
    model = fake("at-skip", {"Length": "Sure! Here are some rules for you.", "Tone": POLITE})
    result = await atomize(SOP, model)
    assert [r.text for r in result.ruleset.rules] == ["Be polite."]
    assert result.report.sections_skipped == ["Guide > Length"]
    assert model.usage.parse_failures == 2


async def test_a_reply_readable_on_the_reask_is_used() -> None:
    result = await atomize(SOP, fake("at-reask", {"Tone": ["I think: be polite", POLITE]}))
    assert [r.text for r in result.ruleset.rules] == ["Be polite."]
    assert result.report.sections_skipped == []


async def test_an_unreadable_reflection_keeps_the_candidate_with_a_note() -> None:
    result = await atomize(SOP, fake("at-noreflect", {"Tone": POLITE}, lambda c, k: "it is fine"))
    (only,) = result.ruleset.rules
    assert "reflection reply unreadable" in only.note
    assert result.report.reflection_failures == 1


async def test_overlaps_naming_an_unknown_rule_is_a_parse_failure() -> None:
    result = await atomize(
        SOP, fake("at-badkey", {"Tone": POLITE}, lambda c, k: '{"atomic": true, "overlaps": "K99"}')
    )
    assert result.report.reflection_failures == 1


async def test_without_reflection_every_candidate_is_kept() -> None:
    model = fake("at-noreflection", {"Tone": f"{POLITE}\n{COURTEOUS}"})
    result = await atomize(SOP, model, AtomizeOptions(reflect=False))
    assert len(result.ruleset.rules) == 2 and model.provider.calls == 2  # one proposal per section


async def test_extracted_rules_round_trip_through_the_rule_file(tmp_path) -> None:
    from docket.adherence.rules import dump_rules, load_rules

    result = await atomize(SOP, fake("at-file", {"Length": WORDS, "Tone": POLITE}))
    dump_rules(result.ruleset, tmp_path / "rules.yaml")
    assert load_rules(tmp_path / "rules.yaml") == result.ruleset
    assert result.ruleset.name == "guide" and result.ruleset.sop == "guide.md"


@pytest.mark.parametrize(
    "reply",
    [
        f"```json\n{POLITE}\n{COURTEOUS}\n```",
        f"[{POLITE}, {COURTEOUS}]",
        f'{{"rules": [{POLITE}, {COURTEOUS}]}}',
        f"Here you go:\n1. {POLITE}\n- {COURTEOUS},\n",
    ],
)
def test_rule_lists_parse_tolerantly(reply: str) -> None:
    candidates = parse_rule_list(reply, "S", (1, 9))
    assert [c.text for c in candidates] == ["Be polite.", "Always be courteous."]
    assert candidates[0].scope.role == "assistant" and candidates[0].lines == (1, 9)


def test_rule_list_aliases_and_none() -> None:
    assert parse_rule_list("NONE", "S", (1, 2)) == []
    (c,) = parse_rule_list(
        '{"text": "Short.", "tier": "Formatting", "scope": "each turn", "lines": [2, 2]}',
        "S",
        (1, 2),
    )
    assert (c.tier, c.scope.kind, c.lines) == ("fmt", "each_turn", (2, 2))
    (c,) = parse_rule_list('{"text": "x", "tier": "sim", "lines": [40, 41]}', "S", (1, 2))
    assert c.lines == (1, 2)  # out-of-section lines fall back to the section


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("", "empty"),
        ("no rules here", "no JSON rule objects"),
        ('{"tier": "sub"}', "rule 1 has no 'text'"),
        ('{"text": "x", "tier": "hard"}', "rule 1 has tier 'hard'"),
        ('{"text": "x", "tier": "sub", "scope": "sometimes"}', "rule 1 has scope 'sometimes'"),
        ('{"text": "x", "tier": "sub", "scope": "role:"}', "rule 1 has scope 'role:'"),
    ],
)
def test_unusable_rule_lists_raise_parse_errors(reply: str, message: str) -> None:
    with pytest.raises(ParseError, match=re.escape(message)):
        parse_rule_list(reply, "S", (1, 2))


def test_pretty_printed_and_cut_off_rule_lists_keep_their_complete_rules() -> None:
    pretty = json.dumps([json.loads(POLITE), json.loads(COURTEOUS)], indent=2)
    cut = pretty[: pretty.rindex("Always") + 3]  # the token limit hit inside the second rule
    (only,) = parse_rule_list(f"```json\n{cut}", "S", (1, 9))
    assert only.text == "Be polite."
    both = parse_rule_list(f"Sure!\n{pretty.strip('[]')}\nDone.", "S", (1, 9))
    assert [c.text for c in both] == ["Be polite.", "Always be courteous."]
