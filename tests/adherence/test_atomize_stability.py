"""The stability metric, checked by hand, and the stability run with the fake provider."""

from __future__ import annotations

import json

import pytest

from docket.adherence.authoring.sop import sop_from_markdown
from docket.adherence.authoring.stability import (
    normalise_rule_text,
    rule_set_jaccard,
    rule_set_variation,
    stability,
)
from docket.adherence.rules import Rule, RuleSet
from docket.errors import InputError
from docket.llm import Model, Request
from docket.llm.fake import register_fake


def ruleset(*texts: str, tier: str = "sub") -> RuleSet:
    return RuleSet(
        name="s", rules=[Rule(id=f"R{i}", text=t, tier=tier) for i, t in enumerate(texts)]
    )


def test_normalisation_ignores_case_punctuation_and_spacing() -> None:
    assert normalise_rule_text("  Be  POLITE, always! ") == "be polite always"


def test_jaccard_by_hand() -> None:
    assert rule_set_jaccard(["a", "b", "c"], ["a", "b", "d"]) == pytest.approx(2 / 4)
    assert rule_set_jaccard(["Be polite."], ["be polite"]) == 1.0
    assert rule_set_jaccard([], []) == 1.0
    assert rule_set_jaccard(["a"], []) == 0.0


def test_variation_by_hand() -> None:
    # J(A,B) = 2/4, J(A,C) = 1, J(B,C) = 2/4 -> mean 2/3, variation 1/3
    a, b, c = ruleset("a", "b", "c"), ruleset("a", "b", "d"), ruleset("a", "b", "c")
    report = rule_set_variation([a, b, c])
    assert report.pairwise == pytest.approx((0.5, 1.0, 0.5))
    assert report.mean_jaccard == pytest.approx(2 / 3)
    assert report.variation == pytest.approx(1 / 3)
    assert report.rule_counts == (3, 3, 3)
    assert report.tier_counts[0] == {"fmt": 0, "sim": 0, "sub": 3}


def test_a_threshold_lets_paraphrases_match() -> None:
    a = ["Each turn has at most 50 words", "Be polite"]
    b = ["Each turn has at most fifty words", "Be polite"]
    # word-set Jaccard of the paraphrase: 6 shared / 8 distinct = 0.75
    assert rule_set_jaccard(a, b) == pytest.approx(1 / 3)
    assert rule_set_jaccard(a, b, threshold=0.75) == 1.0
    assert rule_set_jaccard(a, b, threshold=0.8) == pytest.approx(1 / 3)


def test_matching_is_one_to_one() -> None:
    # both rules of b resemble the single rule of a; only one may match it
    assert rule_set_jaccard(["x y z w"], ["x y z w", "x y z v"], threshold=0.5) == pytest.approx(
        1 / 2
    )


def test_identical_runs_have_no_variation() -> None:
    assert rule_set_variation([ruleset("a", "b")] * 3).variation == 0.0


def test_variation_needs_two_runs() -> None:
    with pytest.raises(ValueError):
        rule_set_variation([ruleset("a")])


async def test_stability_runs_the_atomizer_once_per_seed() -> None:
    sop = sop_from_markdown("# Tone\n\n- Be polite.\n- Be brief.\n", source="tone.md")
    seeds: list[int | None] = []

    def script(request: Request) -> str:
        prompt = request.messages[1].content
        if prompt.startswith("Rules kept so far:"):
            return '{"atomic": true, "overlaps": null}'
        seeds.append(request.seed)
        third = "Be brief." if request.seed != 2 else "Keep it short."
        return "\n".join(json.dumps({"text": t, "tier": "sub"}) for t in ("Be polite.", third))

    report = await stability(sop, Model(register_fake("stab", script)), runs=3)
    assert seeds == [0, 1, 2]
    # runs 0 and 1 agree (J = 1); run 2 shares 1 of 3 distinct rules with each (J = 1/3)
    assert report.pairwise == pytest.approx((1.0, 1 / 3, 1 / 3))
    assert report.variation == pytest.approx(1 - 5 / 9)
    assert len(report.reports) == 3 and report.reports[0]["kept"] == 2


async def test_stability_refuses_runs_that_all_extracted_nothing() -> None:
    sop = sop_from_markdown("# Tone\n\n- Be polite.\n", source="tone.md")
    echo = Model(register_fake("stab-echo", lambda r: r.messages[0].content))  # unreadable
    with pytest.raises(InputError, match="every one of the 2 runs extracted no rule") as info:
        await stability(sop, echo, runs=2)
    assert "tone.md" in info.value.one_line()
