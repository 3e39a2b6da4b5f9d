"""Paired significance tests between systems over per-query scores, with Holm's correction.

Two tests per pair of systems, both two-sided on the mean per-query difference:

* the paired t-test (``scipy.stats.ttest_rel``);
* a randomization (sign-flip permutation) test in numpy: each query's difference keeps
  or flips its sign at random. With ``2**n`` no larger than the permutation budget every
  sign vector is enumerated (an exact p-value); otherwise ``permutations`` random sign
  vectors give ``p = (1 + hits) / (1 + permutations)``. All pairs of one comparison use
  the same sign vectors.

Holm's step-down correction controls the family-wise error over all pairs of one qrels
variant and one test.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel

from docket.errors import ConfigError

# Relative tolerance when comparing permuted statistics with the observed one, so that
# floating-point noise does not turn an equal statistic into a smaller one.
_TOLERANCE = 1e-9


def paired_t_test(x: Sequence[float], y: Sequence[float]) -> float:
    """Two-sided p-value of the paired t-test of ``x`` against ``y``.

    Same value as ``scipy.stats.ttest_rel``; the statistic is computed here and only the
    t distribution's tail comes from scipy, because ``ttest_rel``'s per-call overhead
    (tens of milliseconds) dominates when hundreds of pairs are tested.

    Returns:
        The p-value; 1.0 when every difference is zero, 0.0 when all differences are
        equal and non-zero, NaN with fewer than two queries.
    """
    from scipy import stats

    diffs = np.asarray(x, dtype=float) - np.asarray(y, dtype=float)
    n = diffs.size
    if n < 2:
        return math.nan
    mean, sd = float(diffs.mean()), float(diffs.std(ddof=1))
    if sd <= _TOLERANCE * max(abs(mean), 1e-300):
        return 1.0 if mean == 0 else 0.0
    statistic = mean / (sd / math.sqrt(n))
    return float(2 * stats.t.sf(abs(statistic), n - 1))


def sign_vectors(n: int, permutations: int = 10_000, seed: int = 0) -> tuple[np.ndarray, bool]:
    """The sign vectors of a randomization test over ``n`` queries, and whether exact.

    Every one of the ``2**n`` vectors when that fits the budget, else ``permutations``
    random ones (int8, so 10,000 x 10,000 queries take 100 MB at most). Drawing them once
    and reusing them for every pair of systems is what makes many pairs cheap.
    """
    if 2**n <= permutations:
        return np.array(list(itertools.product((1, -1), repeat=n)), dtype=np.int8), True
    rng = np.random.default_rng(seed)
    return rng.choice(np.array((1, -1), dtype=np.int8), size=(permutations, n)), False


def randomization_test(
    x: Sequence[float], y: Sequence[float], permutations: int = 10_000, seed: int = 0
) -> float:
    """Two-sided p-value of the paired randomization test on the mean difference.

    Args:
        x: per-query scores of the first system.
        y: per-query scores of the second system, aligned with ``x``.
        permutations: random sign vectors drawn when exact enumeration needs more.
        seed: seed of the random sign vectors.
    """
    diffs = np.asarray(x, dtype=float) - np.asarray(y, dtype=float)
    if diffs.size == 0:
        return math.nan
    return float(
        randomization_tests(diffs[:, None], sign_vectors(diffs.size, permutations, seed))[0]
    )


def randomization_tests(diffs: np.ndarray, signs: tuple[np.ndarray, bool]) -> np.ndarray:
    """p-values of many randomization tests at once, one per column of ``diffs``.

    Args:
        diffs: queries x pairs matrix of per-query differences.
        signs: the sign vectors of :func:`sign_vectors` for that many queries.
    """
    matrix, exact = signs
    n = diffs.shape[0]
    thresholds = np.abs(diffs.mean(axis=0)) * (1 - _TOLERANCE)
    hits = np.zeros(diffs.shape[1], dtype=np.int64)
    for start in range(0, len(matrix), 1000):  # float64 copies of 1000 rows at a time
        block = matrix[start : start + 1000].astype(float)
        hits += np.sum(np.abs(block @ diffs) / n >= thresholds, axis=0)
    return hits / len(matrix) if exact else (1 + hits) / (1 + len(matrix))


def holm(pvalues: Sequence[float], alpha: float = 0.05) -> tuple[list[float], list[bool]]:
    """Holm-adjusted p-values and reject decisions at family-wise level ``alpha``.

    NaN p-values are kept as NaN, never rejected, and do not count towards the family.
    """
    order = sorted((p, i) for i, p in enumerate(pvalues) if not math.isnan(p))
    m = len(order)
    adjusted = [math.nan] * len(pvalues)
    running = 0.0
    for rank, (p, index) in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[index] = running
    return adjusted, [not math.isnan(p) and p <= alpha for p in adjusted]


class PairTest(BaseModel):
    """Paired tests of system ``a`` against system ``b`` under one qrels variant."""

    variant: str
    measure: str
    a: str
    b: str
    queries: int
    mean_a: float
    mean_b: float
    t_p: float | None
    t_p_holm: float | None
    t_significant: bool
    randomization_p: float | None
    randomization_p_holm: float | None
    randomization_significant: bool


def require_two_systems(count: int) -> None:
    """Refuse a significance test over fewer than two systems.

    Raises:
        ConfigError: ``count`` < 2.
    """
    if count < 2:
        raise ConfigError(
            f"significance tests compare pairs of systems, and {count} system(s) were given",
            hint="pass two or more runs, or leave out --significance",
        )


def compare_pairs(
    per_query: Mapping[str, Mapping[str, float]],
    variant: str,
    measure: str,
    *,
    alpha: float = 0.05,
    permutations: int = 10_000,
    seed: int = 0,
) -> list[PairTest]:
    """Both tests for every pair of systems, Holm-corrected over the pairs.

    Args:
        per_query: ``{system: {qid: value}}``; every system must cover the same queries.
        variant: the qrels variant the scores come from (``original``, ``completed``).
        measure: the measure name.
        alpha: family-wise significance level.
        permutations: budget of the randomization test.
        seed: seed of the randomization test.

    Raises:
        ConfigError: fewer than two systems (there is no pair to compare).
    """
    names = list(per_query)
    require_two_systems(len(names))
    qids = sorted(per_query[names[0]]) if names else []
    rows = []
    for a, b in itertools.combinations(names, 2):
        x = [per_query[a][q] for q in qids]
        y = [per_query[b][q] for q in qids]
        rows.append((a, b, x, y, paired_t_test(x, y), math.nan))
    if rows and qids:
        diffs = np.array([np.subtract(r[2], r[3]) for r in rows]).T
        p_values = randomization_tests(diffs, sign_vectors(len(qids), permutations, seed))
        rows = [(*r[:5], float(p)) for r, p in zip(rows, p_values, strict=True)]
    t_adj, t_rej = holm([r[4] for r in rows], alpha)
    r_adj, r_rej = holm([r[5] for r in rows], alpha)
    return [
        PairTest(
            variant=variant,
            measure=measure,
            a=a,
            b=b,
            queries=len(qids),
            mean_a=float(np.mean(x)) if x else math.nan,
            mean_b=float(np.mean(y)) if y else math.nan,
            t_p=_none(t_p),
            t_p_holm=_none(t_adj[i]),
            t_significant=t_rej[i],
            randomization_p=_none(r_p),
            randomization_p_holm=_none(r_adj[i]),
            randomization_significant=r_rej[i],
        )
        for i, (a, b, x, y, t_p, r_p) in enumerate(rows)
    ]


def _none(value: float) -> float | None:
    return None if math.isnan(value) else value
