"""Agreement statistics between annotators (pure functions over labels and count tables).

Two raters: :func:`cohen_kappa` (unweighted) and :func:`weighted_kappa` (linear or
quadratic weights) over aligned label sequences, or :func:`kappa_from_confusion` over a
confusion matrix built once with :func:`confusion_matrix`. Any number of raters, missing
ratings allowed: :func:`fleiss_kappa` and :func:`krippendorff_alpha` (nominal, ordinal or
interval). Balanced accuracy: :func:`balanced_accuracy`, undefined when a class has no gold
item (:func:`mean_recall` states the rule). Every function returns NaN where its statistic
is undefined, and :func:`shown` prints a figure with its n, as too few under
:data:`MIN_PAIRS` pairs.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

Weights = Literal["none", "linear", "quadratic"]
Level = Literal["nominal", "ordinal", "interval"]


def confusion_matrix(
    a: Sequence[Hashable], b: Sequence[Hashable], categories: Sequence[Hashable]
) -> np.ndarray:
    """Counts of (label of ``a``, label of ``b``): rows follow ``a``, columns ``b``.

    Args:
        a: labels of the first rater, one per item.
        b: labels of the second rater, aligned with ``a``.
        categories: every category, in the order of the rows and columns.

    Raises:
        ValueError: different lengths, or a label that is not among ``categories``.
    """
    if len(a) != len(b):
        raise ValueError(f"aligned labels needed, got {len(a)} and {len(b)}")
    index = {c: i for i, c in enumerate(categories)}
    try:
        rows, cols = [index[x] for x in a], [index[y] for y in b]
    except KeyError as exc:
        raise ValueError(f"label {exc.args[0]!r} is not among {list(categories)}") from None
    table = np.zeros((len(categories), len(categories)))
    np.add.at(table, (rows, cols), 1.0)
    return table


def kappa_from_confusion(table: ArrayLike, weights: Weights = "none") -> float:
    """Cohen's kappa from a k x k confusion matrix, unweighted or weighted.

    kappa_w = 1 - sum(w * observed) / sum(w * expected), where expected is the outer
    product of the two raters' marginals and w the disagreement weights between
    category positions i and j: 1 off the diagonal (``none``, which is exactly
    (p_o - p_e) / (1 - p_e)), ``|i - j| / (k - 1)`` (``linear``) or its square
    (``quadratic``).

    Returns:
        Kappa, or NaN when undefined (no items, one category, or no expected disagreement).
    """
    matrix = np.asarray(table, dtype=float)
    k, total = len(matrix), float(matrix.sum())
    if weights not in ("none", "linear", "quadratic"):
        raise ValueError(f"weights must be none, linear or quadratic, not {weights!r}")
    if total == 0 or k < 2:
        return math.nan
    observed = matrix / total
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    positions = np.arange(k)
    distance = np.abs(positions[:, None] - positions[None, :]) / (k - 1)
    w = {"none": (distance > 0).astype(float), "linear": distance, "quadratic": distance**2}
    denominator = float((w[weights] * expected).sum())
    if math.isclose(denominator, 0.0, abs_tol=1e-12):
        return math.nan
    return 1.0 - float((w[weights] * observed).sum()) / denominator


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
    categories = sorted(set(a) | set(b), key=repr)
    return kappa_from_confusion(confusion_matrix(a, b, categories))


def weighted_kappa(
    a: Sequence[int], b: Sequence[int], categories: Sequence[int], weights: str = "linear"
) -> float:
    """Cohen's weighted kappa for ordinal labels (e.g. relevance grades 0-3).

    See :func:`kappa_from_confusion` for the formula.

    Args:
        a: labels of the first rater.
        b: labels of the second rater, aligned with ``a``.
        categories: every category in order.
        weights: ``linear`` or ``quadratic``.

    Returns:
        Weighted kappa, or NaN when undefined (no items, or no expected disagreement).

    Raises:
        ValueError: different lengths, unknown weights, or a label outside ``categories``.
    """
    if len(a) != len(b):
        raise ValueError(f"weighted_kappa needs aligned labels, got {len(a)} and {len(b)}")
    if weights not in ("linear", "quadratic"):
        raise ValueError(f"weights must be linear or quadratic, not {weights!r}")
    table = confusion_matrix(a, b, categories)
    return kappa_from_confusion(table, weights)  # type: ignore[arg-type]


MIN_PAIRS = 10
"""An agreement figure over fewer pairs than this is reported as too few, not as a number."""


def shown(value: float | None, n: int, fmt: str = ".3f") -> str:
    """An agreement figure as text, with the number of pairs it is computed over.

    ``0.412 (n=80)``; ``n/a (n=6)`` when the figure is undefined; ``too few (n=3)`` under
    :data:`MIN_PAIRS` pairs, whatever the value came out as (a kappa of 1.0 over 3 pairs
    says nothing). ``fmt`` is a format spec, or ``%`` for a percentage.
    """
    if value is None or math.isnan(value):
        return f"n/a (n={n})"
    if n < MIN_PAIRS:
        return f"too few (n={n})"
    text = f"{100 * value:.1f}%" if fmt == "%" else format(value, fmt)
    return f"{text} (n={n})"


def recalls_from_confusion(table: ArrayLike) -> list[float]:
    """Recall of each gold class from a confusion matrix whose rows are gold classes.

    The recall of class i is ``table[i, i] / table[i].sum()``: the share of its gold items
    predicted as i. Columns past the last row count predictions outside the classes (an
    escalated pair without a label, say): misses for every class.

    Returns:
        One recall per row; NaN for a class without gold items.
    """
    matrix = np.asarray(table, dtype=float)
    totals = matrix.sum(axis=1)
    return [float(matrix[i, i] / totals[i]) if totals[i] else math.nan for i in range(len(matrix))]


def mean_recall(recalls: Sequence[float]) -> float:
    """Balanced accuracy from per-class recalls: their mean, NaN when any is NaN.

    The one rule for an absent class: a class of the scale without gold items has no
    recall, and then the balanced accuracy is undefined too. A mean over the classes
    present alone would be the plain recall of the one class left, which says nothing
    about balance: on an all-relevant gold set a judge that calls everything relevant
    would score 1.0. Report the present class's recall instead.
    """
    if not recalls or any(math.isnan(r) for r in recalls):
        return math.nan
    return float(np.mean(recalls))


def balanced_accuracy(
    gold: Sequence[Hashable],
    predicted: Sequence[Hashable | None],
    classes: Sequence[Hashable] = (0, 1),
) -> float:
    """The mean of the per-class recalls of ``predicted`` against ``gold``.

    Args:
        gold: gold labels, each one of ``classes``.
        predicted: predicted labels, aligned with ``gold``; a label outside ``classes``
            (None for an escalated pair, say) is a miss.
        classes: every class of the scale (default: irrelevant 0, relevant 1).

    Returns:
        Balanced accuracy in [0, 1]; NaN when a class has no gold item
        (see :func:`mean_recall` for why) or there are no items.

    Raises:
        ValueError: different lengths, or a gold label outside ``classes``.
    """
    if len(gold) != len(predicted):
        raise ValueError(
            f"balanced_accuracy needs aligned labels, got {len(gold)} and {len(predicted)}"
        )
    index = {c: i for i, c in enumerate(classes)}
    table = np.zeros((len(classes), len(classes) + 1))
    for g, p in zip(gold, predicted, strict=True):
        if g not in index:
            raise ValueError(f"gold label {g!r} is not among {list(classes)}")
        table[index[g], index.get(p, len(classes))] += 1
    return mean_recall(recalls_from_confusion(table))


# Fleiss' kappa and Krippendorff's alpha, for more than two raters and missing ratings.
# Two layouts: *counts* (one row per unit, one column per category, cell = raters who
# chose it) and *reliability data* (one row per rater, one column per unit, None or NaN
# where a rater did not rate a unit).


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


def _squared_distances(marginals: np.ndarray, level: Level, values: np.ndarray) -> np.ndarray:
    """Krippendorff's metric delta^2 between every pair of categories."""
    if level == "nominal":
        return 1.0 - np.eye(len(marginals))
    if level == "interval":
        return (values[:, None] - values[None, :]) ** 2
    # Ordinal: the count of values from c to k, less half of the two end categories.
    cumulative = np.cumsum(marginals)
    lo = np.minimum.outer(np.arange(len(marginals)), np.arange(len(marginals)))
    hi = np.maximum.outer(np.arange(len(marginals)), np.arange(len(marginals)))
    between = cumulative[hi] - cumulative[lo] + marginals[lo]
    return (between - (marginals[lo] + marginals[hi]) / 2) ** 2


def alpha_from_coincidences(
    coincidences: ArrayLike, level: Level = "nominal", values: Sequence[float] | None = None
) -> float:
    """Krippendorff's alpha from a category x category coincidence matrix.

    alpha = 1 - (n - 1) * sum(o_ck * d_ck) / sum(n_c * n_k * d_ck), with o the
    coincidences, n_c their marginals, n their total and d the squared distance of the
    level: 0/1 (nominal), (v_c - v_k)^2 (interval), or for ordinal data
    (n_c/2 + n_(c+1) + ... + n_(k-1) + n_k/2)^2 over the categories in order.

    Args:
        coincidences: symmetric matrix, categories in their order.
        level: ``nominal``, ``ordinal`` or ``interval``.
        values: the numeric value of each category (interval); default 0, 1, 2, ...

    Returns:
        Alpha, or NaN when undefined (no pairable value, or no expected disagreement).
    """
    o = np.asarray(coincidences, dtype=float)
    if level not in ("nominal", "ordinal", "interval"):
        raise ValueError(f"level must be nominal, ordinal or interval, not {level!r}")
    marginals = o.sum(axis=1)
    n = float(marginals.sum())
    numbers = np.arange(len(o), dtype=float) if values is None else np.asarray(values, float)
    d = _squared_distances(marginals, level, numbers)
    expected = float((np.outer(marginals, marginals) * d).sum())
    if n <= 1 or math.isclose(expected, 0.0, abs_tol=1e-12):
        return math.nan
    return 1.0 - (n - 1) * float((o * d).sum()) / expected


def alpha_from_confusion(
    table: ArrayLike, level: Level = "nominal", values: Sequence[float] | None = None
) -> float:
    """Krippendorff's alpha for two raters who rated every item, from their confusion matrix.

    Each item then adds one to o[a, b] and one to o[b, a], so the coincidences are
    ``table + table.T``.
    """
    matrix = np.asarray(table, dtype=float)
    return alpha_from_coincidences(matrix + matrix.T, level, values)


def krippendorff_alpha_counts(
    counts: ArrayLike, level: Level = "nominal", values: Sequence[float] | None = None
) -> float:
    """Krippendorff's alpha from a units x categories count matrix.

    Units with fewer than two values are not pairable and are dropped, as in
    Krippendorff's definition.

    Args:
        counts: the count matrix; its columns are the categories in order.
        level: ``nominal``, ``ordinal`` or ``interval``.
        values: numeric value of each column (interval); default 0, 1, 2, ...

    Returns:
        Alpha, or NaN when undefined (no pairable unit, or no variation at all).
    """
    table, m_u = _rated_units(counts)
    if len(table) == 0:
        return math.nan
    weighted = table / (m_u - 1)[:, None]
    # Coincidences: ordered value pairs within a unit, each unit weighted 1/(m_u-1).
    coincidences = weighted.T @ table - np.diag(weighted.sum(axis=0))
    return alpha_from_coincidences(coincidences, level, values)


def krippendorff_alpha(
    reliability_data: Sequence[Sequence[Hashable | None]], level: Level = "nominal"
) -> float:
    """Krippendorff's alpha, missing values allowed.

    Args:
        reliability_data: one row per rater, one column per unit; None (or NaN)
            where a rater did not rate a unit. Ordinal and interval data are numbers;
            their categories are the distinct values in numeric order.
        level: ``nominal``, ``ordinal`` or ``interval``.

    Returns:
        Alpha (1 perfect agreement, 0 chance level), or NaN when undefined.

    Raises:
        ValueError: rater rows of different lengths, or non-numeric ordinal/interval data.
    """
    rows = [list(r) for r in reliability_data]
    if len({len(r) for r in rows}) > 1:
        raise ValueError("every rater row must have one entry per unit")
    units = [list(col) for col in zip(*rows, strict=True)] if rows else []
    if level == "nominal":
        counts, _ = category_counts(units)
        return krippendorff_alpha_counts(counts)
    seen = {v for unit in units for v in unit if not _missing(v)}
    if any(isinstance(v, bool) or not isinstance(v, int | float) for v in seen):
        raise ValueError(f"{level} alpha needs numeric values")
    categories = sorted(seen)  # type: ignore[type-var]
    counts, _ = category_counts(units, categories)
    return krippendorff_alpha_counts(counts, level, [float(c) for c in categories])  # type: ignore[arg-type]
