"""Per-query scores of every system, and writing them as TSV, JSON or ``trec_eval -q`` text.

Queries are those of the qrels; a query a run does not answer scores 0, the convention
of :func:`docket.ir.evaluate.evaluate_runs`, so the mean of a system's per-query values
is its aggregate score.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import ir_measures

from docket.ir.evaluate import condense
from docket.ir.formats import Qrels, Run, write_atomically
from docket.ir.holes import hole_rate

#: {variant: {system: {measure: {qid: value}}}}
PerQuery = dict[str, dict[str, dict[str, dict[str, float]]]]


def per_query_scores(
    qrels: Qrels, runs: Sequence[Run], measures: Sequence[Any]
) -> dict[str, dict[str, dict[str, float]]]:
    """``{system: {measure: {qid: value}}}`` over the queries of ``qrels``."""
    others = [m for m in measures if m.NAME != "Judged"]
    evaluator = ir_measures.evaluator(others, qrels) if others else None
    table: dict[str, dict[str, dict[str, float]]] = {}
    for run in runs:
        values: dict[str, dict[str, float]] = {str(m): dict.fromkeys(qrels, 0.0) for m in measures}
        if evaluator is not None:
            for metric in evaluator.iter_calc(run.to_ir_measures()):
                if metric.query_id in qrels:
                    values[str(metric.measure)][metric.query_id] = float(metric.value)
        for m in measures:
            if m.NAME == "Judged":
                values[str(m)] = _judged_per_query(qrels, run, m)
        table[run.name] = values
    return table


def _judged_per_query(qrels: Qrels, run: Run, measure: Any) -> dict[str, float]:
    cutoff = measure.params.get("cutoff")
    _, holes = hole_rate(qrels, run, cutoff if isinstance(cutoff, int) else None)
    return {qid: 1.0 - value for qid, value in holes.items()}


def per_query_variants(
    variants: Mapping[str, tuple[Qrels, bool]], runs: Sequence[Run], measures: Sequence[Any]
) -> PerQuery:
    """Per-query scores for each qrels variant (``(qrels, condensed)`` by name)."""
    return {
        name: per_query_scores(q, [condense(r, q) for r in runs] if cond else list(runs), measures)
        for name, (q, cond) in variants.items()
    }


def _rows(table: PerQuery) -> Iterator[tuple[str, str, str, str, float]]:
    for variant, systems in table.items():
        for system, measures in systems.items():
            for measure, values in measures.items():
                for qid in sorted(values):
                    yield variant, system, measure, qid, values[qid]


def write_per_query(table: PerQuery, path: Path) -> int:
    """Write per-query scores: JSON when ``path`` ends in ``.json``, else TSV with a header.

    Returns:
        The number of (variant, system, measure, query) values written.
    """
    rows = list(_rows(table))
    if path.suffix == ".json":
        write_atomically(path, [json.dumps(table, indent=2) + "\n"])
    else:
        lines = ["variant\tsystem\tmeasure\tqid\tvalue\n"]
        lines += [f"{v}\t{s}\t{m}\t{q}\t{value:.6g}\n" for v, s, m, q, value in rows]
        write_atomically(path, lines)
    return len(rows)


def trec_eval_lines(
    table: PerQuery, aggregates: Mapping[str, Mapping[str, Mapping[str, float]]]
) -> Iterator[str]:
    """``trec_eval -q`` style text: per system, every measure per query, then ``all``.

    Each system block starts with a ``runid`` line; systems of a variant other than
    ``original`` are named ``system@variant``.
    """
    for variant, systems in table.items():
        for system, measures in systems.items():
            name = system if variant == "original" else f"{system}@{variant}"
            yield f"{'runid':<22}\tall\t{name}\n"
            for measure, values in measures.items():
                for qid in sorted(values):
                    yield f"{measure:<22}\t{qid}\t{values[qid]:.4f}\n"
                yield f"{measure:<22}\tall\t{aggregates[variant][system][measure]:.4f}\n"
