"""Estimates over the final labels of a job (automatic + human), from the audit sample.

Final label of a pair: the human's where a human answered (escalated pairs, the census;
answered audit pairs), otherwise the automatic label. Truth is the human label. Totals over
the automatic pairs of stratum h are estimated from its answered audit pairs as
``N_h * mean``; for a ratio (a recall) the variance is the linearised one,
``sum_h N_h^2 (1 - n_h/N_h) s_h^2(e) / n_h / B^2`` with ``e = a - R b``, and the interval
is normal, clipped to [0, 1]. Answered audit pairs are taken as a simple random sample of
their stratum (unanswered ones are assumed missing at random: the report warns).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from docket.audit.proportions import Interval, z_value

Unit = tuple[int, int]
"""(human label, automatic label) of one answered audit pair."""


@dataclass(frozen=True)
class Sample:
    """One automatic stratum: its size and the (human, automatic) labels of its answers."""

    population: int
    answered: Sequence[Unit]


@dataclass(frozen=True)
class FinalLabelEstimates:
    """Recall of each class, balanced accuracy and the share of relevant pairs."""

    recall_relevant: Interval
    recall_irrelevant: Interval
    balanced_accuracy: Interval
    relevant_share: Interval


def _totals(census: Sequence[int], samples: Sequence[Sample], f: Callable[[int, int], float],
            *, final_is_truth: bool) -> float:  # fmt: skip
    """Estimated population total of ``f(y, final)`` (census exact, strata expanded)."""
    total = float(sum(f(y, y) for y in census))
    for s in samples:
        if not s.answered:
            return math.nan
        known = sum(f(y, y) for y, _ in s.answered) if final_is_truth else 0.0
        others = s.population - len(s.answered) if final_is_truth else s.population
        total += known + others * float(np.mean([f(y, a) for y, a in s.answered]))
    return total


def _variance(samples: Sequence[Sample], residual: Callable[[int, int], float]) -> float:
    """``sum_h N_h^2 (1 - f_h) s_h^2 / n_h`` of the residual over each stratum's answers."""
    variance = 0.0
    for s in samples:
        n = len(s.answered)
        if n < 2 or n >= s.population:
            continue
        values = np.array([residual(y, a) for y, a in s.answered], dtype=float)
        variance += s.population**2 * (1 - n / s.population) * values.var(ddof=1) / n
    return variance


def _interval(estimate: float, variance: float, n: int, z: float, method: str) -> Interval:
    if math.isnan(estimate):
        return Interval(math.nan, 0.0, 1.0, n, method)
    half = z * math.sqrt(variance)
    return Interval(estimate, max(0.0, estimate - half), min(1.0, estimate + half), n, method)


def _recall_parts(census: Sequence[int], samples: Sequence[Sample], c: int) -> tuple[float, float]:
    """Estimated totals of pairs of class ``c`` labelled ``c`` in the end, and of class ``c``.

    On answered pairs the final label is the truth, so each of class ``c`` is a hit.
    """
    hits = _totals(census, samples, lambda y, a: float(y == c and a == c), final_is_truth=True)
    size = _totals(census, samples, lambda y, a: float(y == c), final_is_truth=False)
    return hits, size


def final_label_estimates(
    census: Sequence[int], samples: Sequence[Sample], confidence: float = 0.95
) -> FinalLabelEstimates:
    """Per-class recall, balanced accuracy and relevant share of the final labels.

    Args:
        census: human labels of the answered escalated pairs.
        samples: the automatic strata with their answered audit pairs.
        confidence: of every interval.
    """
    z = z_value(confidence)
    n = len(census) + sum(len(s.answered) for s in samples)
    recalls, residuals = {}, {}
    for c in (1, 0):
        hits, size = _recall_parts(census, samples, c)
        ratio = hits / size if size else math.nan
        recalls[c] = (ratio, size)
        residuals[c] = _recall_residual(c, ratio, size)
    intervals = {
        c: _interval(r, _variance(samples, residuals[c]), n, z, "linearised normal")
        for c, (r, _) in recalls.items()
    }
    balanced = (recalls[1][0] + recalls[0][0]) / 2

    def both(y: int, a: int) -> float:
        return (residuals[1](y, a) + residuals[0](y, a)) / 2

    total = len(census) + sum(s.population for s in samples)
    relevant = recalls[1][1]
    share = relevant / total if total else math.nan
    share_var = _variance(samples, lambda y, a: float(y == 1)) / total**2 if total else 0.0
    return FinalLabelEstimates(
        recall_relevant=intervals[1],
        recall_irrelevant=intervals[0],
        balanced_accuracy=_interval(balanced, _variance(samples, both), n, z, "linearised normal"),
        relevant_share=_interval(share, share_var, n, z, "stratified normal"),
    )


def _recall_residual(c: int, ratio: float, size: float) -> Callable[[int, int], float]:
    """The linearised residual ``(1[y=c, auto=c] - R 1[y=c]) / B`` of recall of ``c``."""
    if not size or math.isnan(ratio):
        return lambda y, a: 0.0
    return lambda y, a: (float(y == c and a == c) - ratio * float(y == c)) / size
