"""Measure budgeted orders: drop judged pairs, refill a budget of them in each order, score.

For each order the dropped pairs are drawn and judged up to the largest budget (one job
shared by all orders, so a pair two orders draw is judged once); smaller budgets are
prefixes of the same draws. At each budget: the share of the dropped relevant pairs
recovered (drawn, and judged relevant), and Kendall's tau of the system ranking under
the refilled qrels against the ranking under the full qrels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from docket.errors import UserError
from docket.holes.fill import build_pairs
from docket.holes.oracle import BlankCorpus, BlankQueries, OracleJudge, oracle_spec
from docket.holes.order import MEASURED_ORDERS, HoleOrder, Key, parse_hole_count
from docket.holes.ordered import BATCH, judge_in_order
from docket.holes.run import (
    GuidanceIn,
    QrelsIn,
    RunsIn,
    job_stem,
    load_guidance,
    load_ir_inputs,
    source_name,
)
from docket.holes.simulate import drop_judgments
from docket.ir.corpus import Corpus
from docket.ir.evaluate import RankingComparison, compare_rankings, evaluate_runs, parse_measures
from docket.ir.formats import Qrels, Run
from docket.ir.holes import pool
from docket.ir.provenance import compose_qrels
from docket.jobs.run import Progress
from docket.jobs.spec import JobSpec
from docket.relevance.types import Judge, Judgment


class OrderPoint(BaseModel):
    """One order at one budget."""

    order: str
    budget: int
    judged: int
    recovered: int
    share: float
    tau: float | None
    tau_ap: float | None


class OrderSimulation(BaseModel):
    """Outcome of :func:`simulate_orders`; ``curves`` hold recovered relevant per judgment."""

    method: str
    fraction: float
    seed: int
    order_seed: int
    measure: str
    dropped: int
    relevant: int
    budgets: list[int]
    points: list[OrderPoint]
    curves: dict[str, list[int]]
    calls: int
    job: str


def simulate_orders(
    qrels: QrelsIn,
    runs: RunsIn,
    queries: Mapping[str, str] | str | Path | None = None,
    corpus: Corpus | str | Path | None = None,
    spec: JobSpec | None = None,
    *,
    budgets: Sequence[int | str] = ("10%", "25%", "50%"),
    orders: Sequence[str] = MEASURED_ORDERS,
    fraction: float = 0.3,
    seed: int = 0,
    order_seed: int = 0,
    depth: int | None = None,
    measure: str = "nDCG@10",
    rel_level: int = 1,
    batch: int = BATCH,
    oracle: bool = False,
    judge: Judge | None = None,
    job: str | None = None,
    on_progress: Progress | None = None,
    guidance: GuidanceIn = None,
    guidance_field: str | None = None,
    **inputs: Any,
) -> OrderSimulation:
    """Drop a seeded ``fraction`` of the judged pairs and refill ``budgets`` of them per order.

    Only pairs the judge can read (query text and document found) are dropped. With
    ``oracle`` the gold label is the judge (no LLM; queries and corpus may be omitted).
    Budgets are ``N`` or ``"P%"`` of the dropped pairs; ``seed`` draws the dropped pairs,
    ``order_seed`` breaks the orders' ties; ``guidance`` and ``guidance_field`` as in
    :func:`~docket.holes.fill_holes`.
    """
    spec = spec or JobSpec.of()
    judge, spec = (OracleJudge(), oracle_spec(spec)) if oracle else (judge, spec)
    original, systems, kept, dropped, by_key = _dropped_pairs(
        qrels, runs, queries, corpus, oracle, fraction, seed, depth, rel_level,
        guidance, guidance_field, inputs,
    )  # fmt: skip
    counts = sorted({parse_hole_count(b, len(by_key)) for b in budgets})
    method = judge.method if judge else spec.method
    name = job or f"budget-{job_stem(qrels)}-{method}-{seed}"
    parsed = parse_measures([measure])
    scoring = _Scoring(systems, kept, dropped, rel_level, parsed,
                       evaluate_runs(original, systems, parsed))  # fmt: skip
    points, curves, calls = [], {}, 0
    for order in orders:
        planner = HoleOrder(by_key, systems, kept, order=order, seed=order_seed,
                            rel_level=rel_level)  # fmt: skip
        ordered = judge_in_order(
            by_key, planner, counts[-1], spec, job=name, source=source_name(qrels), batch=batch,
            on_progress=on_progress, judge=judge,
        )  # fmt: skip
        ordered.run.raise_for_error()
        calls += ordered.run.usage.calls
        curves[order] = _score_order(order, ordered, counts, points, scoring)
    return OrderSimulation(
        method=method, fraction=fraction, seed=seed, order_seed=order_seed, job=name,
        measure=str(parsed[0]), dropped=len(by_key), budgets=counts, calls=calls,
        relevant=sum(dropped[k] >= rel_level for k in by_key), points=points, curves=curves,
    )  # fmt: skip


def _dropped_pairs(
    qrels: QrelsIn, runs: RunsIn, queries: Any, corpus: Any, oracle: bool, fraction: float,
    seed: int, depth: int | None, rel_level: int, guidance: GuidanceIn,
    guidance_field: str | None, inputs: dict[str, Any],
) -> tuple[Qrels, list[Run], Qrels, dict[Key, int], dict[Key, Any]]:  # fmt: skip
    """Load the inputs, drop a seeded ``fraction`` of the judged pairs and build the
    dropped pairs to refill: (original, systems, kept qrels, dropped grades, pairs by key)."""
    if (queries is None or corpus is None) and not oracle:
        raise UserError("--queries and --corpus are needed unless the judge is --oracle")
    original, systems, texts, documents = load_ir_inputs(
        qrels, runs, BlankQueries() if queries is None else queries,
        BlankCorpus() if corpus is None else corpus, **inputs,
    )  # fmt: skip
    kept, dropped = _drop(original, systems, texts, documents, fraction, seed, depth)
    described = load_guidance(queries, guidance, guidance_field)
    made = build_pairs(dropped, texts, documents, original, rel_level, described)
    return original, systems, kept, dropped, {p.key: p for p in made.pairs}


@dataclass(frozen=True)
class _Scoring:
    """What every order's refilled qrels are scored against."""

    systems: Sequence[Run]
    kept: Qrels
    dropped: Mapping[Key, int]
    rel_level: int
    parsed: list[Any]
    full: Any


def _score_order(
    order: str, ordered: Any, counts: list[int], points: list[OrderPoint], scoring: _Scoring
) -> list[int]:
    """Append to ``points`` the refill of each budget in ``counts`` by ``order``'s prefix;
    return the cumulative count of dropped relevant pairs found along the order."""
    s = scoring
    labels = {(j.qid, j.docid): j for _, j in ordered.run.judgments()}
    found = [int(s.dropped[k] >= s.rel_level and _label(labels, k) == 1) for k in ordered.drawn]
    for count in counts:
        prefix = [labels[k] for k in ordered.drawn[:count] if k in labels]
        refilled = evaluate_runs(compose_qrels(s.kept, prefix, "reviewed", s.rel_level),
                                 s.systems, s.parsed)  # fmt: skip
        points.append(_point(order, count, prefix, found, s.dropped, s.rel_level,
                             compare_rankings(order, s.full, refilled, str(s.parsed[0]))))  # fmt: skip
    return _cumulative(found)


def _drop(
    original: Qrels, systems: Sequence[Run], texts: Mapping[str, str], documents: Corpus,
    fraction: float, seed: int, depth: int | None,
) -> tuple[Qrels, dict[Key, int]]:  # fmt: skip
    """Drop among the judged pairs (pooled at ``depth`` when given) the judge can read."""
    if depth is not None:
        pooled = pool(systems, depth, sorted(original))
        keys = [(q, d) for q, docs in pooled.items() for d in docs if d in original[q]]
    else:
        keys = [(q, d) for q, docs in original.items() for d in docs]
    found = documents.get_many({d for _, d in keys})
    readable = [(q, d) for q, d in keys if q in texts and d in found]
    return drop_judgments(original, fraction, seed, readable)


def _label(labels: Mapping[Key, Judgment], key: Key) -> int | None:
    judgment = labels.get(key)
    return None if judgment is None else judgment.label


def _cumulative(flags: Sequence[int]) -> list[int]:
    total, out = 0, []
    for flag in flags:
        total += flag
        out.append(total)
    return out


def _point(
    order: str, count: int, prefix: Sequence[Judgment], found: Sequence[int],
    dropped: Mapping[Key, int], rel_level: int, comparison: RankingComparison,
) -> OrderPoint:  # fmt: skip
    relevant = sum(grade >= rel_level for grade in dropped.values())
    recovered = sum(found[:count])
    return OrderPoint(
        order=order, budget=count, judged=len(prefix), recovered=recovered,
        share=recovered / relevant if relevant else 0.0, tau=comparison.tau,
        tau_ap=comparison.tau_ap,
    )  # fmt: skip
