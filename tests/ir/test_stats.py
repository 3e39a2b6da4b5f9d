"""Rank correlations against hand-computed values (and scipy when it happens to be installed)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from docket.agreement import cohen_kappa
from docket.ir.stats import average_ranks, competition_ranks, kendall_tau, pearson, spearman, tau_ap

# Four systems; reference order A > B > C > D.
REF = [4.0, 3.0, 2.0, 1.0]


def test_tau_ap_weights_the_top() -> None:
    swap_bottom = [4.0, 2.0, 3.0, 1.0]  # estimate A > C > B > D
    swap_top = [3.0, 4.0, 2.0, 1.0]  # estimate B > A > C > D
    # Kendall's tau sees one discordant pair of six in both: (5 - 1) / 6
    assert kendall_tau(REF, swap_bottom) == pytest.approx(2 / 3)
    assert kendall_tau(REF, swap_top) == pytest.approx(2 / 3)
    # tau_AP by hand: 2/3 * (1 + 1/2 + 1) - 1 and 2/3 * (0 + 1 + 1) - 1
    assert tau_ap(REF, swap_bottom) == pytest.approx(2 / 3)
    assert tau_ap(REF, swap_top) == pytest.approx(1 / 3)


def test_identity_and_reversal() -> None:
    assert kendall_tau(REF, REF) == pytest.approx(1.0)
    assert tau_ap(REF, REF) == pytest.approx(1.0)
    assert kendall_tau(REF, REF[::-1]) == pytest.approx(-1.0)
    assert tau_ap(REF, REF[::-1]) == pytest.approx(-1.0)


def test_tau_b_with_ties_and_undefined_cases() -> None:
    # pairs: (0,1) tie in x; (0,2) concordant; (1,2) concordant -> 2 / sqrt(2 * 3)
    assert kendall_tau([1, 1, 2], [1, 2, 3]) == pytest.approx(2 / math.sqrt(6))
    assert math.isnan(kendall_tau([1, 1], [1, 2]))
    assert math.isnan(kendall_tau([1], [1]))
    assert math.isnan(tau_ap([1], [1]))


def test_against_scipy_when_available() -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(3)
    for _ in range(20):
        x = rng.integers(0, 5, size=12).astype(float)
        y = x + rng.integers(-2, 3, size=12)
        expected = stats.kendalltau(x, y).statistic
        assert kendall_tau(x, y) == pytest.approx(expected)
        assert pearson(x, y) == pytest.approx(stats.pearsonr(x, y).statistic)


def test_pearson_and_ranks() -> None:
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert math.isnan(pearson([1, 1, 1], [1, 2, 3]))
    assert competition_ranks([0.5, 0.9, 0.5, 0.1]) == [2, 1, 2, 4]


def test_cohen_kappa_by_hand() -> None:
    # 10 items: agree on 4 ones and 3 zeros; p_o = 0.7; p_e = 0.6*0.5 + 0.4*0.5 = 0.5
    a = [1, 1, 1, 1, 1, 1, 0, 0, 0, 0]
    b = [1, 1, 1, 1, 0, 0, 0, 0, 0, 1]
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(a, a) == pytest.approx(1.0)
    assert math.isnan(cohen_kappa([1, 1], [1, 1]))
    assert math.isnan(cohen_kappa([], []))
    with pytest.raises(ValueError):
        cohen_kappa([1], [1, 0])


def test_spearman_by_hand_and_with_ties() -> None:
    # Ranks 1..4 against 1, 3, 2, 4: d^2 = 0 + 1 + 1 + 0 -> 1 - 6 * 2 / (4 * 15) = 0.8
    assert spearman(REF, [4.0, 2.0, 3.0, 1.0]) == pytest.approx(0.8)
    assert spearman(REF, [1.0, 2.0, 3.0, 4.0]) == pytest.approx(-1.0)
    # Tied scores share their mean rank: 4, 2, 2, 1 -> ranks 1, 2.5, 2.5, 4.
    assert average_ranks([4.0, 2.0, 2.0, 1.0]) == [1.0, 2.5, 2.5, 4.0]
    assert spearman(REF, [4.0, 2.0, 2.0, 1.0]) == pytest.approx(
        pearson([1, 2, 3, 4], [1, 2.5, 2.5, 4])
    )
    assert math.isnan(spearman(REF, [1.0, 1.0, 1.0, 1.0]))


def test_spearman_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 5, 12).astype(float), rng.normal(size=12)
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic)
