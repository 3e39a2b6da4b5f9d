"""Prediction-powered evaluation of retrieval systems: LLM-completed qrels + a human sample.

:func:`evaluate_systems_ppi` reports, for each system and measure, an estimate with its
interval beside the naive figure (LLM labels only) and the humans-only interval from the
same sample, and for each pair of systems the difference with a simultaneous
(Bonferroni) interval and Holm's decision, which give a partial order.

Pair level (default): measures linear in the labels (:mod:`docket.audit.linear`), one
random sample of pairs for every system and difference, PPI++ weight tuned per quantity,
variance = max(design estimate, model-assisted floor) (:mod:`docket.audit.ppi`); normal
intervals. Query level (``whole_queries``): the sample judges whole queries drawn at
random; any ``ir_measures`` measure; :func:`docket.audit.ppi.ppi_mean_finite` on
per-query values (finite-population correction, Student-t quantiles).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from docket.audit.linear import LinearMeasure, Pool, coefficients, linear_measures
from docket.audit.ppi import Estimate, pair_intervals
from docket.audit.ppi_report import (
    Interval,
    PpiReport,
    SystemEstimate,
    differences,
)
from docket.audit.samples import HumanSample, on_scale
from docket.audit.systems_queries import query_level
from docket.errors import ConfigError, InputError
from docket.ir.formats import Qrels, Run


def evaluate_systems_ppi(
    runs: Sequence[Run],
    llm_qrels: Qrels,
    sample: HumanSample,
    measures: Sequence[str],
    *,
    alpha: float = 0.05,
    original: Qrels | None = None,
    whole_queries: bool = False,
) -> PpiReport:
    """Estimates with ``1 - alpha`` intervals for every system, measure and pair.

    Args:
        runs: the systems.
        llm_qrels: the pool with LLM labels (completed qrels: originals + LLM labels).
        sample: human grades of a random sample of the automatically labelled pairs.
        measures: measure names; at pair level the linear ones (P@k, DCG@k, prevalence).
        alpha: one minus the confidence; also Holm's family-wise level.
        original: qrels judged by humans before completion: exact, outside the frame.
        whole_queries: the sample judges whole queries drawn at random (query level).

    Raises:
        InputError: a sampled pair outside the frame, or an empty sample.
        ConfigError: no system, or no measure the design can estimate.
    """
    if not runs:  # one system is an interval on its score; two or more also get differences
        raise ConfigError("no run to evaluate", hint="pass one or more runs")
    sample = on_scale(sample, llm_qrels)
    llm_qrels = _with_automatic(llm_qrels, sample)
    pool = Pool.of(llm_qrels)
    frame = _frame(pool, original)
    _check_sample(sample, pool, frame)
    if whole_queries:
        return query_level(runs, llm_qrels, sample, measures, alpha, original, frame)
    linear, skipped = linear_measures(measures)
    if not linear:
        raise ConfigError(
            f"no measure linear in the labels among {', '.join(measures)}",
            hint="pair samples estimate P@k, DCG@k and prevalence; for nDCG or AP "
            "judge whole queries and pass --ppi-queries",
        )
    systems, pairs = [], []
    for measure in linear:
        s, p = _pair_level(runs, pool, llm_qrels, sample, measure, frame, alpha)
        systems += s
        pairs += p
    return PpiReport(
        design="pairs", confidence=1 - alpha, human_labels=len(sample.grades),
        unanswered=sample.unanswered, frame=int(frame.sum()), measures=[str(m) for m in linear],
        skipped_measures=skipped, systems=systems, pairs=pairs,
    )  # fmt: skip


def _with_automatic(llm_qrels: Qrels, sample: HumanSample) -> Qrels:
    """The LLM labels with the sample's automatic labels where it knows them."""
    if not sample.automatic:
        return llm_qrels
    copy = {q: dict(docs) for q, docs in llm_qrels.items()}
    for (qid, docid), label in sample.automatic.items():
        if docid in copy.get(qid, {}):  # a pair outside the pool is refused below
            copy[qid][docid] = label
    return copy


def _frame(pool: Pool, original: Qrels | None) -> np.ndarray:
    """True for the pool pairs the sample was drawn from (not judged by humans before)."""
    if original is None:
        return np.ones(len(pool.pairs), dtype=bool)
    return np.array([d not in original.get(q, {}) for q, d in pool.pairs])


def _check_sample(sample: HumanSample, pool: Pool, frame: np.ndarray) -> None:
    if not sample.grades:
        raise InputError(f"the {sample.source} has no answered human label")
    index = pool.index()
    for qid, docid in sample.grades:
        i = index.get((qid, docid))
        if i is None or not frame[i]:
            where = "not in the pool" if i is None else "judged before completion"
            raise InputError(
                f"pair ({qid}, {docid}) of the {sample.source} is {where}",
                hint="the human sample must be drawn from the automatically labelled pairs",
            )


def _pair_level(runs, pool, llm_qrels, sample, measure: LinearMeasure, frame, alpha):
    coef = coefficients(measure, runs, pool)
    combos = list(itertools.combinations(range(len(runs)), 2))
    rows = np.vstack([coef, *(coef[a] - coef[b] for a, b in combos)])
    predicted = measure.gain(pool.grades(llm_qrels))
    index = pool.index()
    keys = list(sample.grades)
    at = np.array([index[k] for k in keys])
    human = measure.gain(np.array([sample.grades[k] for k in keys]))
    pi = _probabilities(sample, keys, int(frame.sum()))
    groups = _groups(sample, keys, pi)
    args = dict(sample=at, human=human, probability=pi, groups=groups, floor=True, frame=frame)
    ppi = pair_intervals(rows, predicted, lam="tuned", alpha=alpha, **args)
    known = np.where(frame, 0.0, predicted)  # humans only: original labels + the sample
    humans = pair_intervals(rows[: len(runs)], known, lam=1.0, alpha=alpha, **args)
    naive = rows @ predicted
    systems = [
        _system(run.name, str(measure), e, h, float(n))
        for run, e, h, n in zip(runs, ppi, humans, naive, strict=False)
    ]
    bonferroni = pair_intervals(
        rows[len(runs) :], predicted, lam="tuned", alpha=alpha / max(len(combos), 1), **args
    )
    return systems, differences(runs, combos, str(measure), ppi[len(runs) :], bonferroni,
                                 naive[len(runs) :], alpha)  # fmt: skip


def _probabilities(sample: HumanSample, keys, frame_size: int) -> np.ndarray:
    if not sample.probability:
        return np.full(len(keys), len(keys) / frame_size)
    return np.array([sample.probability[k] for k in keys])


def _groups(sample: HumanSample, keys, pi: np.ndarray) -> np.ndarray | None:
    """Strata as given; else groups of equal probability when each has two or more pairs."""
    if sample.strata and all(k in sample.strata for k in keys):
        names = {s: i for i, s in enumerate(sorted({sample.strata[k] for k in keys}))}
        return np.array([names[sample.strata[k]] for k in keys])
    values, counts = np.unique(pi, return_counts=True)
    if len(values) > 1 and counts.min() >= 2:
        return np.searchsorted(values, pi)
    return None


def _system(name: str, measure: str, e: Estimate, h: Estimate, naive: float) -> SystemEstimate:
    return SystemEstimate(
        system=name, measure=measure, estimate=e.estimate, ci_low=e.low, ci_high=e.high,
        naive=naive, human_only=Interval(estimate=h.estimate, ci_low=h.low, ci_high=h.high),
        lam=e.lam,
    )  # fmt: skip
