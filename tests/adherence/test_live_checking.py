"""Live checking tells "not yet" from "violated"; checking a finished record does not."""

from __future__ import annotations

from docket.adherence.record import Record, Turn
from docket.adherence.rules import RuleSet
from docket.adherence.verify import Submission, Verifier
from docket.adherence.verify.verdict import aggregate_status
from docket.llm.fake import register_fake

TURNS_4_TO_12 = {
    "id": "T",
    "text": "The dialogue has 4 to 12 turns.",
    "tier": "fmt",
    "scope": {"kind": "record"},
    "check": {"checker": "turn_count", "params": {"min": 4, "max": 12}},
}
SCENARIO_NAMES_A_CITY = {
    "id": "C",
    "text": "The scenario names a city.",
    "tier": "sim",
    "scope": {"kind": "field", "field": "scenario"},
}


def dialogue(turns: int, **fields: str) -> Record:
    roles = ("user", "assistant")
    return Record(
        id="d", fields=fields, turns=[Turn(role=roles[i % 2], text="Hello.") for i in range(turns)]
    )


async def status(rule: dict, record: Record, new_turn: int | None, **models: str) -> str:
    verifier = Verifier(RuleSet(name="live", rules=[rule]), **models)
    verdict = await verifier.verify(Submission(record, new_turn))
    return verdict.by_rule()[rule["id"]].status


async def test_a_turn_count_rule_is_not_yet_before_the_fourth_turn() -> None:
    for turn in range(3):
        assert await status(TURNS_4_TO_12, dialogue(turn + 1), turn) == "not_yet"
    assert await status(TURNS_4_TO_12, dialogue(4), 3) == "pass"
    assert await status(TURNS_4_TO_12, dialogue(13), 12) == "fail"  # too many is final


async def test_a_finished_record_with_too_few_turns_fails() -> None:
    assert await status(TURNS_4_TO_12, dialogue(2), None) == "fail"


async def test_a_field_rule_is_not_yet_until_the_field_is_sent() -> None:
    asked: list[str] = []
    sim = register_fake("live-sim", lambda request: asked.append("x") or "PASS")
    assert await status(SCENARIO_NAMES_A_CITY, dialogue(1), 0, sim_model=sim) == "not_yet"
    assert asked == []  # no model call about a field that is not there
    sent = dialogue(1, scenario="A trip to Leeds.")
    assert await status(SCENARIO_NAMES_A_CITY, sent, 0, sim_model=sim) == "pass"
    assert asked == ["x"]


def test_not_yet_ranks_below_fail_and_needs_review_above_pass() -> None:
    from docket.adherence.verify.verdict import RuleResult

    def result(state: str) -> RuleResult:
        return RuleResult(rule_id=state, tier="fmt", status=state)  # type: ignore[arg-type]

    assert aggregate_status([result("pass"), result("not_yet")]) == "not_yet"
    assert aggregate_status([result("not_yet"), result("needs_review")]) == "needs_review"
    assert aggregate_status([result("not_yet"), result("fail")]) == "fail"
