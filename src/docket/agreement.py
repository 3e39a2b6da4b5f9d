"""Agreement statistics between annotators (pure functions over label sequences)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np
from numpy.typing import ArrayLike


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa between two raters who labelled the same items.

    kappa = (p_o - p_e) / (1 - p_e), where p_o is the observed agreement and p_e the
    agreement expected from each rater's label frequencies.

    Args:
        a: labels of the first rater, one per item.
        b: labels of the second rater, aligned with ``a``.

    Returns:
        Kappa in [-1, 1]; NaN when it is undefined (no items, or both raters used one
        and the same label for every item, so that p_e = 1).

    Raises:
        ValueError: when ``a`` and ``b`` have different lengths.
    """
    if len(a) != len(b):
        raise ValueError(f"cohen_kappa needs aligned labels, got {len(a)} and {len(b)}")
    if not a:
        return math.nan
    categories = sorted(set(a) | set(b), key=repr)
    index = {label: i for i, label in enumerate(categories)}
    table = np.zeros((len(categories), len(categories)))
    np.add.at(table, ([index[x] for x in a], [index[y] for y in b]), 1.0)
    table /= table.sum()
    observed = float(np.trace(table))
    expected = float(table.sum(axis=1) @ table.sum(axis=0))
    if math.isclose(expected, 1.0):
        return math.nan
    return (observed - expected) / (1.0 - expected)


# Fleiss' kappa and Krippendorff's alpha (nominal), for more than two raters and
# missing ratings. Two layouts: *counts* (one row per unit, one column per category,
# cell = raters who chose it) and *reliability data* (one row per rater, one column per
# unit, None or NaN where a rater did not rate a unit).


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def category_counts(
    units: Sequence[Sequence[Hashable | None]], categories: Sequence[Hashable] | None = None
) -> tuple[np.ndarray, list[Hashable]]:
    """Turn the ratings of each unit into a units x categories count matrix.

    Args:
        units: for each unit, the labels the raters gave it (missing ones skipped).
        categories: the category order; by default the sorted labels seen.

    Returns:
        The count matrix and the category list naming its columns.
    """
    seen = {v for unit in units for v in unit if not _missing(v)}
    cats = list(categories) if categories is not None else sorted(seen, key=repr)
    index = {c: i for i, c in enumerate(cats)}
    counts = np.zeros((len(units), len(cats)), dtype=float)
    for row, unit in enumerate(units):
        for value in unit:
            if not _missing(value):
                counts[row, index[value]] += 1
    return counts, cats


def _rated_units(counts: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The rows of a units x categories count matrix with two or more ratings, and their sums.

    Raises:
        ValueError: ``counts`` is not a 2-D matrix.
    """
    table = np.asarray(counts, dtype=float)
    if table.ndim != 2:
        raise ValueError("counts must be a 2-D units x categories matrix")
    totals = table.sum(axis=1)
    return table[totals >= 2], totals[totals >= 2]


def fleiss_kappa(counts: ArrayLike) -> float:
    """Fleiss' kappa for a units x categories count matrix.

    Units rated by fewer than two raters carry no agreement information and are
    dropped. Units may have different numbers of raters: each unit's agreement uses
    its own count (with a constant count this is exactly Fleiss' 1971 formula).

    Returns:
        Kappa, or NaN when it is undefined (no usable unit, or every rating in one
        category so that chance agreement is 1).
    """
    table, n_i = _rated_units(counts)
    if len(table) == 0:
        return math.nan
    p_j = table.sum(axis=0) / n_i.sum()
    p_i = ((table * table).sum(axis=1) - n_i) / (n_i * (n_i - 1))
    p_bar, p_e = float(p_i.mean()), float((p_j * p_j).sum())
    if math.isclose(p_e, 1.0):
        return math.nan
    return (p_bar - p_e) / (1 - p_e)


def krippendorff_alpha_counts(counts: ArrayLike) -> float:
    """Krippendorff's alpha (nominal) from a units x categories count matrix.

    Units with fewer than two values are not pairable and are dropped, as in
    Krippendorff's definition.

    Returns:
        Alpha, or NaN when undefined (no pairable unit, or no variation at all).
    """
    table, m_u = _rated_units(counts)
    if len(table) == 0:
        return math.nan
    weighted = table / (m_u - 1)[:, None]
    # Coincidence matrix: ordered value pairs within a unit, each unit weighted 1/(m_u-1).
    coincidences = weighted.T @ table - np.diag(weighted.sum(axis=0))
    n_c = coincidences.sum(axis=1)
    n = n_c.sum()
    observed = coincidences.sum() - np.trace(coincidences)
    expected = (n * n - (n_c * n_c).sum()) / (n - 1)
    if expected == 0:
        return math.nan
    return float(1 - observed / expected)


def krippendorff_alpha(reliability_data: Sequence[Sequence[Hashable | None]]) -> float:
    """Krippendorff's alpha for nominal data, missing values allowed.

    Args:
        reliability_data: one row per rater, one column per unit; None (or NaN)
            where a rater did not rate a unit.

    Returns:
        Alpha (1 perfect agreement, 0 chance level), or NaN when undefined.

    Raises:
        ValueError: when rater rows have different lengths.
    """
    rows = [list(r) for r in reliability_data]
    if len({len(r) for r in rows}) > 1:
        raise ValueError("every rater row must have one entry per unit")
    units = [list(col) for col in zip(*rows, strict=True)] if rows else []
    counts, _ = category_counts(units)
    return krippendorff_alpha_counts(counts)


def weighted_kappa(
    a: Sequence[int], b: Sequence[int], categories: Sequence[int], weights: str = "linear"
) -> float:
    """Cohen's weighted kappa for ordinal labels (e.g. relevance grades 0-3).

    kappa_w = 1 - sum(w * observed) / sum(w * expected), with disagreement weights
    ``|i - j| / (k - 1)`` (linear) or its square (quadratic) between category positions.

    Args:
        a: labels of the first rater.
        b: labels of the second rater, aligned with ``a``.
        categories: every category in order (labels outside it raise ValueError).
        weights: ``linear`` or ``quadratic``.

    Returns:
        Weighted kappa, or NaN when undefined (no items, or no expected disagreement).
    """
    if len(a) != len(b):
        raise ValueError(f"weighted_kappa needs aligned labels, got {len(a)} and {len(b)}")
    if weights not in ("linear", "quadratic"):
        raise ValueError(f"weights must be linear or quadratic, not {weights!r}")
    k = len(categories)
    if not a or k < 2:
        return math.nan
    index = {c: i for i, c in enumerate(categories)}
    table = np.zeros((k, k))
    np.add.at(table, ([index[x] for x in a], [index[y] for y in b]), 1.0)
    table /= table.sum()
    expected = np.outer(table.sum(axis=1), table.sum(axis=0))
    positions = np.arange(k)
    distance = np.abs(positions[:, None] - positions[None, :]) / (k - 1)
    w = distance if weights == "linear" else distance**2
    denominator = float((w * expected).sum())
    if math.isclose(denominator, 0.0):
        return math.nan
    return 1.0 - float((w * table).sum()) / denominator
