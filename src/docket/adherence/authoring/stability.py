"""How much the extracted rule set varies between atomizer runs.

Variation is ``1 - mean pairwise Jaccard`` of the runs' rule sets, where rules are
compared by normalised text (lower case, punctuation and extra spaces removed). With
``threshold < 1`` two rules also match when the Jaccard similarity of their word sets
reaches the threshold (one-to-one, greedy best match first), so a paraphrase counts as
the same rule.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from itertools import combinations
from typing import Any

from docket.adherence.authoring.atomize import AtomizeOptions, Progress, atomize
from docket.adherence.authoring.sop import SopDocument
from docket.adherence.rules.model import RuleSet
from docket.errors import InputError
from docket.llm import Model

_NON_WORD = re.compile(r"[^\w\s]")


def normalise_rule_text(text: str) -> str:
    """Lower case, punctuation removed, whitespace collapsed."""
    return " ".join(_NON_WORD.sub(" ", text.casefold()).split())


def _word_jaccard(a: str, b: str) -> float:
    left, right = set(a.split()), set(b.split())
    return len(left & right) / len(left | right) if left | right else 1.0


def matched_pairs(a: Sequence[str], b: Sequence[str], threshold: float = 1.0) -> int:
    """How many rules of ``a`` and ``b`` match one-to-one (exact normalised text at 1.0)."""
    left, right = (
        sorted({normalise_rule_text(t) for t in a}),
        sorted({normalise_rule_text(t) for t in b}),
    )
    if threshold >= 1.0:
        return len(set(left) & set(right))
    scored = sorted(
        ((_word_jaccard(x, y), i, j) for i, x in enumerate(left) for j, y in enumerate(right)),
        reverse=True,
    )
    used_left, used_right, matches = set(), set(), 0
    for score, i, j in scored:
        if score < threshold:
            break
        if i not in used_left and j not in used_right:
            used_left.add(i), used_right.add(j)
            matches += 1
    return matches


def rule_set_jaccard(a: Sequence[str], b: Sequence[str], threshold: float = 1.0) -> float:
    """Jaccard similarity of two lists of rule texts (1.0 when both are empty)."""
    size_a, size_b = (
        len({normalise_rule_text(t) for t in a}),
        len({normalise_rule_text(t) for t in b}),
    )
    matches = matched_pairs(a, b, threshold)
    union = size_a + size_b - matches
    return matches / union if union else 1.0


@dataclass(frozen=True)
class StabilityReport:
    """Variation between runs.

    Attributes:
        runs: how many rule sets were compared.
        variation: ``1 - mean_jaccard`` (0 = identical rule sets every time).
        mean_jaccard: mean pairwise Jaccard similarity.
        pairwise: the Jaccard similarity of each pair of runs, in order (0,1), (0,2), ...
        rule_counts: number of rules per run.
        tier_counts: ``{'fmt': n, 'sim': n, 'sub': n}`` per run.
        threshold: word-set similarity at which two rules count as the same.
    """

    runs: int
    variation: float
    mean_jaccard: float
    pairwise: tuple[float, ...]
    rule_counts: tuple[int, ...]
    tier_counts: tuple[dict[str, int], ...]
    threshold: float = 1.0
    reports: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        return asdict(self)


def rule_set_variation(rulesets: Sequence[RuleSet], threshold: float = 1.0) -> StabilityReport:
    """Compare rule sets pairwise (needs at least two)."""
    if len(rulesets) < 2:
        raise ValueError("stability needs at least two rule sets")
    texts = [[rule.text for rule in ruleset.rules] for ruleset in rulesets]
    pairwise = tuple(rule_set_jaccard(a, b, threshold) for a, b in combinations(texts, 2))
    mean = sum(pairwise) / len(pairwise)
    return StabilityReport(
        runs=len(rulesets),
        variation=1.0 - mean,
        mean_jaccard=mean,
        pairwise=pairwise,
        rule_counts=tuple(len(r.rules) for r in rulesets),
        tier_counts=tuple(r.tier_counts() for r in rulesets),
        threshold=threshold,
    )


async def stability(
    sop: SopDocument,
    model: Model,
    runs: int = 3,
    options: AtomizeOptions | None = None,
    threshold: float = 1.0,
    progress: Progress | None = None,
) -> StabilityReport:
    """Extract ``runs`` times (seed = run number) and report the variation.

    Raises:
        InputError: every run extracted no rule (identical empty sets say nothing about
            stability).
    """
    base = options or AtomizeOptions(temperature=0.7)
    results = []
    for run in range(runs):  # sequential: runs share the model's concurrency limit anyway
        say = _prefixed(progress, f"run {run + 1}/{runs}: ")
        results.append(await atomize(sop, model, replace(base, seed=run), say))
    if all(not r.ruleset.rules for r in results):
        reasons = [why for r in results for why in r.report.skip_reasons]
        raise InputError(
            f"every one of the {runs} runs extracted no rule"
            + (f" (e.g. {reasons[0]})" if reasons else ""),
            path=sop.source,
            hint="check the model (--model) with `docket rules extract` first",
        )
    report = rule_set_variation([r.ruleset for r in results], threshold)
    return replace(report, reports=tuple(r.report.to_json() for r in results))


def _prefixed(progress: Progress | None, prefix: str) -> Progress | None:
    if progress is None:
        return None
    return lambda line: progress(prefix + line)


__all__ = [
    "StabilityReport",
    "matched_pairs",
    "normalise_rule_text",
    "rule_set_jaccard",
    "rule_set_variation",
    "stability",
]
