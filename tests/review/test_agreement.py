"""Fleiss' kappa and Krippendorff's alpha against hand computations and textbook values."""

from __future__ import annotations

import math

import pytest

from docket.agreement import (
    category_counts,
    fleiss_kappa,
    krippendorff_alpha,
    krippendorff_alpha_counts,
)

# Fleiss (1971) as worked on Wikipedia: 10 subjects, 14 raters, 5 categories, kappa 0.210.
FLEISS_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 observers,
# 12 units, missing values; nominal alpha = 0.743.
N = None
KRIPPENDORFF_DATA = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
]


def test_fleiss_kappa_textbook_example() -> None:
    assert fleiss_kappa(FLEISS_TABLE) == pytest.approx(0.2099, abs=5e-5)


def test_fleiss_kappa_hand_computed() -> None:
    # Items (3,0), (2,1), (0,3): P-bar = 7/9, p = (5/9, 4/9), Pe = 41/81,
    # kappa = (7/9 - 41/81) / (1 - 41/81) = 22/40.
    assert fleiss_kappa([[3, 0], [2, 1], [0, 3]]) == pytest.approx(22 / 40)


def test_fleiss_kappa_perfect_and_undefined() -> None:
    assert fleiss_kappa([[2, 0], [0, 2]]) == pytest.approx(1.0)
    assert math.isnan(fleiss_kappa([[2, 0], [3, 0]]))  # one category only: Pe = 1
    assert math.isnan(fleiss_kappa([[1, 0]]))  # no item with two ratings


def test_fleiss_kappa_drops_single_ratings() -> None:
    assert fleiss_kappa([[3, 0], [2, 1], [0, 3], [1, 0]]) == pytest.approx(22 / 40)


def test_krippendorff_alpha_textbook_example() -> None:
    assert krippendorff_alpha(KRIPPENDORFF_DATA) == pytest.approx(0.743, abs=5e-4)


def test_krippendorff_alpha_hand_computed() -> None:
    # Units (0,0), (1,1), (0,1); the fourth has one value and is not pairable.
    # Coincidences o00 = 2, o11 = 2, o01 = o10 = 1; n0 = n1 = 3, n = 6.
    # alpha = 1 - (n - 1) * (o01 + o10) / (2 * n0 * n1) = 1 - 5 * 2 / 18 = 4/9.
    data = [[0, 1, 0, None], [0, 1, 1, 1]]
    assert krippendorff_alpha(data) == pytest.approx(4 / 9)


def test_krippendorff_alpha_from_counts_matches_reliability_data() -> None:
    # Same three items as the Fleiss hand example. Coincidences: unit (3,0) gives
    # o00 += 3*2/2; unit (2,1) o00 += 1, o01 = o10 = 1; unit (0,3) o11 += 3.
    # o = [[4,1],[1,3]], n0 = 5, n1 = 4, n = 9: alpha = 1 - 8 * 2 / (2 * 5 * 4) = 0.6.
    assert krippendorff_alpha_counts([[3, 0], [2, 1], [0, 3]]) == pytest.approx(0.6)
    data = [[0, 0, 1], [0, 0, 1], [0, 1, 1]]
    assert krippendorff_alpha(data) == pytest.approx(0.6)


def test_krippendorff_alpha_undefined_and_bad_shape() -> None:
    assert math.isnan(krippendorff_alpha([[1, 1], [1, 1]]))  # no variation
    assert math.isnan(krippendorff_alpha([[1, None], [None, 2]]))  # nothing pairable
    with pytest.raises(ValueError):
        krippendorff_alpha([[1, 2], [1]])


def test_category_counts_skips_missing_values() -> None:
    counts, categories = category_counts([[1, 0, None], [float("nan"), 1]])
    assert categories == [0, 1]
    assert counts.tolist() == [[1, 1], [0, 1]]
