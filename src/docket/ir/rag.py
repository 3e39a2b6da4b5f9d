"""RAG alignment: does retrieval quality predict generation quality?

The DREAM paper reports RAGAlign@10 without a formula. docket defines, for a set of
systems that each retrieved and then generated answers for the same queries:

* retrieval quality R_s = mean over the queries of M@k (default nDCG@k) of system s;
* generation quality G_s = mean correctness of s's answers over the same queries;
* **RAGAlign@k = Pearson's r between (R_s) and (G_s) across systems**, reported with
  Kendall's tau-b of the same vectors;
* per-query agreement: over every (system, query), the share where "a relevant document
  is in the top-k" equals "the answer is correct" (scores binarised at a threshold), with
  Cohen's kappa of the two.

Only queries present in both the qrels and the generation file count.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel

from docket.agreement import cohen_kappa
from docket.errors import InputError, UserError
from docket.ir.evaluate import evaluate_per_query, parse_measures
from docket.ir.formats import Qrels, Run, first_field, parse_json_line
from docket.ir.stats import kendall_tau, pearson
from docket.reading import numbered_lines

Generation = dict[str, dict[str, float]]


def read_generation(path: str | Path) -> Generation:
    """Read ``{"system", "qid", "correct"}`` JSONL; ``correct`` is a bool or a number.

    Returns:
        ``{system: {qid: correctness}}`` (booleans become 1.0 / 0.0).
    """
    generation: Generation = {}
    for number, line in numbered_lines(path):
        record = parse_json_line(line, path, number)
        system = first_field(record, ("system",), path, number)
        qid = first_field(record, ("qid",), path, number)
        generation.setdefault(system, {})[qid] = _correctness(record.get("correct"), path, number)
    if not generation:
        raise InputError("generation file is empty", path=str(path))
    return generation


def _correctness(value: object, path: str | Path, number: int) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    raise InputError(
        f"'correct' must be true/false or a number, got {value!r}",
        path=str(path),
        line=number,
        field="correct",
    )


class RagAlignment(BaseModel):
    """RAGAlign@k and its parts for one qrels variant (None where undefined)."""

    variant: str
    k: int
    measure: str
    systems: list[str]
    pearson: float | None
    kendall: float | None
    agreement: float | None
    kappa: float | None
    pairs: int
    retrieval: dict[str, float]
    generation: dict[str, float]


def _none_if_nan(value: float) -> float | None:
    return None if math.isnan(value) else value


def rag_alignment(
    qrels: Qrels,
    runs: Sequence[Run],
    generation: Mapping[str, Mapping[str, float]],
    *,
    k: int = 10,
    measure: str = "nDCG",
    rel_level: int = 1,
    threshold: float = 0.5,
    variant: str = "original",
) -> RagAlignment:
    """Compute RAGAlign@k (see the module docstring) for the runs named in ``generation``.

    Args:
        qrels: the qrels variant to judge retrieval with.
        runs: retrieval runs; matched to ``generation`` by system name.
        generation: ``{system: {qid: correctness}}``.
        k: retrieval cutoff.
        measure: retrieval measure name without cutoff (``nDCG``, ``P``, ...), or with one.
        rel_level: grade from which a retrieved document counts as relevant.
        threshold: correctness from which an answer counts as correct.
        variant: label of the qrels variant in the report.
    """
    name = measure if "@" in measure else f"{measure}@{k}"
    parsed = parse_measures([name])[0]
    matched = [run for run in runs if run.name in generation]
    if not matched:
        raise UserError(
            "no run matches a system of the generation file",
            hint=f"system names must be run names: {', '.join(r.name for r in runs)}",
        )
    retrieval, quality, hits, correct = {}, {}, [], []
    for run in matched:
        qids = [q for q in generation[run.name] if q in qrels]
        per_query = evaluate_per_query({q: qrels[q] for q in qids}, run, parsed)
        retrieval[run.name] = _mean([per_query.get(q, 0.0) for q in qids])
        quality[run.name] = _mean([generation[run.name][q] for q in qids])
        for qid in qids:
            hits.append(any(qrels[qid].get(d, 0) >= rel_level for d in run.top(qid, k)))
            correct.append(generation[run.name][qid] >= threshold)
    names = [run.name for run in matched]
    x, y = [retrieval[n] for n in names], [quality[n] for n in names]
    return RagAlignment(
        variant=variant,
        k=k,
        measure=str(parsed),
        systems=names,
        pearson=_none_if_nan(pearson(x, y)),
        kendall=_none_if_nan(kendall_tau(x, y)),
        agreement=_mean([h == c for h, c in zip(hits, correct, strict=True)]) if hits else None,
        kappa=_none_if_nan(cohen_kappa(hits, correct)),
        pairs=len(hits),
        retrieval=retrieval,
        generation=quality,
    )


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else 0.0
