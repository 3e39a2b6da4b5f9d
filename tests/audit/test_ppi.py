"""Prediction-powered estimates: PPI++ against ppi-python, Horvitz-Thompson by hand."""

from __future__ import annotations

import itertools

import numpy as np
import ppi_py
import pytest

from docket.audit.ppi import (
    design_covariance,
    pair_estimates,
    pair_intervals,
    ppi_lambda,
    ppi_mean,
    ppi_mean_finite,
)


def _fixed_data(seed: int = 7):
    rng = np.random.default_rng(seed)
    truth = rng.normal(0.4, 0.2, 300)
    y = truth[:60] + rng.normal(0, 0.05, 60)
    yhat = truth[:60] + rng.normal(0.1, 0.1, 60)
    yhat_unlabeled = truth[60:] + rng.normal(0.1, 0.1, 240)
    return y, yhat, yhat_unlabeled


@pytest.mark.parametrize("alpha", [0.1, 0.05])
def test_ppi_mean_matches_ppi_python_with_tuned_lambda(alpha):
    y, yhat, unlabeled = _fixed_data()
    ours = ppi_mean(y, yhat, unlabeled, alpha=alpha)
    point = ppi_py.ppi_mean_pointestimate(y, yhat, unlabeled)
    low, high = ppi_py.ppi_mean_ci(y, yhat, unlabeled, alpha=alpha)
    assert ours.estimate == pytest.approx(float(np.ravel(point)[0]), abs=1e-9)
    assert ours.low == pytest.approx(float(np.ravel(low)[0]), abs=1e-9)
    assert ours.high == pytest.approx(float(np.ravel(high)[0]), abs=1e-9)
    assert 0 < ours.lam < 1  # tuned, not clipped, on this data


@pytest.mark.parametrize("lam", [0.0, 0.3, 1.0])
def test_ppi_mean_matches_ppi_python_with_given_lambda(lam):
    y, yhat, unlabeled = _fixed_data(11)
    ours = ppi_mean(y, yhat, unlabeled, alpha=0.1, lam=lam)
    point = ppi_py.ppi_mean_pointestimate(y, yhat, unlabeled, lam=lam)
    low, high = ppi_py.ppi_mean_ci(y, yhat, unlabeled, alpha=0.1, lam=lam)
    assert ours.estimate == pytest.approx(float(np.ravel(point)[0]), abs=1e-9)
    assert (ours.low, ours.high) == pytest.approx(
        (float(np.ravel(low)[0]), float(np.ravel(high)[0])), abs=1e-9
    )


def test_ppi_lambda_by_hand_and_clipped_to_the_unit_interval():
    y = np.array([0.0, 1.0, 0.0, 1.0])
    # cov (divisor n) 0.25 over (1 + 4/4) * var of the eight predictions (ddof 1) 2/7
    assert ppi_lambda(y, y, y) == pytest.approx(0.25 / (2 * 2 / 7))
    assert ppi_lambda(y, 1 - y, [0.2, 0.8]) == 0.0  # anti-correlated: clipped at 0
    assert ppi_lambda(y, 0.1 * y, [0.0] * 50) == 1.0  # slope above 1: clipped at 1


def test_t_quantile_widens_the_small_sample_interval():
    y, yhat, unlabeled = _fixed_data()
    normal = ppi_mean(y[:8], yhat[:8], unlabeled, alpha=0.1)
    student = ppi_mean(y[:8], yhat[:8], unlabeled, alpha=0.1, t_quantile=True)
    assert student.estimate == normal.estimate
    assert student.high - student.low > normal.high - normal.low
    assert student.df == 7


# A pool of four pairs, one linear quantity: c = (0.5, 0.25, 0.25, 0).
COEF = np.array([[0.5, 0.25, 0.25, 0.0]])
PREDICTED = np.array([1.0, 0.0, 1.0, 0.0])
HUMAN = np.array([0.0, 1.0, 1.0, 1.0])  # every pair's human label (for the enumeration)


def test_difference_estimate_and_variance_by_hand():
    # Sample pairs 0 and 1 (pi = 2/4). Sum c*yhat = 0.75; z = c(y - yhat) = (-0.5, 0.25);
    # sum z/pi = -0.5, so 0.25. u = z/pi = (-1, 0.5): (1 - 0.5) * 2/1 * 1.125 = 1.125,
    # the textbook N^2 (1 - f) s_z^2 / n = 16 * 0.5 * 0.28125 / 2.
    est, var, lam = pair_estimates(COEF, PREDICTED, [0, 1], [0.0, 1.0], 0.5)
    assert est[0] == pytest.approx(0.25)
    assert var[0] == pytest.approx(1.125)
    assert lam[0] == 1.0
    human_only, var0, _ = pair_estimates(COEF, PREDICTED, [0, 1], [0.0, 1.0], 0.5, lam=0.0)
    assert human_only[0] == pytest.approx(0.5)  # 0.25 / 0.5
    # u = c y / pi = (0, 0.5): (1 - 0.5) * 2 * 0.125
    assert var0[0] == pytest.approx(0.125)


@pytest.mark.parametrize("lam", [1.0, 0.0, 0.6])
def test_simple_random_sampling_is_unbiased_in_estimate_and_variance(lam):
    samples = np.array(list(itertools.combinations(range(4), 2)))
    est, var, _ = pair_estimates(COEF, PREDICTED, samples, HUMAN[samples], 0.5, lam=lam)
    truth = float(COEF[0] @ HUMAN)
    assert est[0].mean() == pytest.approx(truth)
    assert var[0].mean() == pytest.approx(est[0].var())  # every sample equally likely


def test_stratified_sampling_is_unbiased_in_estimate_and_variance():
    # Strata {0, 1, 2} (two drawn, pi = 2/3) and {3, 4} (one drawn, pi = 1/2); a lone
    # drawn pair per stratum makes that stratum's variance unestimable, so the second
    # stratum draws both (pi = 1: a census, no variance).
    coef = np.array([[0.2, 0.3, 0.1, 0.25, 0.15], [0.1, -0.2, 0.3, 0.0, 0.4]])
    predicted = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    human = np.array([0.0, 1.0, 1.0, 1.0, 1.0])
    samples = np.array([[a, b, 3, 4] for a, b in itertools.combinations(range(3), 2)])
    pi = np.array([2 / 3, 2 / 3, 1.0, 1.0])
    groups = np.array([0, 0, 1, 1])
    est, var, _ = pair_estimates(coef, predicted, samples, human[samples], pi, groups)
    truth = coef @ human
    assert est.mean(axis=1) == pytest.approx(truth)
    assert var.mean(axis=1) == pytest.approx(est.var(axis=1))


def test_tuned_lambda_is_clipped_and_one_without_llm_variation():
    est, _, lam = pair_estimates(COEF, np.zeros(4), [0, 1], [0.0, 1.0], 0.5, lam="tuned")
    assert lam[0] == 1.0  # no variation of the LLM term in the sample
    _, _, lam = pair_estimates(COEF, PREDICTED, [0, 1, 2], [0.0, 1.0, 1.0], 0.75, lam="tuned")
    assert 0.0 <= lam[0] <= 1.0


def test_a_single_sampled_pair_gets_the_poisson_term():
    z = np.array([2.0, 1.0, 3.0])
    pi = np.array([0.5, 0.5, 0.25])
    var = design_covariance(z, z, pi, groups=[0, 0, 1])
    # group 0: u = (4, 2), (1 - 0.5) * 2 * 2 = 2; group 1: (1 - 0.25) * 12^2 = 108
    assert var == pytest.approx(110.0)


def test_pair_intervals_are_normal_intervals():
    (one,) = pair_intervals(COEF, PREDICTED, [0, 1], [0.0, 1.0], 0.5, alpha=0.1)
    assert one.estimate == pytest.approx(0.25)
    assert one.high - one.estimate == pytest.approx(1.6448536269514722 * 1.125**0.5)
    assert one.p_value() == pytest.approx(0.8136, abs=1e-3)


def test_finite_population_mean_by_hand():
    # N = 5 queries, n = 3 judged; lam = 1: 0.48 + mean(y - yhat) = 0.48 + 0.1 = 0.58.
    yhat_all = np.array([0.4, 0.6, 0.5, 0.3, 0.6])
    e = ppi_mean_finite([0.5, 0.7, 0.6], yhat_all[:3], yhat_all, alpha=0.1, lam=1.0)
    assert e.estimate == pytest.approx(0.58)
    assert e.se == 0.0  # the residuals are constant
    e = ppi_mean_finite([0.5, 0.9, 0.4], yhat_all[:3], yhat_all, alpha=0.1, lam=1.0)
    # residuals (0.1, 0.3, -0.1): var 0.04, (1 - 3/5) * 0.04 / 3
    assert e.se**2 == pytest.approx(0.4 * 0.04 / 3)
    assert e.df == 2


def test_the_floor_gives_variance_to_a_contrast_the_sample_misses():
    # Pool of 6; the contrast touches pairs 4 and 5 only; the sample (0-3) misses both.
    coef = np.array([[0.0, 0.0, 0.0, 0.0, 0.5, -0.5]])
    predicted = np.array([1.0, 0.0, 1.0, 0.0, 1.0, 0.0])
    human = np.array([0.0, 0.0, 1.0, 1.0])  # residuals: -1, 0, 0, 1
    sample = [0, 1, 2, 3]
    _, design, _ = pair_estimates(coef, predicted, sample, human, 4 / 6)
    assert design[0] == 0.0
    _, floored, _ = pair_estimates(coef, predicted, sample, human, 4 / 6, floor=True)
    # Per LLM label: yhat = 1 residuals (-1, 0): m2 0.5, mean -0.5; yhat = 0 (0, 1): 0.5, 0.5.
    # sum c^2 m2 = 0.25 * 0.5 * 2 = 0.25; sum c mu = 0.5 * -0.5 - 0.5 * 0.5 = -0.5;
    # S^2 = (0.25 - 0.25 / 6) / 5; variance = 6^2 (1 - 4/6) / 4 * S^2.
    expected = 36 * (1 - 4 / 6) / 4 * (0.25 - 0.25 / 6) / 5
    assert floored[0] == pytest.approx(expected)


def test_the_floor_never_lowers_the_design_variance():
    rng = np.random.default_rng(3)
    coef = rng.random((5, 40))
    predicted = (rng.random(40) < 0.4).astype(float)
    sample = rng.choice(40, 12, replace=False)
    human = (rng.random(12) < 0.5).astype(float)
    _, design, _ = pair_estimates(coef, predicted, sample, human, 12 / 40, lam="tuned")
    _, floored, _ = pair_estimates(coef, predicted, sample, human, 12 / 40, lam="tuned", floor=True)
    assert np.all(floored >= design)
