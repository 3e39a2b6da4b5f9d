"""A turn that says nothing is not a turn: empty reasoning is re-asked, and later-round
turns record whether they engaged with the debate (scripted agents, real Model and parser)."""

from __future__ import annotations

import json

from docket.relevance import JudgeOptions, build_judge
from docket.relevance.engagement import ENGAGED_TURNS, LATER_TURNS, classify
from docket.relevance.metrics import compute_metrics
from docket.relevance.prompts import GRADE_SCHEMA, LABEL_SCHEMA, MIN_REASONING_CHARS
from tests.relevance.relevance_fakes import PAIR, Recorder, debate_model, is_reask, turn, who


def dream(recorder: Recorder, **options):
    return build_judge(JudgeOptions(method="dream", **options), lambda name: recorder.model)


def test_the_schemas_ask_for_a_reasoning_of_some_length():
    for schema in (LABEL_SCHEMA, GRADE_SCHEMA):
        assert schema["properties"]["reasoning"]["minLength"] == MIN_REASONING_CHARS >= 10


async def test_an_empty_reasoning_is_reasked_once_and_the_debate_goes_on():
    def script(request):
        agent, round_no = who(request)
        if agent == "B" and not is_reask(request):
            return json.dumps({"label": "irrelevant", "evidence": [], "reasoning": "  "})
        return turn("relevant", "S1", f"{agent}{round_no}: S1 gives the boiling point")

    fake = Recorder(script)
    judgment = await dream(fake).judge(PAIR)
    b_turn = next(t for t in judgment.transcript if t["agent"] == "B")
    assert b_turn["parse_failures"] == 1 and len(b_turn["raw"]) == 2
    assert b_turn["reasoning"] == "B1: S1 gives the boiling point"
    assert (judgment.label, judgment.decided_by) == (1, "consensus")
    assert judgment.parse_failures == 1
    reask = next(r for r in fake.requests if is_reask(r))
    assert "reasoning" in reask.messages[-1].content  # the model is told what was missing


async def test_a_turn_that_stays_empty_escalates_and_is_never_a_label():
    def script(request):
        agent, _ = who(request)
        reasoning = "" if agent == "B" else "S1 answers the query"
        return json.dumps({"label": "relevant", "evidence": ["S1"], "reasoning": reasoning})

    judgment = await dream(Recorder(script)).judge(PAIR)
    assert (judgment.label, judgment.decided_by) == (None, "escalated")
    b_turn = next(t for t in judgment.transcript if t["agent"] == "B")
    assert not b_turn["parsed"] and b_turn["label"] is None and b_turn["parse_failures"] == 2
    # every stored turn says something or is counted as a parse failure
    assert all(t["reasoning"].strip() or t["parse_failures"] for t in judgment.transcript)


async def test_later_turns_record_whether_they_engaged():
    fake = debate_model(
        {
            ("A", 1): turn("relevant", "S1", "S1 gives the boiling point."),
            ("B", 1): turn("irrelevant", "S3", "The chunk is about mountains."),
            ("A", 2): turn("relevant", "S1", "s1 gives the BOILING point"),  # a repeat
            ("B", 2): turn("irrelevant", "S3", "Agent A overlooks S3."),
            ("A", 3): turn("relevant", "S1, S3", "S1 gives the boiling point."),  # takes S3 up
            ("B", 3): turn("relevant", "S2", "It does answer it, then."),  # concedes
        }
    )
    judgment = await dream(fake, rounds=3).judge(PAIR)
    classes = {(t["agent"], t["round"]): t.get("engagement") for t in judgment.transcript}
    assert classes == {
        ("A", 1): None,
        ("B", 1): None,
        ("A", 2): "repeats",
        ("B", 2): "answers",
        ("A", 3): "cites",
        ("B", 3): "changed",
    }
    assert (judgment.usage[LATER_TURNS], judgment.usage[ENGAGED_TURNS]) == (4, 3)
    metrics = compute_metrics("dream", [judgment], {PAIR.key: 1})
    assert (metrics.engagement, metrics.later_turns) == (0.75, 4)


async def test_a_debate_decided_in_round_one_has_no_later_turns():
    fake = debate_model({("A", 1): turn("relevant"), ("B", 1): turn("relevant")})
    judgment = await dream(fake).judge(PAIR)
    assert (judgment.usage[LATER_TURNS], judgment.usage[ENGAGED_TURNS]) == (0, 0)
    assert compute_metrics("dream", [judgment], {PAIR.key: 1}).engagement is None


def test_references_to_the_other_side():
    own = {"agent": "A", "label": 1, "evidence": ["S1"], "reasoning": "x"}
    other = {"agent": "B", "label": 0, "evidence": ["S2"], "reasoning": "y"}
    for reasoning in ("B's point fails", "agent B is wrong", "The other agent misreads S1"):
        new = {**own, "reasoning": reasoning}
        assert classify(new, {**own, "reasoning": reasoning}, [other]) == "answers"
    # "a" and "b" as words, or another name's letters, are no reference
    same = {**own, "reasoning": "a b Bob's case"}
    assert classify(same, same, [other]) == "repeats"
