"""Prediction-powered estimates: LLM labels on a whole pool, human labels on a random sample.

Pure functions over numpy arrays (numpy and scipy only). Two designs:

**Pair level**, for a quantity linear in the labels, ``theta = sum_i c_i y_i`` over the pool
(P@k, DCG@k with binary or graded gains, prevalence; a difference of two systems is the
coefficient vector ``c_A - c_B``). With LLM labels ``yhat`` on every pair and human labels
``y`` on a sample drawn with inclusion probabilities ``pi``::

    theta_hat(lam) = lam * sum_i c_i yhat_i + sum_{i in s} c_i (y_i - lam * yhat_i) / pi_i

``lam = 1`` is the difference estimator, ``lam = 0`` the human-only Horvitz-Thompson
estimator; ``"tuned"`` picks the variance-minimising ``lam`` from the sample, clipped to
[0, 1] (the PPI++ power tuning, on the design variance). For a fixed ``lam`` the estimate
is design-unbiased; one sample serves every system and every pairwise difference.

Variance (:func:`design_covariance`): the sample is split into groups (strata of a
stratified draw; one group for a simple random sample), and within a group of ``n_h``
sampled pairs with ``u_i = z_i / pi_i``::

    v_h = (1 - mean pi) * n_h / (n_h - 1) * sum_i (u_i - mean u)^2

This is the unbiased variance estimator of stratified simple random sampling without
replacement (equal ``pi`` within a stratum, finite-population correction ``1 - pi``). With
unequal ``pi`` inside a group it is the with-replacement (Hansen-Hurwitz) approximation
with a mean finite-population correction. A group with a single sampled pair contributes
the Poisson-sampling term ``(1 - pi) u^2``. With ``floor=True`` the variance is at least
the model-assisted :func:`model_variance` (residuals exchangeable given the LLM label): a
difference of two similar systems touches few pairs, and a sample that misses them all
would otherwise report zero variance. Intervals are normal. ``benchmarks/ppi_coverage.py``
measures coverage: tuned ``lam`` with the floor is what ``docket eval systems --ppi`` uses.

**Query level**, for any measure: a random set of queries judged whole by humans, PPI++
(Angelopoulos, Duchi and Zrnic 2023) on per-query values, tuned ``lam`` clipped to [0, 1].
:func:`ppi_mean` is the estimator of that paper (the same numbers as ``ppi-python``'s
``ppi_mean_ci``); :func:`ppi_mean_finite` targets the mean over the collection's own
queries (simple random sample of them without replacement), with the finite-population
correction and Student-t quantiles, because ten or twenty judged queries are few.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

Lambda = float | Literal["tuned"]


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its standard error and two-sided interval.

    Attributes:
        estimate: the point estimate.
        se: its estimated standard error.
        low: lower end of the interval.
        high: upper end of the interval.
        lam: the power-tuning weight used (1: difference estimator, 0: humans only).
        df: degrees of freedom of the t quantile, None for the normal one.
    """

    estimate: float
    se: float
    low: float
    high: float
    lam: float
    df: float | None = None

    def p_value(self) -> float:
        """Two-sided p-value of ``estimate == 0`` under the interval's own distribution."""
        return two_sided_p(self.estimate, self.se, self.df)


@functools.lru_cache(maxsize=256)
def quantile(alpha: float, df: float | None = None) -> float:
    """Upper ``alpha / 2`` quantile: normal, or Student-t with ``df`` degrees of freedom."""
    if df is None:
        return float(stats.norm.ppf(1 - alpha / 2))
    return float(stats.t.ppf(1 - alpha / 2, df))


def two_sided_p(estimate: float, se: float, df: float | None = None) -> float:
    """Two-sided p-value of the estimate against zero; NaN without a standard error."""
    if not se > 0:
        return 0.0 if se == 0 and estimate != 0 else (1.0 if se == 0 else math.nan)
    statistic = abs(estimate) / se
    tail = stats.norm.sf(statistic) if df is None else stats.t.sf(statistic, df)
    return float(2 * tail)


def design_covariance(
    z1: ArrayLike, z2: ArrayLike, probability: ArrayLike, groups: ArrayLike | None = None
) -> np.ndarray:
    """Estimated covariance of the Horvitz-Thompson totals of ``z1`` and ``z2``.

    Args:
        z1: values of the sampled units, shape ``(..., n)`` (leading axes: several
            quantities or several samples at once).
        z2: the second variable, same shape (``z1`` again for a variance).
        probability: inclusion probabilities, broadcastable to ``(..., n)``.
        groups: stratum of each sampled unit (integers), broadcastable to ``(..., n)``;
            None: one group.

    Returns:
        The estimate over the leading axes (see the module docstring for the formula).
    """
    z1, z2 = np.asarray(z1, dtype=float), np.asarray(z2, dtype=float)
    if groups is None:
        return _one_group(z1, z2, np.asarray(probability, dtype=float))
    pi = np.broadcast_to(np.asarray(probability, dtype=float), z1.shape)
    u1, u2 = z1 / pi, z2 / pi
    groups = np.broadcast_to(np.asarray(groups), z1.shape)
    return sum(
        (_group_covariance(u1, u2, pi, groups == g) for g in np.unique(groups)),
        start=np.zeros(z1.shape[:-1]),
    )


def _one_group(z1: np.ndarray, z2: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """:func:`_group_covariance` of a single group, without masks (the common case)."""
    n = z1.shape[-1]
    fpc = 1.0 - np.broadcast_to(pi, z1.shape).mean(axis=-1) if pi.ndim else 1.0 - float(pi)
    d1 = z1 / pi
    d1 = d1 - d1.mean(axis=-1, keepdims=True)
    if z2 is z1:
        d2 = d1
    else:
        d2 = z2 / pi
        d2 = d2 - d2.mean(axis=-1, keepdims=True)
    if n > 1:
        return fpc * n / (n - 1) * np.einsum("...i,...i->...", d1, d2)
    return fpc * np.sum(z1 * z2 / pi**2, axis=-1) if n == 1 else np.zeros(z1.shape[:-1])


def _group_covariance(u1: np.ndarray, u2: np.ndarray, pi: np.ndarray, mask: np.ndarray):
    n_h = mask.sum(axis=-1)
    count = np.maximum(n_h, 1)
    fpc = 1.0 - np.sum(pi * mask, axis=-1) / count
    d1 = (u1 - np.sum(u1 * mask, axis=-1, keepdims=True) / count[..., None]) * mask
    d2 = (u2 - np.sum(u2 * mask, axis=-1, keepdims=True) / count[..., None]) * mask
    spread = fpc * n_h / np.maximum(n_h - 1, 1) * np.sum(d1 * d2, axis=-1)
    single = fpc * np.sum(u1 * u2 * mask, axis=-1)  # one sampled unit: the Poisson term
    return np.where(n_h > 1, spread, np.where(n_h == 1, single, 0.0))


def tuned_lambda(cov_yh: np.ndarray, var_h: np.ndarray) -> np.ndarray:
    """``cov / var`` clipped to [0, 1]; 1 (the difference estimator) where ``var`` is 0."""
    cov_yh, var_h = np.asarray(cov_yh, dtype=float), np.asarray(var_h, dtype=float)
    safe = np.where(var_h > 0, var_h, 1.0)
    return np.where(var_h > 0, np.clip(cov_yh / safe, 0.0, 1.0), 1.0)


def pair_estimates(
    coef: ArrayLike,
    predicted: ArrayLike,
    sample: ArrayLike,
    human: ArrayLike,
    probability: ArrayLike,
    groups: ArrayLike | None = None,
    lam: Lambda = 1.0,
    floor: bool = False,
    frame: ArrayLike | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pair-level estimates of ``coef @ y`` for every row of ``coef``.

    Args:
        coef: ``(k, N)`` coefficients of ``k`` linear quantities over the ``N`` pool pairs.
        predicted: ``(N,)`` LLM labels (or gains) of every pool pair; ``(..., N)`` to
            pair each sample with its own labels.
        sample: ``(..., n)`` indexes into the pool of the human-labelled pairs (leading
            axes: several samples at once).
        human: human labels (gains) of the sampled pairs, the shape of ``sample``.
        probability: inclusion probabilities of the sampled pairs, broadcastable to it.
        groups: stratum of each sampled pair (shape of ``sample``), or None (one group).
        lam: power-tuning weight in [0, 1], or ``"tuned"``.

    Returns:
        ``(estimate, variance, lam)``, each of shape ``(k, ...)``.
    """
    coef = np.atleast_2d(np.asarray(coef, dtype=float))
    sample = np.asarray(sample)
    predicted = np.broadcast_to(
        np.asarray(predicted, dtype=float), sample.shape[:-1] + coef.shape[-1:]
    )
    c = coef[:, sample]  # (k, ..., n)
    zy = c * np.asarray(human, dtype=float)
    zh = c * predicted_sample(predicted, sample)
    full = np.tensordot(coef, predicted, axes=([1], [-1]))
    if lam == "tuned":
        weight = tuned_lambda(
            design_covariance(zy, zh, probability, groups),
            design_covariance(zh, zh, probability, groups),
        )
    else:
        weight = np.full(c.shape[:-1], float(lam))
    z = zy - weight[..., None] * zh
    pi = np.broadcast_to(np.asarray(probability, dtype=float), z.shape)
    estimate = weight * full + np.sum(z / pi, axis=-1)
    variance = design_covariance(z, z, probability, groups)  # z twice: one pass
    if floor:
        residual = np.asarray(human, dtype=float) - weight[..., None] * predicted_sample(
            predicted, sample
        )
        # Humans only (lam = 0): one class, so the interval owes nothing to the LLM labels.
        classes = predicted if np.any(weight != 0) else np.zeros_like(predicted)
        model = model_variance(coef, classes, sample, residual, probability, frame)
        variance = np.maximum(variance, model)
    return estimate, variance, weight


def predicted_sample(predicted: np.ndarray, sample: np.ndarray) -> np.ndarray:
    """The predictions of the sampled pairs, shape of ``sample``."""
    return np.take_along_axis(predicted, sample, axis=-1)


def model_variance(
    coef: np.ndarray,
    predicted: np.ndarray,
    sample: np.ndarray,
    residual: np.ndarray,
    probability: ArrayLike,
    frame: ArrayLike | None = None,
) -> np.ndarray:
    """Model-assisted variance of the estimate: errors exchangeable given the LLM label.

    The design variance estimate is computed from the sampled pairs a quantity's
    coefficients touch; a contrast of two similar systems touches few, and a sample that
    misses them all estimates zero variance. Here the residual's mean and second moment
    are estimated per LLM label value from every sampled pair (weighted by ``1 / pi``) and
    carried to every frame pair through its known coefficient, under simple random
    sampling at the overall sampling rate.

    Args:
        coef: ``(k, N)`` coefficients.
        predicted: ``(..., N)`` LLM labels of the pool.
        sample: ``(..., n)`` sampled indexes.
        residual: ``(k, ..., n)`` residuals ``y - lam * yhat`` of the sampled pairs.
        probability: inclusion probabilities of the sampled pairs.
        frame: ``(N,)`` True for the pairs the sample was drawn from (default: all).
    """
    weights = 1.0 / np.broadcast_to(np.asarray(probability, dtype=float), sample.shape)
    coef = coef if frame is None else coef * np.asarray(frame, dtype=float)
    size = coef.shape[1] if frame is None else int(np.sum(frame))
    labels = predicted_sample(predicted, sample)
    second = np.zeros(residual.shape[:-1])
    first = np.zeros(residual.shape[:-1])
    for value in np.unique(predicted):
        in_sample = (labels == value) * weights
        total = in_sample.sum(axis=-1)
        safe = np.where(total > 0, total, 1.0)
        m2 = np.sum(in_sample * residual**2, axis=-1) / safe
        mu = np.sum(in_sample * residual, axis=-1) / safe
        in_pool = (predicted == value).astype(float)
        second = second + np.tensordot(coef**2, in_pool, axes=([1], [-1])) * m2
        first = first + np.tensordot(coef, in_pool, axes=([1], [-1])) * mu
    n = sample.shape[-1]
    spread = (second - first**2 / size) / max(size - 1, 1)
    return size**2 * max(1 - n / size, 0.0) / n * np.maximum(spread, 0.0)


def pair_intervals(
    coef: ArrayLike,
    predicted: ArrayLike,
    sample: ArrayLike,
    human: ArrayLike,
    probability: ArrayLike,
    groups: ArrayLike | None = None,
    lam: Lambda = 1.0,
    alpha: float = 0.05,
    floor: bool = False,
    frame: ArrayLike | None = None,
) -> list[Estimate]:
    """:func:`pair_estimates` of one sample as normal ``1 - alpha`` intervals, one per row."""
    estimate, variance, weight = pair_estimates(
        coef, predicted, sample, human, probability, groups, lam, floor, frame
    )
    z = quantile(alpha)
    result = []
    for e, v, w in zip(estimate.ravel(), variance.ravel(), weight.ravel(), strict=True):
        se = math.sqrt(max(float(v), 0.0))
        result.append(Estimate(float(e), se, float(e) - z * se, float(e) + z * se, float(w)))
    return result


def _as_vectors(*arrays: ArrayLike) -> list[np.ndarray]:
    return [np.asarray(a, dtype=float).ravel() for a in arrays]


def ppi_lambda(y: ArrayLike, yhat: ArrayLike, yhat_unlabeled: ArrayLike) -> float:
    """PPI++'s power-tuning weight of a mean, clipped to [0, 1].

    ``cov(y, yhat) / ((1 + n / N) var(yhat over labelled and unlabelled))``: the weight that
    minimises the asymptotic variance of :func:`ppi_mean` (1 where ``yhat`` is constant).
    """
    y, yhat, unlabeled = _as_vectors(y, yhat, yhat_unlabeled)
    n, big_n = y.size, unlabeled.size
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    var = float(np.var(np.concatenate([yhat, unlabeled]), ddof=1))
    return float(tuned_lambda(cov, (1 + n / big_n) * var))


def ppi_mean(
    y: ArrayLike,
    yhat: ArrayLike,
    yhat_unlabeled: ArrayLike,
    alpha: float = 0.1,
    lam: float | None = None,
    t_quantile: bool = False,
) -> Estimate:
    """PPI++ estimate and interval of a mean (labelled and unlabelled samples disjoint).

    ``lam * mean(yhat_unlabeled) + mean(y - lam * yhat)``, standard error
    ``sqrt(var(lam * yhat_unlabeled) / N + var(y - lam * yhat) / n)`` (variances with
    divisor n), normal quantile by default, Student-t with ``n - 1`` degrees of freedom
    with ``t_quantile``.

    Args:
        y: human values of the labelled units.
        yhat: predicted values of the same units.
        yhat_unlabeled: predicted values of the unlabelled units.
        alpha: one minus the confidence level.
        lam: power-tuning weight; None: :func:`ppi_lambda`.
        t_quantile: use Student-t quantiles (small samples).
    """
    y, yhat, unlabeled = _as_vectors(y, yhat, yhat_unlabeled)
    weight = ppi_lambda(y, yhat, unlabeled) if lam is None else float(lam)
    estimate = weight * unlabeled.mean() + float(np.mean(y - weight * yhat))
    se = math.sqrt(np.var(weight * unlabeled) / unlabeled.size + np.var(y - weight * yhat) / y.size)
    return _interval(float(estimate), se, weight, alpha, y.size - 1 if t_quantile else None)


def ppi_mean_finite(
    y: ArrayLike,
    yhat: ArrayLike,
    yhat_all: ArrayLike,
    alpha: float = 0.1,
    lam: float | None = None,
) -> Estimate:
    """Mean over a finite set of units, from a simple random sample of them.

    Every unit has a prediction (``yhat_all``, the sampled ones included); the sampled
    ``n`` have human values too. ``lam * mean(yhat_all) + mean(y - lam * yhat)`` is
    unbiased for the mean of the ``N`` human values; its variance
    ``(1 - n / N) var(y - lam * yhat) / n`` (divisor ``n - 1``) has the finite-population
    correction, and the interval Student-t quantiles with ``n - 1`` degrees of freedom.
    The tuned ``lam`` (``lam=None``) is the sample regression slope
    ``cov(y, yhat) / var(yhat)`` clipped to [0, 1]; it costs one more degree of freedom
    (divisor and t quantile ``n - 2``), as in the regression estimator.
    """
    y, yhat, every = _as_vectors(y, yhat, yhat_all)
    n, big_n = y.size, every.size
    tuned = lam is None
    if tuned:
        cov = float(np.cov(y, yhat, ddof=1)[0, 1]) if n > 2 else 0.0
        weight = float(tuned_lambda(cov, np.var(yhat, ddof=1) if n > 2 else 0.0))
    else:
        weight = float(lam)
    residual = y - weight * yhat
    estimate = weight * float(every.mean()) + float(residual.mean())
    # A slope fitted on the sample costs a degree of freedom, as in the regression estimator.
    ddof = 2 if tuned else 1
    var = (1 - n / big_n) * float(np.var(residual, ddof=ddof)) / n if n > ddof else math.nan
    return _interval(estimate, math.sqrt(var), weight, alpha, n - ddof)


def _interval(estimate: float, se: float, lam: float, alpha: float, df: float | None) -> Estimate:
    q = quantile(alpha, df)
    return Estimate(estimate, se, estimate - q * se, estimate + q * se, lam, df)
