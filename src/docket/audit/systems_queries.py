"""Query-level prediction-powered evaluation: whole queries judged by humans.

Per-query values of any ``ir_measures`` measure under the LLM-completed qrels (every
query) and under the human grades (the sampled queries), combined by
:func:`docket.audit.ppi.ppi_mean_finite`: the target is the mean over the collection's
own queries, the judged queries a simple random sample of them.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from docket.audit.ppi import ppi_mean_finite
from docket.audit.ppi_report import (
    Interval,
    PpiReport,
    SystemEstimate,
    differences,
)
from docket.audit.samples import HumanSample
from docket.errors import InputError
from docket.ir.evaluate import evaluate_per_query, parse_measures
from docket.ir.formats import Qrels, Run


def query_level(
    runs: Sequence[Run],
    llm_qrels: Qrels,
    sample: HumanSample,
    measures: Sequence[str],
    alpha: float,
    original: Qrels | None,
    frame: np.ndarray,
) -> PpiReport:
    """The query-level report (see :func:`docket.audit.systems.evaluate_systems_ppi`)."""
    queries = sorted(llm_qrels)
    human = _human_qrels(llm_qrels, sample, original)
    chosen = [i for i, q in enumerate(queries) if q in human]
    if len(chosen) < 3:
        raise InputError(
            f"the {sample.source} judges {len(chosen)} whole queries; query-level "
            "intervals need 3 or more",
        )
    systems, pairs = [], []
    for measure in parse_measures(measures):
        llm = _values(llm_qrels, runs, measure, queries)
        truth = _values(human, runs, measure, queries)[:, chosen]
        s, p = _measure(runs, str(measure), llm, truth, chosen, alpha)
        systems += s
        pairs += p
    return PpiReport(
        design="queries", confidence=1 - alpha, human_labels=len(sample.grades),
        unanswered=sample.unanswered, frame=int(frame.sum()),
        measures=[str(m) for m in parse_measures(measures)], skipped_measures=[],
        systems=systems, pairs=pairs,
    )  # fmt: skip


def _human_qrels(llm_qrels: Qrels, sample: HumanSample, original: Qrels | None) -> Qrels:
    """Human grades of each sampled query: its original judgments plus the sample's."""
    human: Qrels = {}
    for (qid, docid), grade in sample.grades.items():
        human.setdefault(qid, dict((original or {}).get(qid, {})))[docid] = grade
    for qid, docs in human.items():
        missing = [d for d in llm_qrels[qid] if d not in docs]
        if missing:
            raise InputError(
                f"query {qid} is not judged whole by the {sample.source}: "
                f"{len(missing)} of its pool pairs lack a human grade (e.g. {missing[0]})",
                hint="query-level intervals need every pool pair of each sampled query",
            )
    return human


def _values(qrels: Qrels, runs: Sequence[Run], measure: Any, queries: list[str]) -> np.ndarray:
    """``(systems, queries)`` per-query values; a query without a value counts 0."""
    rows = []
    for run in runs:
        per_query = evaluate_per_query(qrels, run, measure)
        rows.append([per_query.get(q, 0.0) for q in queries])
    return np.array(rows, dtype=float)


def _measure(runs, measure: str, llm: np.ndarray, truth: np.ndarray, chosen, alpha: float):
    systems = []
    for i, run in enumerate(runs):
        e = ppi_mean_finite(truth[i], llm[i, chosen], llm[i], alpha)
        h = ppi_mean_finite(truth[i], llm[i, chosen], llm[i], alpha, lam=0.0)
        systems.append(
            SystemEstimate(
                system=run.name,
                measure=measure,
                estimate=e.estimate,
                ci_low=e.low,
                ci_high=e.high,
                naive=float(llm[i].mean()),
                lam=e.lam,
                human_only=Interval(estimate=h.estimate, ci_low=h.low, ci_high=h.high),
            )  # fmt: skip
        )
    combos = list(itertools.combinations(range(len(runs)), 2))
    point, wide = [], []
    for a, b in combos:
        args = (truth[a] - truth[b], llm[a, chosen] - llm[b, chosen], llm[a] - llm[b])
        point.append(ppi_mean_finite(*args, alpha))
        wide.append(ppi_mean_finite(*args, alpha / max(len(combos), 1)))
    naive = [float(llm[a].mean() - llm[b].mean()) for a, b in combos]
    return systems, differences(runs, combos, measure, point, wide, naive, alpha)
