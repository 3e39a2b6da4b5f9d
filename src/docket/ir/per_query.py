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


# trec_eval's own name of an ir_measures measure, by its NAME: (without a cutoff, with one).
# None: trec_eval has no such form. Judged@k is not trec_eval's; ``judged_k`` follows its style.
_TREC_EVAL_NAMES: dict[str, tuple[str | None, str | None]] = {
    "AP": ("map", "map_cut_{}"),
    "nDCG": ("ndcg", "ndcg_cut_{}"),
    "P": ("set_P", "P_{}"),
    "R": ("set_recall", "recall_{}"),
    "RR": ("recip_rank", None),
    "Rprec": ("Rprec", None),
    "Bpref": ("bpref", None),
    "infAP": ("infAP", None),
    "Success": (None, "success_{}"),
    "NumRet": ("num_ret", None),
    "NumRel": ("num_rel", None),
    "NumRelRet": ("num_rel_ret", None),
    "SetP": ("set_P", None),
    "SetR": ("set_recall", None),
    "SetF": ("set_F", None),
    "Judged": (None, "judged_{}"),
}


def trec_eval_name(measure: str) -> str:
    """trec_eval's name of an ir_measures measure: ``nDCG@10`` -> ``ndcg_cut_10``,
    ``P@10`` -> ``P_10``, ``AP`` -> ``map``, ``RR`` -> ``recip_rank``.

    A measure trec_eval names no other way (parameters other than the cutoff and the
    relevance level, which trec_eval sets with ``-l``, or no trec_eval form) keeps its
    ir_measures name.
    """
    try:
        parsed = ir_measures.parse_measure(measure)
    except (ValueError, NameError, SyntaxError, TypeError):
        return measure
    params = dict(parsed.params)
    cutoff = params.pop("cutoff", None)
    params.pop("rel", None)
    forms = _TREC_EVAL_NAMES.get(parsed.NAME)
    if forms is None or params:
        return measure
    template = forms[0] if cutoff is None else forms[1]
    return measure if template is None else template.format(cutoff)


def trec_eval_lines(
    table: PerQuery, aggregates: Mapping[str, Mapping[str, Mapping[str, float]]]
) -> Iterator[str]:
    """``trec_eval -q`` style text: per system, every measure per query, then ``all``.

    Measures have trec_eval's own names (:func:`trec_eval_name`), as scripts reading
    ``trec_eval -q`` output expect. Each system block starts with a ``runid`` line;
    systems of a variant other than ``original`` are named ``system@variant``.
    """
    for variant, systems in table.items():
        for system, measures in systems.items():
            name = system if variant == "original" else f"{system}@{variant}"
            yield f"{'runid':<22}\tall\t{name}\n"
            for measure, values in measures.items():
                shown = trec_eval_name(measure)
                for qid in sorted(values):
                    yield f"{shown:<22}\t{qid}\t{values[qid]:.4f}\n"
                yield f"{shown:<22}\tall\t{aggregates[variant][system][measure]:.4f}\n"
