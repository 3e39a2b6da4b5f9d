"""RE-AD-Eval scoring, hand-checked on a tiny dataset; and runs of the verifier over datasets."""

from __future__ import annotations

import asyncio

import pytest

from docket.adherence.record import Record, Turn
from docket.adherence.rules import RuleSet
from docket.adherence.verify.verdict import RuleResult, Verdict
from docket.errors import ConfigError
from docket.readeval import (
    BuildConfig,
    BuildModels,
    Dataset,
    Sample,
    build_dataset,
    run_readeval,
)
from docket.readeval.scoring import breakdown, percentile, review_counts, rule_outcomes
from tests.adherence.bench_helpers import (
    clean_seeds,
    example_rules,
    fake_model,
    generator,
    judge_reply,
)

TINY = RuleSet.model_validate(
    {
        "name": "tiny",
        "rules": [
            {
                "id": "F1",
                "text": "No URLs.",
                "tier": "fmt",
                "scope": {"kind": "each_turn"},
                "check": {"checker": "urls", "params": {"present": False}},
            },
            {
                "id": "S1",
                "text": "No bot talk.",
                "tier": "sim",
                "scope": {"kind": "role", "role": "assistant"},
            },
            {"id": "U1", "text": "Polite.", "tier": "sub"},
        ],
    }
)
# sample id, persona, injected rule, statuses (missing rule = skipped by the verifier)
TABLE = [
    ("a", "expert", "F1", {"F1": "fail", "S1": "pass", "U1": "needs_review"}),
    ("b", "novice", "S1", {"F1": "pass", "S1": "needs_review", "U1": "fail"}),
    ("c", "novice", "U1", {"F1": "pass", "S1": "fail", "U1": "fail"}),
    ("d", "expert", "S1", {"F1": "pass", "U1": "pass"}),
    ("e", "expert", "F1", {"F1": "fail", "S1": "pass", "U1": "pass"}),
]


def tiny_case() -> tuple[list[Sample], list[Verdict]]:
    samples, verdicts = [], []
    for sample_id, persona, rule_id, statuses in TABLE:
        record = Record(id=sample_id, turns=[Turn(role="user", text="hi")])
        tier = TINY.get(rule_id).tier
        samples.append(
            Sample(
                id=sample_id,
                persona=persona,
                tier=tier,
                rule_id=rule_id,
                operator="x",
                record=record,
                source_id="s",
                iterations=1,
            )
        )
        results = [
            RuleResult(rule_id=r, tier=TINY.get(r).tier, status=s) for r, s in statuses.items()
        ]
        verdicts.append(Verdict(record_id=sample_id, status="fail", results=results))
    return samples, verdicts


def outcomes():  # type: ignore[no-untyped-def]
    samples, verdicts = tiny_case()
    return [
        o for s, v in zip(samples, verdicts, strict=True) for o in rule_outcomes(s, v, TINY.rules)
    ]


def counts(c) -> tuple[int, int, int, int]:  # type: ignore[no-untyped-def]
    return c.tp, c.fp, c.fn, c.tn


def test_needs_review_counted_as_a_flag() -> None:
    scores = breakdown(outcomes(), "flag")
    assert counts(scores.overall) == (4, 3, 1, 7)
    assert scores.overall.precision == pytest.approx(4 / 7)
    assert scores.overall.recall == pytest.approx(0.8)
    assert scores.overall.f1 == pytest.approx(8 / 12)
    assert counts(scores.by_tier["fmt"]) == (2, 0, 0, 3)
    assert counts(scores.by_tier["sim"]) == (1, 1, 1, 2)
    assert counts(scores.by_tier["sub"]) == (1, 2, 0, 2)
    assert counts(scores.by_persona["expert"]) == (2, 1, 1, 5)
    assert counts(scores.by_persona["novice"]) == (2, 2, 0, 2)
    assert counts(scores.by_sample_tier["sim"]) == (1, 1, 1, 3)
    assert scores.exact == pytest.approx(1 / 5)


def test_needs_review_counted_as_a_pass() -> None:
    scores = breakdown(outcomes(), "pass")
    assert counts(scores.overall) == (3, 2, 2, 8)
    assert scores.overall.f1 == pytest.approx(0.6)
    assert counts(scores.by_rule["S1"]) == (0, 1, 2, 2)
    assert scores.exact == pytest.approx(2 / 5)


def test_needs_review_is_counted_on_its_own() -> None:
    found = review_counts(outcomes())
    assert (found.results, found.on_injected, found.on_other, found.samples) == (2, 1, 1, 2)


def test_undefined_scores_are_none_and_percentiles_interpolate() -> None:
    empty = breakdown([], "flag")
    assert empty.overall.precision is None and empty.overall.f1 is None and empty.exact is None
    assert percentile([4, 1, 3, 2], 50) == pytest.approx(2.5)
    assert percentile([1, 2, 3, 4], 95) == pytest.approx(3.85)
    assert percentile([], 50) is None


RULES = example_rules()


def llm_dataset() -> Dataset:
    judge = fake_model("score-judge", judge_reply)
    models = BuildModels(
        generator=fake_model("score-gen", generator()), judge_sim=judge, judge_sub=judge
    )
    return asyncio.run(
        build_dataset(RULES, clean_seeds(), BuildConfig(samples=12, seed=4), models)
    ).dataset


def holistic_reply(request) -> str:  # type: ignore[no-untyped-def]
    # says PASS for every rule but one, which it leaves out (so that rule needs review)
    return "\n".join(f"[{rule.id}] PASS" for rule in RULES.rules if rule.id != "empathy")


def test_run_scores_atomic_and_holistic_modes() -> None:
    dataset = llm_dataset()
    verifier_model = fake_model("score-verifier", judge_reply)
    holistic = fake_model("score-holistic", holistic_reply)
    atomic = asyncio.run(
        run_readeval(dataset, RULES, sim_model=verifier_model, sub_model=verifier_model)
    )
    report = atomic.modes["atomic"]
    assert report.samples == len(dataset.samples) == atomic.scored
    # the verifier is the judge here, so on LLM samples it agrees by construction
    assert report.needs_review_as_flag.overall.f1 == 1.0
    assert report.llm_calls == 12 * len(dataset.samples)
    both = asyncio.run(
        run_readeval(
            dataset, RULES, sim_model=verifier_model, sub_model=holistic, modes=("holistic",)
        )
    )
    hol = both.modes["holistic"]
    assert hol.llm_calls == len(dataset.samples)
    assert hol.needs_review.results == len(dataset.samples)  # 'empathy' on every sample
    # fmt rules all said PASS: every injected rule is missed unless it is the undecided one
    assert hol.needs_review_as_pass.overall.tp == 0
    assert hol.needs_review_as_flag.overall.fp == sum(
        s.rule_id != "empathy" for s in dataset.samples
    )


def test_run_skips_samples_whose_rule_is_not_in_the_rule_set_and_warns() -> None:
    with pytest.raises(ConfigError, match="none of the 12 samples"):
        empty_set = RULES.model_copy(update={"rules": [RULES.rules[0]]})
        asyncio.run(run_readeval(llm_dataset(), empty_set))
    dataset = llm_dataset()
    fmt_only = RULES.model_copy(update={"rules": RULES.by_tier("fmt")})
    report = asyncio.run(run_readeval(dataset, fmt_only, limit=2))
    n_fmt = sum(s.tier == "fmt" for s in dataset.samples)
    assert (
        report.scored == min(2, n_fmt) and report.not_scored == len(dataset.samples) - report.scored
    )
    assert report.modes["atomic"].needs_review_as_flag.overall.f1 == 1.0
    same = fake_model("score-gen2", judge_reply)  # family 'score', like the generator
    changed = RULES.model_copy(
        update={"rules": [RULES.rules[0].model_copy(update={"text": "changed"}), *RULES.rules[1:]]}
    )
    warned = asyncio.run(run_readeval(dataset, changed, sim_model=same, sub_model=same, limit=1))
    assert any("rules changed" in w for w in warned.warnings)
    llm = RULES.model_copy(update={"rules": RULES.by_tier("sim")})
    warned = asyncio.run(run_readeval(dataset, llm, sim_model=same, sub_model=same, limit=1))
    assert any("self-preference" in w for w in warned.warnings)
