"""Scoring verifier verdicts against RE-AD-Eval ground truth.

Per sample and rule of the run's rule set: a flag (``fail``) on the injected rule is a
true positive, a flag on any other rule a false positive, a missed injected rule a false
negative, a pass on another rule a true negative. ``needs_review`` is never silently a
pass: every score is reported twice, with needs_review counted as a flag and as a pass,
and the needs_review results are counted on their own. A rule the verifier skipped (its
scope does not apply) counts as not flagged.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field, computed_field

from docket.adherence.rules import Rule
from docket.adherence.verify.verdict import Verdict
from docket.readeval.dataset import Sample

Variant = Literal["flag", "pass"]


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


class Counts(BaseModel):
    """Confusion counts with precision, recall and F1 (None where undefined)."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def precision(self) -> float | None:
        """TP / (TP + FP)."""
        return _ratio(self.tp, self.tp + self.fp)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def recall(self) -> float | None:
        """TP / (TP + FN)."""
        return _ratio(self.tp, self.tp + self.fn)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def f1(self) -> float | None:
        """Harmonic mean of precision and recall."""
        return _ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn)

    def add(self, injected: bool, flagged: bool) -> None:
        """Count one (rule, sample) decision."""
        if injected:
            self.tp, self.fn = self.tp + flagged, self.fn + (not flagged)
        else:
            self.fp, self.tn = self.fp + flagged, self.tn + (not flagged)


@dataclass(frozen=True)
class RuleOutcome:
    """What the verifier said about one rule of one sample."""

    sample_id: str
    persona: str
    sample_tier: str
    rule_id: str
    tier: str
    injected: bool
    status: str  # pass, fail, needs_review or skipped


def rule_outcomes(sample: Sample, verdict: Verdict, rules: Sequence[Rule]) -> list[RuleOutcome]:
    """One outcome per rule of the run's rule set for one sample and its verdict."""
    results = verdict.by_rule()
    return [
        RuleOutcome(
            sample.id,
            sample.persona,
            sample.tier,
            rule.id,
            rule.tier,
            rule.id == sample.rule_id,
            results[rule.id].status if rule.id in results else "skipped",
        )
        for rule in rules
    ]


def is_flag(status: str, variant: Variant) -> bool:
    """Whether a status counts as a flag: fail always, needs_review in the ``flag`` variant."""
    return status == "fail" or (status == "needs_review" and variant == "flag")


class Breakdown(BaseModel):
    """Scores of one variant: overall and by rule tier, persona, sample tier and rule.

    ``by_tier`` groups each decision by the tier of the rule decided on (a false flag on a
    sub rule counts for ``sub``); ``by_sample_tier`` by the tier of the injected rule.
    ``exact`` is the share of samples whose flags are exactly the injected rule.
    """

    overall: Counts
    by_tier: dict[str, Counts]
    by_persona: dict[str, Counts]
    by_sample_tier: dict[str, Counts]
    by_rule: dict[str, Counts]
    exact: float | None


def breakdown(outcomes: Iterable[RuleOutcome], variant: Variant) -> Breakdown:
    """Tally outcomes into a :class:`Breakdown` for one needs_review variant."""
    overall = Counts()
    groups: dict[str, dict[str, Counts]] = {
        "tier": {},
        "persona": {},
        "sample_tier": {},
        "rule": {},
    }
    per_sample: dict[str, bool] = {}
    for item in outcomes:
        flagged = is_flag(item.status, variant)
        overall.add(item.injected, flagged)
        keys = {
            "tier": item.tier,
            "persona": item.persona,
            "sample_tier": item.sample_tier,
            "rule": item.rule_id,
        }
        for group, key in keys.items():
            groups[group].setdefault(key, Counts()).add(item.injected, flagged)
        right = flagged == item.injected
        per_sample[item.sample_id] = per_sample.get(item.sample_id, True) and right
    exact = _ratio(sum(per_sample.values()), len(per_sample))
    return Breakdown(
        overall=overall,
        by_tier=dict(sorted(groups["tier"].items())),
        by_persona=dict(sorted(groups["persona"].items())),
        by_sample_tier=dict(sorted(groups["sample_tier"].items())),
        by_rule=groups["rule"],
        exact=exact,
    )


class ReviewCounts(BaseModel):
    """needs_review results: all, on the injected rule, on other rules; samples with any."""

    results: int = 0
    on_injected: int = 0
    on_other: int = 0
    samples: int = 0


def review_counts(outcomes: Sequence[RuleOutcome]) -> ReviewCounts:
    """Count the needs_review results."""
    undecided = [o for o in outcomes if o.status == "needs_review"]
    return ReviewCounts(
        results=len(undecided),
        on_injected=sum(o.injected for o in undecided),
        on_other=sum(not o.injected for o in undecided),
        samples=len({o.sample_id for o in undecided}),
    )


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0-100) with linear interpolation; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


class SampleScore(BaseModel):
    """One sample's result: what was flagged or undecided, time and calls."""

    id: str
    rule_id: str
    flagged: list[str] = Field(default_factory=list)
    undecided: list[str] = Field(default_factory=list)
    ms: float = 0.0
    calls: int = 0


def sample_score(sample: Sample, verdict: Verdict) -> SampleScore:
    """The per-sample line of a report."""
    return SampleScore(
        id=sample.id,
        rule_id=sample.rule_id,
        flagged=[r.rule_id for r in verdict.results if r.status == "fail"],
        undecided=[r.rule_id for r in verdict.results if r.status == "needs_review"],
        ms=verdict.total_ms,
        calls=sum(timing.calls for timing in verdict.tiers.values()),
    )
