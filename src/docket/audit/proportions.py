"""Statistics of an audit: intervals for proportions, the stratified estimator, allocation.

Pure functions over counts (numpy and scipy only), so a notebook can check every figure of
a certificate by hand.

Intervals:

- one proportion (an audit stratum): Wilson's score interval, or the exact
  (Clopper-Pearson) interval; ``method="auto"`` takes the exact one below
  :data:`SMALL_STRATUM` audited pairs, where Wilson's may under-cover;
- a stratified proportion (the accuracy of all automatic labels): a normal interval on
  ``sum_h W_h p_h`` with the finite-population correction ``1 - n_h / N_h``; each
  stratum's variance uses the Agresti-Coull-adjusted proportion
  ``(k_h + z^2/2) / (n_h + z^2)``, so a stratum in which no error was seen still adds
  variance instead of claiming certainty.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

SMALL_STRATUM = 30
"""Below this many audited pairs a stratum's interval is the exact one (and a warning)."""


@dataclass(frozen=True)
class Interval:
    """A proportion with its confidence interval; ``n`` is the sample it rests on."""

    estimate: float
    low: float
    high: float
    n: int
    method: str

    def as_dict(self) -> dict[str, float | int | str | None]:
        """JSON-ready values (NaN becomes None)."""
        return {
            "estimate": _clean(self.estimate),
            "ci_low": _clean(self.low),
            "ci_high": _clean(self.high),
            "n": self.n,
            "method": self.method,
        }


def _clean(value: float) -> float | None:
    return None if math.isnan(value) else round(float(value), 6)


def z_value(confidence: float) -> float:
    """The two-sided standard normal quantile for ``confidence`` (0.95 -> 1.96).

    Raises:
        ValueError: ``confidence`` outside (0, 1).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence}")
    return float(stats.norm.ppf(0.5 + confidence / 2.0))


def _check_counts(k: int, n: int) -> None:
    if n < 0 or not 0 <= k <= max(n, 0):
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval for ``k`` successes in ``n`` trials ((0, 1) when n = 0)."""
    _check_counts(k, n)
    if n == 0:
        return 0.0, 1.0
    z = z_value(confidence)
    p = k / n
    denominator = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def exact_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval for ``k`` successes in ``n`` trials."""
    _check_counts(k, n)
    if n == 0:
        return 0.0, 1.0
    alpha = 1.0 - confidence
    low = 0.0 if k == 0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k == n else float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return low, high


def proportion_interval(k: int, n: int, confidence: float = 0.95, method: str = "auto") -> Interval:
    """``k / n`` with its interval: ``wilson``, ``exact``, or ``auto`` (exact below
    :data:`SMALL_STRATUM` trials, Wilson from there on)."""
    if method == "auto":
        method = "exact" if n < SMALL_STRATUM else "wilson"
    if method not in ("wilson", "exact"):
        raise ValueError(f"method must be auto, wilson or exact, not {method!r}")
    low, high = (wilson_interval if method == "wilson" else exact_interval)(k, n, confidence)
    return Interval(k / n if n else math.nan, low, high, n, method)


@dataclass(frozen=True)
class Stratum:
    """One stratum of a population: ``population`` pairs, ``audited`` answered, ``correct``."""

    name: str
    population: int
    audited: int
    correct: int


def _adjusted(k: int, n: int, z: float) -> float:
    return (k + z * z / 2) / (n + z * z)


def stratified_proportion(strata: Sequence[Stratum], confidence: float = 0.95) -> Interval:
    """The stratified estimate ``sum_h W_h k_h / n_h`` (``W_h = N_h / N``) with its interval.

    Variance: ``sum_h W_h^2 (1 - n_h/N_h) p~_h (1 - p~_h) / n_h`` with the
    Agresti-Coull-adjusted ``p~_h`` (see the module docstring); the interval is normal,
    clipped to [0, 1]. A stratum with pairs but none audited makes the estimate NaN and
    the interval conservative: that stratum counts as all wrong for the low end and all
    right for the high end.
    """
    total = sum(s.population for s in strata)
    if total == 0:
        return Interval(math.nan, 0.0, 1.0, 0, "stratified normal")
    z = z_value(confidence)
    estimate, variance, unknown = 0.0, 0.0, 0.0
    for s in strata:
        _check_counts(s.correct, s.audited)
        if s.audited > s.population:
            raise ValueError(f"stratum {s.name}: audited {s.audited} > population {s.population}")
        weight = s.population / total
        if s.audited == 0:
            unknown += weight
            continue
        estimate += weight * s.correct / s.audited
        p = _adjusted(s.correct, s.audited, z)
        fpc = 1.0 - s.audited / s.population
        variance += weight * weight * fpc * p * (1 - p) / s.audited
    half = z * math.sqrt(variance)
    n = sum(s.audited for s in strata)
    low, high = max(0.0, estimate - half), min(1.0, estimate + unknown + half)
    return Interval(math.nan if unknown else estimate, low, high, n, "stratified normal")


def neyman_weights(
    populations: Mapping[str, int], error_rates: Mapping[str, float]
) -> dict[str, float]:
    """Neyman weights ``N_h * sqrt(p_h (1 - p_h))`` from per-stratum error rates."""
    return {
        h: size * math.sqrt(max(error_rates[h], 0.0) * max(1.0 - error_rates[h], 0.0))
        for h, size in populations.items()
    }


def smoothed_error_rate(errors: int, audited: int) -> float:
    """An error rate that is never 0 or 1: ``(errors + 1) / (audited + 2)`` (Laplace)."""
    return (errors + 1) / (audited + 2)


def allocate(
    populations: Mapping[str, int],
    total: int,
    weights: Mapping[str, float] | None = None,
    *,
    minimum: Mapping[str, int] | None = None,
) -> dict[str, int]:
    """Split ``total`` audit pairs over strata in proportion to ``weights``.

    Each stratum gets between its ``minimum`` (default 0) and its population; ``weights``
    default to the populations (proportional allocation). Real-valued shares are found by
    water-filling under those bounds, then rounded by largest remainder, so the counts sum
    to ``total`` exactly.

    Raises:
        ValueError: ``total`` above the population, or below the sum of the minimums.
    """
    names = list(populations)
    upper = np.array([populations[h] for h in names], dtype=float)
    lower = np.array([(minimum or {}).get(h, 0) for h in names], dtype=float)
    if total > upper.sum() or total < lower.sum() or (lower > upper).any():
        raise ValueError(
            f"cannot split {total} pairs over strata of {int(upper.sum())} "
            f"with {int(lower.sum())} already drawn"
        )
    w = np.array([(weights or populations)[h] for h in names], dtype=float)
    w = np.maximum(w, 1e-9 * np.maximum(upper, 1.0))  # a zero weight still fills last
    shares = _water_fill(w, lower, upper, float(total))
    counts = np.floor(shares + 1e-9).clip(lower, upper)
    order = np.argsort(-(shares - counts), kind="stable")
    while counts.sum() < total:
        for i in order:
            if counts.sum() < total and counts[i] < upper[i]:
                counts[i] += 1
    return {h: int(c) for h, c in zip(names, counts, strict=True)}


def _water_fill(w: np.ndarray, lower: np.ndarray, upper: np.ndarray, total: float) -> np.ndarray:
    """Shares ``clip(c * w, lower, upper)`` with the ``c`` that makes them sum to ``total``."""
    low, high = 0.0, float((upper / w).max()) + 1.0
    for _ in range(200):
        middle = (low + high) / 2
        if np.clip(middle * w, lower, upper).sum() < total:
            low = middle
        else:
            high = middle
    return np.clip(high * w, lower, upper)


def stratified_half_width(
    populations: Mapping[str, int],
    allocation: Mapping[str, int],
    error_rates: Mapping[str, float],
    confidence: float = 0.95,
) -> float:
    """The planned half-width ``z * sqrt(sum_h W_h^2 (1 - n_h/N_h) p_h (1 - p_h) / n_h)``.

    A stratum with pairs and no audit makes the half-width infinite.
    """
    total = sum(populations.values())
    variance = 0.0
    for h, size in populations.items():
        n = allocation.get(h, 0)
        if size == 0 or n >= size:
            continue
        if n == 0:
            return math.inf
        p = error_rates[h]
        variance += (size / total) ** 2 * (1 - n / size) * p * (1 - p) / n
    return z_value(confidence) * math.sqrt(variance)


def plan_size(
    populations: Mapping[str, int],
    error_rates: Mapping[str, float],
    half_width: float,
    *,
    confidence: float = 0.95,
    weights: Mapping[str, float] | None = None,
    minimum: Mapping[str, int] | None = None,
) -> tuple[int, dict[str, int]]:
    """The smallest audit whose allocation reaches ``half_width`` on overall accuracy.

    Allocation as :func:`allocate` with ``weights`` (proportional by default) and the
    ``minimum`` already drawn. Returns the total and its allocation (the whole population
    when no smaller audit is enough).

    Raises:
        ValueError: ``half_width`` not in (0, 1).
    """
    if not 0.0 < half_width < 1.0:
        raise ValueError(f"half-width must be between 0 and 1, not {half_width}")
    floor = max(sum((minimum or {}).values()), min(len(populations), 1))
    low, high = floor, sum(populations.values())

    def reaches(n: int) -> tuple[bool, dict[str, int]]:
        split = allocate(
            populations, n, weights, minimum=minimum_per_stratum(populations, n, minimum)
        )
        width = stratified_half_width(populations, split, error_rates, confidence)
        return width <= half_width, split

    ok, best = reaches(high)
    while low < high:  # the half-width shrinks as the audit grows
        middle = (low + high) // 2
        ok, split = reaches(middle)
        if ok:
            high, best = middle, split
        else:
            low = middle + 1
    return high, best


def minimum_per_stratum(
    populations: Mapping[str, int], total: int, drawn: Mapping[str, int] | None = None
) -> dict[str, int]:
    """The lower bounds a draw respects: what is ``drawn`` already, and one pair per
    non-empty stratum when ``total`` covers them all (else that stratum's accuracy would
    have no estimate)."""
    base = dict(drawn or {})
    if total >= sum(1 for size in populations.values() if size):
        for h, size in populations.items():
            base[h] = max(base.get(h, 0), 1 if size else 0)
    return base
