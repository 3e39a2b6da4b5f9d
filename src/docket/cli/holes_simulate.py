"""``docket holes simulate``: drop judged pairs, refill them through the store, compare.

Flag parsing, one call of :func:`docket.jobs.simulate_holes`, and printing. It judges
exactly as ``docket judge`` and ``holes fill`` do (same flags, store, executors).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from docket.cli.common import console, escape, finish_run, out, print_failed, resumable
from docket.cli.ir_common import (
    CorpusOpt,
    GradesOpt,
    IndexOpt,
    MoreRuns,
    QrelsOpt,
    QueriesOpt,
    RelLevelOpt,
    RunsOpt,
    TopicFieldOpt,
    fmt,
    parse_grades,
    run_paths,
    write_json,
)
from docket.cli.judging_flags import JudgingFlags, MethodOpt, judging_command
from docket.cli.outputs import output_path
from docket.cli.progress import progress_meter
from docket.ir.simulate import SimulationReport
from docket.jobs.holes import simulate_holes


@judging_command
def simulate_command(
    qrels: QrelsOpt,
    corpus: CorpusOpt,
    queries: QueriesOpt,
    runs: RunsOpt = None,
    more_runs: MoreRuns = None,
    fraction: Annotated[float, typer.Option(help="share of judged pairs to drop")] = 0.3,
    drop_seed: Annotated[int, typer.Option(help="random seed of the drop")] = 0,
    depth: Annotated[
        int | None, typer.Option(help="drop only judged pairs in the top-k pool")
    ] = None,
    measure: Annotated[str, typer.Option(help="measure that ranks systems")] = "nDCG@10",
    corpus_index: IndexOpt = None,
    topic_field: TopicFieldOpt = "title",
    method: MethodOpt = "dream",
    job: Annotated[
        str | None, typer.Option(help="job name (default: simulate-<qrels>-<method>-<seed>)")
    ] = None,
    rel_level: RelLevelOpt = 1,
    grades: GradesOpt = None,
    out_path: Annotated[
        Path | None, typer.Option("--out", help="write the report as JSON", callback=output_path)
    ] = None,
    *,
    judging: JudgingFlags,
) -> None:
    """Drop judged pairs, refill them with a method, report agreement and ranking stability."""
    spec = judging.spec(method)
    with resumable(spec.settings.db), progress_meter("judging") as on_progress:
        simulation = simulate_holes(
            qrels, run_paths(runs, more_runs), queries, corpus, spec, fraction=fraction,
            seed=drop_seed, depth=depth, measure=measure, rel_level=rel_level, job=job,
            on_progress=on_progress, grades=parse_grades(grades), topic_field=topic_field,
            corpus_index=corpus_index,
        )  # fmt: skip
    run = simulation.run
    if run.error is not None:
        console.print(f"[red]stopped early:[/red] {escape(run.error.one_line())}")
    if out_path is not None:
        write_json(simulation.report.model_dump(mode="json"), out_path)
    _print_simulation(simulation.report, run.job)
    print_failed(run.failed, run.outcome.busy)
    finish_run([run], judging.allow_failed)


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
