"""Hole simulation: validate a judge without new human labels (after Upadhyay et al. 2024).

A seeded fraction of the judged pairs is removed from the qrels ("artificial holes"), the
removed pairs are judged again with a relevance method, and docket reports how well the
new labels agree with the removed ones (Cohen's kappa, balanced accuracy) and how close
the system ranking under the refilled qrels is to the ranking under the full qrels.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from pydantic import BaseModel

from docket.agreement import balanced_accuracy, cohen_kappa
from docket.errors import UserError
from docket.ir.evaluate import RankingComparison, compare_rankings, evaluate_runs, parse_measures
from docket.ir.formats import Qrels, Run
from docket.ir.holes import pool
from docket.ir.provenance import compose_qrels
from docket.relevance.types import Judgment

Key = tuple[str, str]


def drop_judgments(
    qrels: Qrels, fraction: float, seed: int = 0, candidates: Iterable[Key] | None = None
) -> tuple[Qrels, dict[Key, int]]:
    """Remove a seeded random ``fraction`` of the judged pairs.

    Args:
        qrels: the full qrels.
        fraction: share of the candidate pairs to remove, in (0, 1].
        seed: random seed (same seed, same pairs).
        candidates: judged pairs eligible for removal; default all of them.

    Returns:
        The remaining qrels (queries left without judgments disappear) and the removed
        pairs with their grades.
    """
    if not 0 < fraction <= 1:
        raise UserError(f"fraction must be in (0, 1], got {fraction}", hint="e.g. --fraction 0.3")
    pool_keys = (
        sorted(candidates)
        if candidates is not None
        else sorted((qid, docid) for qid, docs in qrels.items() for docid in docs)
    )
    pool_keys = [key for key in pool_keys if key[1] in qrels.get(key[0], {})]
    count = round(fraction * len(pool_keys))
    chosen = np.random.default_rng(seed).choice(len(pool_keys), size=count, replace=False)
    dropped = {pool_keys[i]: qrels[pool_keys[i][0]][pool_keys[i][1]] for i in sorted(chosen)}
    kept: Qrels = {}
    for qid, docs in qrels.items():
        remaining = {d: g for d, g in docs.items() if (qid, d) not in dropped}
        if remaining:
            kept[qid] = remaining
    return kept, dropped


class SimulationReport(BaseModel):
    """Outcome of :func:`docket.holes.simulate_holes` (None where a statistic is undefined)."""

    fraction: float
    seed: int
    measure: str
    dropped: int
    judged: int
    escalated: int
    skipped: int
    kappa: float | None
    balanced_accuracy: float | None
    confusion: dict[str, int]
    scores: dict[str, dict[str, float]]
    rankings: list[RankingComparison]


def _none_if_nan(value: float) -> float | None:
    return None if math.isnan(value) else value


def plan_simulation(
    qrels: Qrels, runs: Sequence[Run], fraction: float, seed: int, depth: int | None = None
) -> tuple[Qrels, dict[Key, int]]:
    """The kept qrels and the dropped pairs (only pooled ones when ``depth`` is given)."""
    candidates = None
    if depth is not None:
        pooled = pool(runs, depth, sorted(qrels))
        candidates = [(q, d) for q, docs in pooled.items() for d in docs if d in qrels[q]]
    return drop_judgments(qrels, fraction, seed, candidates)


def score_simulation(
    qrels: Qrels,
    kept: Qrels,
    dropped: Mapping[Key, int],
    judgments: Sequence[Judgment],
    runs: Sequence[Run],
    *,
    fraction: float,
    seed: int,
    measure: str = "nDCG@10",
    rel_level: int = 1,
    skipped: int = 0,
) -> SimulationReport:
    """Label agreement with the dropped pairs and ranking stability after refilling."""
    refilled = compose_qrels(kept, judgments, "reviewed", rel_level)
    parsed = parse_measures([measure])
    name = str(parsed[0])
    full = evaluate_runs(qrels, runs, parsed)
    variants = {
        "holed": evaluate_runs(kept, runs, parsed),
        "refilled": evaluate_runs(refilled, runs, parsed),
    }
    return SimulationReport(
        fraction=fraction,
        seed=seed,
        measure=name,
        dropped=len(dropped),
        skipped=skipped,
        escalated=sum(j.label is None for j in judgments),
        **_label_agreement(judgments, dropped, rel_level),
        scores={
            k: {s: v[name] for s, v in scores.items()}
            for k, scores in {"full": full, **variants}.items()
        },
        rankings=[compare_rankings(k, full, v, name) for k, v in variants.items()],
    )


def _label_agreement(
    judgments: Sequence[Judgment], dropped: Mapping[Key, int], rel_level: int
) -> dict:
    decided = [j for j in judgments if j.label is not None]
    gold = [int(dropped[(j.qid, j.docid)] >= rel_level) for j in decided]
    predicted = [int(j.label) for j in decided]
    pairs = list(zip(gold, predicted, strict=True))
    return {
        "judged": len(decided),
        "kappa": _none_if_nan(cohen_kappa(gold, predicted)),
        "balanced_accuracy": _none_if_nan(balanced_accuracy(gold, predicted)),
        "confusion": {
            "tp": pairs.count((1, 1)),
            "fn": pairs.count((1, 0)),
            "fp": pairs.count((0, 1)),
            "tn": pairs.count((0, 0)),
        },
    }
