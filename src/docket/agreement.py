"""Agreement statistics between annotators (pure functions over label sequences)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np


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
