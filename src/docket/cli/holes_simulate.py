"""``docket holes simulate``: drop judged pairs, refill them through the store, compare.

It judges exactly as ``docket holes fill`` does (:func:`docket.cli.holes_fill.judge_in_store`):
same judge options, store, executor flags and failed-pair report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from docket.cli.common import escape, out
from docket.cli.executor_flags import ExecutorOpt, RayAddressOpt, RayWorkersOpt
from docket.cli.holes_fill import (
    AdjudicatorOpt,
    CacheOpt,
    ConcurrencyOpt,
    CorpusOpt,
    DbOpt,
    IndexOpt,
    MethodOpt,
    ModelOpt,
    QueriesOpt,
    RetryFailedOpt,
    RoundsOpt,
    TopicFieldOpt,
    judge_in_store,
    make_judge,
)
from docket.cli.ir_common import (
    GradesOpt,
    MoreRuns,
    QrelsOpt,
    RelLevelOpt,
    RunsOpt,
    fmt,
    load_qrels,
    load_runs,
    write_json,
)
from docket.ir.corpus import open_corpus
from docket.ir.fill import PairSet, build_pairs
from docket.ir.queries import read_queries
from docket.ir.simulate import SimulationReport, plan_simulation, score_simulation


def simulate_command(
    qrels: QrelsOpt,
    corpus: CorpusOpt,
    queries: QueriesOpt,
    runs: RunsOpt = None,
    more_runs: MoreRuns = None,
    fraction: Annotated[float, typer.Option(help="share of judged pairs to drop")] = 0.3,
    seed: Annotated[int, typer.Option(help="random seed of the drop")] = 0,
    depth: Annotated[
        int | None, typer.Option(help="drop only judged pairs in the top-k pool")
    ] = None,
    measure: Annotated[str, typer.Option(help="measure that ranks systems")] = "nDCG@10",
    corpus_index: IndexOpt = None,
    topic_field: TopicFieldOpt = "title",
    method: MethodOpt = "dream",
    model: ModelOpt = None,
    rounds: RoundsOpt = 2,
    adjudicator: AdjudicatorOpt = None,
    concurrency: ConcurrencyOpt = None,
    cache: CacheOpt = None,
    executor: ExecutorOpt = None,
    ray_address: RayAddressOpt = None,
    ray_workers: RayWorkersOpt = None,
    retry_failed: RetryFailedOpt = False,
    db: DbOpt = None,
    job: Annotated[
        str | None, typer.Option(help="job name (default: simulate-<qrels>-<method>-<seed>)")
    ] = None,
    rel_level: RelLevelOpt = 1,
    grades: GradesOpt = None,
    out_path: Annotated[Path | None, typer.Option("--out", help="write the report as JSON")] = None,
) -> None:
    """Drop judged pairs, refill them with a method, report agreement and ranking stability."""
    setup = make_judge(
        method, db, model=model, concurrency=concurrency, cache=cache, rounds=rounds,
        adjudicator=adjudicator, agent_model=None, executor=executor, ray_address=ray_address,
        ray_workers=ray_workers, retry_failed=retry_failed,
    )  # fmt: skip
    original = load_qrels(qrels, grades)
    systems = load_runs(runs, more_runs)
    kept, dropped = plan_simulation(original, systems, fraction, seed, depth)
    texts = read_queries(queries, topic_field)
    pairs = build_pairs(dropped, texts, open_corpus(corpus, corpus_index), original, rel_level)
    name = job or f"simulate-{qrels.stem}-{method}-{seed}"
    stored = judge_in_store(pairs.pairs, setup, name, str(qrels))
    report = score_simulation(
        original, kept, dropped, stored.judgments, systems, fraction=fraction, seed=seed,
        measure=measure, rel_level=rel_level, skipped=_skipped(pairs),
    )  # fmt: skip
    if out_path is not None:
        write_json(report.model_dump(mode="json"), out_path)
    _print_simulation(report, name)
    stored.print_failed()


def _skipped(pairs: PairSet) -> int:
    return len(pairs.missing_queries) + len(pairs.missing_documents)


def _print_simulation(report: SimulationReport, job: str) -> None:
    out.print(
        f"dropped {report.dropped} judged pairs (fraction {report.fraction}, seed {report.seed}); "
        f"{report.judged} relabelled, {report.escalated} escalated, {report.skipped} skipped "
        f"(job {escape(job)})"
    )
    out.print(
        f"label agreement: kappa {fmt(report.kappa)}, balanced accuracy "
        f"{fmt(report.balanced_accuracy)}; confusion {report.confusion}",
        markup=False,
    )
    for comparison in report.rankings:
        out.print(
            f"{comparison.variant} vs full qrels ({report.measure}): tau {fmt(comparison.tau)}, "
            f"tau_AP {fmt(comparison.tau_ap)}, {comparison.changed} systems changed rank"
        )
