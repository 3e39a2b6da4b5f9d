"""The verify-and-repair loop: drop after three rounds, accept a repair, feed back problems."""

from __future__ import annotations

import asyncio
import random

from docket.adherence.rules import RuleSet
from docket.llm import Request
from docket.readeval import DEFAULT_PERSONAS, GroundTruth, MutationContext
from docket.readeval.build import judge_verifier
from docket.readeval.rewrite import Generation, inject_llm
from docket.readeval.setup import BuildModels
from docket.readeval.truth import Dropped, Injected, inject_fmt
from tests.adherence.bench_helpers import (
    clean_seeds,
    example_rules,
    fake_model,
    generator,
    judge_reply,
    marker,
)

RULES = example_rules()
SEED = clean_seeds()[0]


def truth_with_judge(name: str) -> tuple[GroundTruth, list[Request]]:
    seen: list[Request] = []

    def judge(request: Request) -> str:
        seen.append(request)
        return judge_reply(request)

    model = fake_model(name, judge)
    verifier = judge_verifier(RULES, BuildModels(judge_sim=model, judge_sub=model))
    return GroundTruth(RULES, verifier), seen


def inject(rule_id: str, script, truth: GroundTruth, name: str):  # type: ignore[no-untyped-def]
    generation = Generation(fake_model(name, script), temperature=0.0)
    ctx = MutationContext(random.Random(1), DEFAULT_PERSONAS[1])
    return asyncio.run(inject_llm(RULES.get(rule_id), SEED, truth, ctx, generation))


def test_a_rewrite_that_also_breaks_another_rule_is_dropped_after_three_rounds() -> None:
    calls: list[Request] = []

    def script(request: Request) -> str:
        calls.append(request)
        return generator(lambda r, rule: [marker("polite-tone")])(request)

    truth, _ = truth_with_judge("judge-drop")
    outcome = inject("no-competitors", script, truth, "gen-drop")
    assert isinstance(outcome, Dropped)
    assert outcome.reason == "also broke a sub rule" and outcome.iterations == 3
    assert "[polite-tone] fails" in outcome.detail
    assert len(calls) == 3
    # each repair round carries the previous answer and what was wrong with it
    assert [len(c.messages) for c in calls] == [2, 4, 6]
    assert "[polite-tone] is broken too" in calls[1].messages[-1].content


def test_a_rewrite_fixed_in_the_second_round_is_accepted() -> None:
    def script(request: Request) -> str:
        first_round = len(request.messages) == 2
        return generator(lambda r, rule: [marker("empathy")] if first_round else [])(request)

    truth, _ = truth_with_judge("judge-fix")
    outcome = inject("greeting", script, truth, "gen-fix")
    assert isinstance(outcome, Injected) and outcome.iterations == 2
    text = " ".join(t.text for t in outcome.mutation.record.turns)
    assert marker("greeting") in text and marker("empathy") not in text
    assert outcome.mutation.operator == "llm-rewrite" and outcome.mutation.turn == 1


def test_a_rewrite_that_does_not_break_the_rule_is_dropped_as_missed() -> None:
    def script(request: Request) -> str:
        return '<rewrite turn="1">Hello there, a perfectly fine answer.</rewrite>'

    truth, _ = truth_with_judge("judge-miss")
    outcome = inject("greeting", script, truth, "gen-miss")
    assert isinstance(outcome, Dropped) and outcome.reason == "intended rule not broken"


def test_a_rewrite_breaking_a_fmt_rule_is_caught_by_code_without_asking_the_judge() -> None:
    def script(request: Request) -> str:
        return f'<rewrite turn="1">See www.example.com {marker("no-competitors")}</rewrite>'

    truth, judged = truth_with_judge("judge-fmt")
    outcome = inject("no-competitors", script, truth, "gen-fmt")
    assert isinstance(outcome, Dropped) and outcome.reason == "also broke a fmt rule"
    assert judged == []


def test_an_unreadable_generator_reply_is_dropped_not_used() -> None:
    truth, _ = truth_with_judge("judge-unreadable")
    outcome = inject("greeting", lambda r: "I would rather not.", truth, "gen-unreadable")
    assert isinstance(outcome, Dropped) and outcome.reason == "generator reply unreadable"


def test_a_turn_outside_the_rule_scope_is_refused() -> None:
    # no-ai-self-reference is about assistant turns: the drawn turn is an assistant turn,
    # and an answer rewriting another turn is not accepted.
    truth, _ = truth_with_judge("judge-scope")
    outcome = inject(
        "no-ai-self-reference", lambda r: '<rewrite turn="0">x y z</rewrite>', truth, "gen-scope"
    )
    assert isinstance(outcome, Dropped) and outcome.reason == "generator reply unreadable"


def test_fmt_injection_drops_after_three_attempts_when_every_mutation_breaks_another_rule() -> None:
    rules = RuleSet.model_validate(
        {
            "name": "clash",
            "rules": [
                {
                    "id": "no-urls",
                    "text": "No URLs.",
                    "tier": "fmt",
                    "scope": {"kind": "each_turn"},
                    "check": {"checker": "urls", "params": {"present": False}},
                },
                {
                    "id": "no-example",
                    "text": "Never the word example.",
                    "tier": "fmt",
                    "scope": {"kind": "each_turn"},
                    "check": {"checker": "keywords_forbidden", "params": {"keywords": ["example"]}},
                },
            ],
        }
    )
    truth = GroundTruth(rules, None)
    ctx = MutationContext(random.Random(0), DEFAULT_PERSONAS[0])
    outcome = asyncio.run(inject_fmt(rules.get("no-urls"), SEED, truth, ctx, max_attempts=3))
    assert isinstance(outcome, Dropped)
    assert outcome.reason == "also broke a fmt rule" and outcome.iterations == 3
    assert "[no-example] fails" in outcome.detail
