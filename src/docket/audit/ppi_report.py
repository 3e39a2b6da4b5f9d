"""The report of a prediction-powered evaluation of systems, and Holm over its pairs.

Shared by the pair-level and query-level paths of :mod:`docket.audit.systems`.
"""

from __future__ import annotations

import math

from pydantic import BaseModel

from docket.audit.ppi import Estimate, two_sided_p
from docket.ir.significance import holm


class Interval(BaseModel):
    """An estimate and its interval."""

    estimate: float
    ci_low: float
    ci_high: float


class SystemEstimate(BaseModel):
    """One system under one measure."""

    system: str
    measure: str
    estimate: float
    ci_low: float
    ci_high: float
    naive: float
    human_only: Interval
    lam: float


class PairDifference(BaseModel):
    """System ``a`` minus system ``b`` under one measure."""

    a: str
    b: str
    measure: str
    difference: float
    ci_low: float
    ci_high: float
    naive: float
    p_value: float
    p_holm: float
    significant: bool


class PpiReport(BaseModel):
    """Prediction-powered estimates of every system and every pair of systems."""

    design: str
    confidence: float
    human_labels: int
    unanswered: int
    frame: int
    measures: list[str]
    skipped_measures: list[str]
    systems: list[SystemEstimate]
    pairs: list[PairDifference]

    def unsupported_orders(self) -> list[PairDifference]:
        """Pairs the LLM-only figures order that the human sample does not support."""
        return [p for p in self.pairs if p.naive != 0 and not _supports(p)]

    def naive_outside(self) -> list[SystemEstimate]:
        """Systems whose naive (LLM-only) figure lies outside their interval."""
        return [s for s in self.systems if not s.ci_low <= s.naive <= s.ci_high]

    def to_json(self) -> dict:
        """``systems`` as ``{system: {measure: figures}}``, pairs as a list, and the lists
        of unsupported LLM-only orders and naive figures outside their intervals."""
        data = self.model_dump(mode="json", exclude={"systems"})
        systems: dict[str, dict[str, dict]] = {}
        for s in self.systems:
            figures = s.model_dump(mode="json", exclude={"system", "measure"})
            systems.setdefault(s.system, {})[s.measure] = figures
        data["systems"] = systems
        data["unsupported_orders"] = [
            p.model_dump(mode="json", include={"a", "b", "measure", "naive"})
            for p in self.unsupported_orders()
        ]
        data["naive_outside"] = [
            {"system": s.system, "measure": s.measure} for s in self.naive_outside()
        ]
        return data


def _supports(pair: PairDifference) -> bool:
    return pair.significant and (pair.difference > 0) == (pair.naive > 0)


def differences(
    runs, combos, measure: str, point: list[Estimate], simultaneous: list[Estimate], naive, alpha
) -> list[PairDifference]:
    """Differences with simultaneous intervals, p-values and Holm's decisions.

    Args:
        runs: the systems.
        combos: index pairs ``(a, b)`` of the differences ``a - b``.
        measure: the measure name.
        point: each difference's estimate at level ``alpha`` (its p-value).
        simultaneous: the same at level ``alpha / len(combos)`` (Bonferroni interval).
        naive: each difference under the LLM labels alone.
        alpha: Holm's family-wise level.
    """
    p_values = [two_sided_p(e.estimate, e.se, e.df) for e in point]
    adjusted, reject = holm(p_values, alpha)
    return [
        PairDifference(
            a=runs[a].name,
            b=runs[b].name,
            measure=measure,
            difference=e.estimate,
            ci_low=s.low,
            ci_high=s.high,
            naive=float(n),
            p_value=p,
            p_holm=_number(adj),
            significant=rej,
        )  # fmt: skip
        for (a, b), e, s, n, p, adj, rej in zip(
            combos, point, simultaneous, naive, p_values, adjusted, reject, strict=True
        )
    ]


def _number(value: float) -> float:
    return 1.0 if math.isnan(value) else value
