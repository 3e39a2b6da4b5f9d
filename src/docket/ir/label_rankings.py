"""Systems ranked under gold and under each label set: Kendall's tau, tau_AP, Spearman's rho.

Each label set is used as qrels and every run is scored with ``ir_measures`` (through
:func:`docket.ir.evaluate.evaluate_runs`) on the queries that gold and the label set both
judge, so the two rankings rest on the same queries. tau_AP takes the gold ranking as the
reference. The largest rank change is the system whose rank moves most (ties: the one
gold ranks higher).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from docket.errors import UserError
from docket.ir.evaluate import evaluate_runs, parse_measures
from docket.ir.formats import Qrels, Run
from docket.ir.label_files import LabelSet
from docket.ir.stats import competition_ranks, kendall_tau, spearman, tau_ap


class RankChange(BaseModel):
    """One system's rank under gold and under a label set (1 = best)."""

    system: str
    gold_rank: int
    label_rank: int


class SystemRanking(BaseModel):
    """The systems under gold and under one label set (None where a statistic is undefined)."""

    name: str
    measure: str
    queries: int
    tau: float | None
    tau_ap: float | None
    rho: float | None
    gold_scores: dict[str, float]
    label_scores: dict[str, float]
    gold_ranks: dict[str, int]
    label_ranks: dict[str, int]
    changed: int
    largest_change: RankChange | None


def check_runs(qrels: Qrels, runs: Sequence[Run]) -> None:
    """Refuse a run that answers none of the queries of the qrels.

    Raises:
        UserError: naming the run and both query counts.
    """
    for run in runs:
        if not set(run.ranking) & set(qrels):
            raise UserError(
                f"{run.path or run.name}: the run answers none of the {len(qrels)} gold "
                f"queries ({len(run.ranking)} queries in the run)",
                hint="check that the run and the labels use the same query ids",
            )


def _restricted(qrels: Qrels, queries: Sequence[str]) -> Qrels:
    return {qid: qrels[qid] for qid in queries}


def _ranks(scores: Mapping[str, float]) -> dict[str, int]:
    names = list(scores)
    return dict(zip(names, competition_ranks([scores[n] for n in names]), strict=True))


def largest_change(gold: Mapping[str, int], labels: Mapping[str, int]) -> RankChange | None:
    """The system whose rank moves most; None when no rank changes."""
    moved = [name for name in gold if gold[name] != labels[name]]
    if not moved:
        return None
    name = min(moved, key=lambda n: (-abs(gold[n] - labels[n]), gold[n], n))
    return RankChange(system=name, gold_rank=gold[name], label_rank=labels[name])


def compare_scores(
    name: str, measure: str, queries: int, gold: Mapping[str, float], labels: Mapping[str, float]
) -> SystemRanking:
    """Rank correlations and rank changes between two score maps ``{system: score}``."""
    systems = sorted(gold)
    x, y = [gold[s] for s in systems], [labels[s] for s in systems]
    gold_ranks, label_ranks = _ranks(gold), _ranks(labels)
    return SystemRanking(
        name=name,
        measure=measure,
        queries=queries,
        tau=_defined(kendall_tau(x, y)),
        tau_ap=_defined(tau_ap(x, y, systems)),
        rho=_defined(spearman(x, y)),
        gold_scores=dict(gold),
        label_scores=dict(labels),
        gold_ranks=gold_ranks,
        label_ranks=label_ranks,
        changed=sum(gold_ranks[s] != label_ranks[s] for s in systems),
        largest_change=largest_change(gold_ranks, label_ranks),
    )


def _defined(value: float) -> float | None:
    return None if value != value else value


def rank_systems(
    gold: LabelSet, label_sets: Sequence[LabelSet], runs: Sequence[Run], measure: str = "nDCG@10"
) -> list[SystemRanking]:
    """Score every run under gold and under each label set, and compare the rankings.

    Raises:
        UserError: an unknown measure, or a run that answers none of the gold queries.
    """
    parsed = parse_measures([measure])[0]
    gold_qrels = gold.qrels()
    check_runs(gold_qrels, runs)
    gold_scores: dict[tuple[str, ...], dict[str, float]] = {}
    rankings = []
    for label_set in label_sets:
        qrels = label_set.qrels()
        queries = tuple(sorted(set(gold_qrels) & set(qrels)))
        if queries not in gold_scores:  # label sets over the same queries share one evaluation
            scores = evaluate_runs(_restricted(gold_qrels, queries), runs, [parsed])
            gold_scores[queries] = {s: v[str(parsed)] for s, v in scores.items()}
        scores = evaluate_runs(_restricted(qrels, queries), runs, [parsed])
        label_scores = {s: v[str(parsed)] for s, v in scores.items()}
        rankings.append(
            compare_scores(
                label_set.name, str(parsed), len(queries), gold_scores[queries], label_scores
            )
        )
    return rankings
