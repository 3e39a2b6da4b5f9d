"""``docket holes simulate``: drop judged pairs, refill them through the store, compare.

Flag parsing, one call of :func:`docket.holes.simulate_holes`, and printing. It judges
exactly as ``docket judge`` and ``holes fill`` do (same flags, store, executors).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from docket.cli.budget_flags import BatchOpt, OrderSeedOpt
from docket.cli.common import console, escape, finish_run, out, print_failed, resumable
from docket.cli.holes_budget import print_budget, split_list
from docket.cli.ir_common import (
    GradesOpt,
    GuidanceFieldOpt,
    IndexOpt,
    MoreRuns,
    QrelsOpt,
    RelLevelOpt,
    RunsOpt,
    TopicFieldOpt,
    fmt,
    parse_grades,
    run_paths,
    write_json,
)
from docket.cli.judging_flags import RUNNING, JudgingFlags, MethodOpt, judging_command
from docket.cli.outputs import image_path, output_path
from docket.cli.progress import progress_meter
from docket.errors import UserError
from docket.holes.oracle import BlankCorpus, BlankQueries, OracleJudge, oracle_spec
from docket.holes.order import MEASURED_ORDERS
from docket.holes.order_sim import OrderSimulation, simulate_orders
from docket.holes.ordered import BATCH
from docket.holes.plot import plot_order_curves
from docket.holes.run import HoleSimulation, simulate_holes
from docket.holes.simulate import SimulationReport

OptCorpus = Annotated[
    str | None, typer.Option("--corpus", help="corpus .jsonl/.tsv or irds:<id> (not for --oracle)")
]
OptQueries = Annotated[
    str | None, typer.Option("--queries", help="queries .tsv/.jsonl, TREC topics, or irds:<id>")
]


@judging_command(*RUNNING)
def simulate_command(
    qrels: QrelsOpt,
    corpus: OptCorpus = None,
    queries: OptQueries = None,
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
    guidance_field: GuidanceFieldOpt = None,
    method: MethodOpt = "dream",
    job: Annotated[
        str | None, typer.Option(help="job name (default: simulate-<qrels>-<method>-<seed>)")
    ] = None,
    rel_level: RelLevelOpt = 1,
    grades: GradesOpt = None,
    out_path: Annotated[
        Path | None, typer.Option("--out", help="write the report as JSON", callback=output_path)
    ] = None,
    oracle: Annotated[
        bool, typer.Option(help="the gold label is the judge (no LLM; measures an order)")
    ] = False,
    budget: Annotated[
        str | None,
        typer.Option(help="refill only these budgets of the dropped pairs, e.g. 10%,25%,50%"),
    ] = None,
    order: Annotated[
        str, typer.Option(help="orders to measure under --budget (depth,mtf,bandit,fusion)")
    ] = ",".join(MEASURED_ORDERS),
    order_seed: OrderSeedOpt = 0,
    batch: BatchOpt = BATCH,
    plot: Annotated[
        Path | None,
        typer.Option(help="PNG: recovered relevant pairs vs judgments", callback=image_path),
    ] = None,
    *,
    judging: JudgingFlags,
) -> object:
    """Drop judged pairs, refill them with a method, report agreement and ranking stability.

    With --budget: refill each budget in each --order and report the dropped relevant
    pairs recovered and Kendall's tau against the full-qrels ranking.
    """
    spec = judging.spec(method)
    if budget is None and plot is not None:
        raise UserError("--plot draws budgeted orders", hint="add --budget 10%,25%,50%")
    common = dict(fraction=fraction, seed=drop_seed, depth=depth, measure=measure,
                  rel_level=rel_level, job=job, grades=parse_grades(grades),
                  topic_field=topic_field, corpus_index=corpus_index,
                  guidance_field=guidance_field)  # fmt: skip
    with resumable(spec.settings.db), progress_meter("judging") as on_progress:
        if budget is not None:
            report = simulate_orders(
                qrels, run_paths(runs, more_runs), queries, corpus, spec, oracle=oracle,
                budgets=split_list(budget), orders=split_list(order), batch=batch,
                order_seed=order_seed,
                on_progress=on_progress, **common,
            )  # fmt: skip
            _finish_budget(report, out_path, plot)
            return
        if not oracle and (queries is None or corpus is None):
            raise UserError("--queries and --corpus are needed unless the judge is --oracle")
        simulation = simulate_holes(
            qrels, run_paths(runs, more_runs), queries or BlankQueries(), corpus or BlankCorpus(),
            oracle_spec(spec) if oracle else spec,
            on_progress=on_progress, judge=OracleJudge() if oracle else None, **common,
        )  # fmt: skip
    _finish_simulation(simulation, out_path, judging.allow_failed)
    return simulation


def _finish_simulation(
    simulation: HoleSimulation, out_path: Path | None, allow_failed: bool
) -> None:
    """Report a refill simulation: stop reason, JSON file, table, failed pairs, exit code."""
    run = simulation.run
    if run.error is not None:
        console.print(f"[red]stopped early:[/red] {escape(run.error.one_line())}")
    if out_path is not None:
        write_json(simulation.report.model_dump(mode="json"), out_path)
    _print_simulation(simulation.report, run.job)
    print_failed(run.failed, run.outcome.busy)
    finish_run([run], allow_failed)


def _finish_budget(report: OrderSimulation, out_path: Path | None, plot: Path | None) -> None:
    if out_path is not None:
        write_json(report.model_dump(mode="json"), out_path)
    if plot is not None:
        plot_order_curves(report.curves, report.relevant, plot, f"{report.method}, {report.job}")
    print_budget(report)


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
