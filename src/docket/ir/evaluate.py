"""Re-evaluating retrieval systems with ``ir_measures`` before and after completing qrels.

Variants: ``original`` (original qrels), ``completed`` (completed qrels) and their
condensed-list counterparts (``*_condensed``: unjudged documents are removed from each
ranking before evaluating, after Sakai 2007). Systems are ranked by a primary measure;
rankings are compared with Kendall's tau-b and tau_AP, and each system's rank shift is
reported (positive = moved up after completion).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import ir_measures
from pydantic import BaseModel

from docket.errors import UserError
from docket.frames import frame
from docket.ir.formats import Qrels, Run
from docket.ir.holes import hole_rate
from docket.ir.stats import competition_ranks, kendall_tau, tau_ap

DEFAULT_MEASURES: tuple[str, ...] = ("nDCG@10", "P@10", "R@100", "AP", "Judged@10")


def parse_measures(names: Iterable[str]) -> list[Any]:
    """Parse measure names with ``ir_measures`` (``nDCG@10``, ``P(rel=2)@10``, ``MAP``, ...).

    Raises:
        UserError: a name ``ir_measures`` does not understand.
    """
    parsed = []
    for name in names:
        try:
            parsed.append(ir_measures.parse_measure(name.strip()))
        except (ValueError, NameError, TypeError) as exc:
            raise UserError(
                f"unknown measure '{name}': {exc}",
                hint="use ir_measures names such as nDCG@10, P@10, R@100, AP, Judged@10",
            ) from None
    return list(dict.fromkeys(parsed))


def condense(run: Run, qrels: Qrels) -> Run:
    """The run with every unjudged document removed (a condensed list)."""
    ranking = {
        qid: tuple(d for d in docs if d in qrels.get(qid, ())) for qid, docs in run.ranking.items()
    }
    return Run(run.name, ranking, run.duplicates, run.path)


def evaluate_runs(
    qrels: Qrels, runs: Sequence[Run], measures: Sequence[Any]
) -> dict[str, dict[str, float]]:
    """Aggregate scores ``{system: {measure: value}}`` over the queries of the qrels.

    Queries a run does not answer count 0, as in ``ir_measures``. ``Judged@k`` is computed
    as 1 - Hole@k (identical to ``ir_measures``' value, which its Python provider makes
    slow); every other measure comes from ``ir_measures``.
    """
    judged = [m for m in measures if m.NAME == "Judged"]
    others = [m for m in measures if m.NAME != "Judged"]
    evaluator = ir_measures.evaluator(others, qrels) if others else None
    scores: dict[str, dict[str, float]] = {}
    for run in runs:
        values = evaluator.calc_aggregate(run.to_ir_measures()) if evaluator else {}
        values.update({m: _judged(qrels, run, m) for m in judged})
        scores[run.name] = {str(m): float(values[m]) for m in measures}
    return scores


def _judged(qrels: Qrels, run: Run, measure: Any) -> float:
    cutoff = measure.params.get("cutoff")
    depth = cutoff if isinstance(cutoff, int) else None  # no cutoff: the whole ranking
    return 1.0 - hole_rate(qrels, run, depth)[0] if qrels else float("nan")


def evaluate_per_query(qrels: Qrels, run: Run, measure: Any) -> dict[str, float]:
    """``{qid: value}`` of one measure for one run over the queries of the qrels."""
    evaluator = ir_measures.evaluator([measure], qrels)
    return {m.query_id: float(m.value) for m in evaluator.iter_calc(run.to_ir_measures())}


class RankingComparison(BaseModel):
    """A ranking variant compared with the ranking under the original qrels."""

    variant: str
    tau: float | None
    tau_ap: float | None
    changed: int


class SystemsReport(BaseModel):
    """Scores, ranks, rank shifts and ranking correlations of all systems."""

    measures: list[str]
    primary: str
    scores: dict[str, dict[str, dict[str, float]]]
    ranks: dict[str, dict[str, int]]
    shift_variant: str | None
    shifts: dict[str, int]
    comparisons: list[RankingComparison]

    def systems(self) -> list[str]:
        """System names in the order of the original ranking."""
        ranks = self.ranks["original"]
        return sorted(ranks, key=lambda name: (ranks[name], name))

    def to_pandas(self) -> Any:
        """One row per qrels variant, system and measure: ``variant``, ``system``,
        ``measure``, ``value``, and ``rank`` (the system's rank by the primary measure
        under that variant).

        Raises:
            MissingDependencyError: pandas is not installed.
        """
        rows = [
            {"variant": variant, "system": system, "measure": measure, "value": value,
             "rank": self.ranks.get(variant, {}).get(system)}
            for variant, systems in self.scores.items()
            for system, measures in systems.items()
            for measure, value in measures.items()
        ]  # fmt: skip
        return frame(rows, ["variant", "system", "measure", "value", "rank"])


def _nan_to_none(value: float) -> float | None:
    return None if math.isnan(value) else value


def compare_systems(
    runs: Sequence[Run],
    qrels: Qrels,
    completed: Qrels | None = None,
    measures: Sequence[str] = DEFAULT_MEASURES,
    primary: str | None = None,
    condensed: bool = True,
    whole_pool: Qrels | None = None,
) -> SystemsReport:
    """Evaluate every system on each qrels variant and compare the rankings.

    Args:
        runs: the systems.
        qrels: original qrels.
        completed: completed qrels, if any.
        measures: ``ir_measures`` names; the first is the primary measure by default.
        primary: the measure that ranks systems (must be among ``measures``).
        condensed: also evaluate condensed lists.
        whole_pool: qrels of new labels for the whole pool (``holes fill --whole-pool``),
            evaluated beside ``completed`` so the two completions can be compared.
    """
    parsed = parse_measures(measures)
    primary_name = str(parse_measures([primary])[0]) if primary else str(parsed[0])
    if primary_name not in {str(m) for m in parsed}:
        parsed.append(ir_measures.parse_measure(primary_name))
    variants = qrels_variants(qrels, completed, condensed, whole_pool)
    scores = {
        name: evaluate_runs(q, [condense(r, q) for r in runs] if cond else list(runs), parsed)
        for name, (q, cond) in variants.items()
    }
    ranks = {name: _ranks(s, primary_name) for name, s in scores.items()}
    target = next(
        (name for name, q in (("completed", completed), ("whole_pool", whole_pool)) if q),
        "original_condensed" if condensed else None,
    )
    shifts = (
        {s: ranks["original"][s] - ranks[target][s] for s in ranks["original"]} if target else {}
    )
    comparisons = [
        compare_rankings(name, scores["original"], scores[name], primary_name)
        for name in scores
        if name != "original"
    ]
    return SystemsReport(
        measures=[str(m) for m in parsed],
        primary=primary_name,
        scores=scores,
        ranks=ranks,
        shift_variant=target,
        shifts=shifts,
        comparisons=comparisons,
    )


def qrels_variants(
    qrels: Qrels, completed: Qrels | None, condensed: bool, whole_pool: Qrels | None = None
) -> dict[str, tuple[Qrels, bool]]:
    """The evaluated variants by name: ``(qrels, condensed lists or not)``."""
    variants = {"original": (qrels, False)}
    if condensed:
        variants["original_condensed"] = (qrels, True)
    for name, extra in (("completed", completed), ("whole_pool", whole_pool)):
        if extra is not None:
            variants[name] = (extra, False)
            if condensed:
                variants[f"{name}_condensed"] = (extra, True)
    return variants


def _ranks(scores: Mapping[str, Mapping[str, float]], measure: str) -> dict[str, int]:
    names = list(scores)
    return dict(zip(names, competition_ranks([scores[n][measure] for n in names]), strict=True))


def compare_rankings(
    variant: str,
    before: Mapping[str, Mapping[str, float]],
    after: Mapping[str, Mapping[str, float]],
    measure: str,
) -> RankingComparison:
    """Kendall's tau-b, tau_AP and the number of rank changes from ``before`` to ``after``.

    Args:
        variant: label of the ``after`` ranking.
        before: ``{system: {measure: value}}`` of the reference evaluation.
        after: the same for the variant.
        measure: the measure that ranks systems.
    """
    # tau_AP treats the ranking after the change as the reference (the better estimate).
    names = sorted(before)
    x = [before[n][measure] for n in names]
    y = [after[n][measure] for n in names]
    before_ranks, after_ranks = competition_ranks(x), competition_ranks(y)
    return RankingComparison(
        variant=variant,
        tau=_nan_to_none(kendall_tau(x, y)),
        tau_ap=_nan_to_none(tau_ap(y, x, names)),
        changed=sum(a != b for a, b in zip(before_ranks, after_ranks, strict=True)),
    )
