"""Rank correlation in numpy: Kendall's tau-b, tau_AP (Yilmaz et al. 2008), Spearman, Pearson.

All functions take two aligned score vectors (one value per system, higher is better) and
return NaN when the statistic is undefined (fewer than two items, or a constant vector).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def _pair_signs(values: np.ndarray) -> np.ndarray:
    """Matrix of sign(values[i] - values[j])."""
    return np.sign(values[:, None] - values[None, :])


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b between two score vectors (ties handled as in tau-b).

    Args:
        x: scores of the items under the first ranking.
        y: scores of the same items under the second ranking.

    Returns:
        tau-b in [-1, 1], or NaN when undefined.
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"kendall_tau needs aligned vectors, got {a.shape} and {b.shape}")
    if a.size < 2:
        return math.nan
    upper = np.triu(np.ones((a.size, a.size), dtype=bool), k=1)
    sa, sb = _pair_signs(a)[upper], _pair_signs(b)[upper]
    untied_a, untied_b = np.count_nonzero(sa), np.count_nonzero(sb)
    if untied_a == 0 or untied_b == 0:
        return math.nan
    return float(np.sum(sa * sb) / math.sqrt(untied_a * untied_b))


def ranking_order(scores: Sequence[float], names: Sequence[str] | None = None) -> list[int]:
    """Indices of the items from best to worst; ties broken by name (or index) ascending."""
    keys = list(names) if names is not None else list(range(len(scores)))
    return sorted(range(len(scores)), key=lambda i: (-float(scores[i]), keys[i]))


def tau_ap(
    reference: Sequence[float], estimate: Sequence[float], names: Sequence[str] | None = None
) -> float:
    """AP rank correlation tau_AP of an estimated ranking against a reference ranking.

    tau_AP = 2 / (N - 1) * sum_{i=2..N} C(i) / (i - 1) - 1, where the items are taken in
    the order of ``estimate`` and C(i) counts the items above position i that the
    reference also ranks above the item at position i. Errors near the top weigh more.
    The statistic is asymmetric: ``reference`` plays the role of the true ranking.

    Args:
        reference: scores defining the reference ("true") ranking.
        estimate: scores defining the ranking under evaluation.
        names: tie-breakers for ``estimate`` (ties are broken by name, ascending).

    Returns:
        tau_AP in [-1, 1], or NaN with fewer than two items.
    """
    ref, est = np.asarray(reference, dtype=float), np.asarray(estimate, dtype=float)
    if ref.shape != est.shape:
        raise ValueError(f"tau_ap needs aligned vectors, got {ref.shape} and {est.shape}")
    n = ref.size
    if n < 2:
        return math.nan
    ordered = ref[ranking_order(est, names)]
    # above[a, b]: item at position a is above the item at position b in the reference.
    above = ordered[:, None] > ordered[None, :]
    correct = np.triu(above, k=1).sum(axis=0)[1:]
    return float(2.0 / (n - 1) * np.sum(correct / np.arange(1, n)) - 1.0)


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    """Pearson's correlation coefficient, or NaN when a vector is constant or too short."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"pearson needs aligned vectors, got {a.shape} and {b.shape}")
    if a.size < 2:
        return math.nan
    da, db = a - a.mean(), b - b.mean()
    denominator = math.sqrt(float(da @ da) * float(db @ db))
    return math.nan if denominator == 0 else float(da @ db) / denominator


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho: Pearson's correlation of the average ranks (ties share their mean rank).

    Returns:
        rho in [-1, 1], or NaN when a vector is constant or too short.
    """
    return pearson(average_ranks(x), average_ranks(y))


def average_ranks(scores: Sequence[float]) -> list[float]:
    """Rank of each item, 1 = highest score; tied items share the mean of their ranks."""
    values = np.asarray(scores, dtype=float)
    order = np.argsort(-values, kind="stable")
    ranks = np.empty(values.size)
    ranks[order] = np.arange(1, values.size + 1)
    for value in np.unique(values):
        tied = values == value
        ranks[tied] = ranks[tied].mean()
    return ranks.tolist()


def competition_ranks(scores: Sequence[float]) -> list[int]:
    """Rank of each item, 1 = best; tied items share the best rank ("1224" ranking)."""
    values = [float(s) for s in scores]
    return [1 + sum(other > value for other in values) for value in values]
