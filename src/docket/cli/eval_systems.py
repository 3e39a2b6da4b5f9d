"""``docket eval systems`` and ``docket eval rag``: retrieval systems before and after completion."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from docket.cli.common import out
from docket.cli.ir_common import (
    GradesOpt,
    MoreRuns,
    QrelsOpt,
    RelLevelOpt,
    RunsOpt,
    fmt,
    load_qrels,
    load_runs,
    split_names,
    write_json,
)
from docket.ir.evaluate import DEFAULT_MEASURES, SystemsReport, compare_systems
from docket.ir.rag import RagAlignment, rag_alignment, read_generation

CompletedOpt = Annotated[Path | None, typer.Option(help="completed qrels (e.g. from holes fill)")]


def systems(
    qrels: QrelsOpt,
    runs: RunsOpt = None,
    more_runs: MoreRuns = None,
    completed_qrels: CompletedOpt = None,
    measures: Annotated[
        list[str] | None, typer.Option(help="ir_measures names, comma-separated")
    ] = None,
    primary: Annotated[
        str | None, typer.Option(help="measure that ranks systems (default: first)")
    ] = None,
    condensed: Annotated[
        bool, typer.Option(help="also evaluate condensed (judged-only) lists")
    ] = True,
    plot: Annotated[Path | None, typer.Option(help="PNG plot of rank shifts")] = None,
    out_path: Annotated[Path | None, typer.Option("--out", help="JSON report")] = None,
    grades: GradesOpt = None,
) -> None:
    """Evaluate every system before/after completion; rank shifts, Kendall's tau and tau_AP."""
    original = load_qrels(qrels, grades)
    completed = load_qrels(completed_qrels, grades) if completed_qrels else None
    report = compare_systems(
        load_runs(runs, more_runs),
        original,
        completed,
        split_names(measures, DEFAULT_MEASURES),
        primary,
        condensed,
    )
    if out_path is not None:
        write_json(report.model_dump(mode="json"), out_path)
    if plot is not None and report.shift_variant is not None:
        from docket.ir.plot import plot_rank_shifts

        plot_rank_shifts(report, plot)
    _print_systems(report)


def _print_systems(report: SystemsReport) -> None:
    after, primary = report.shift_variant, report.primary
    table = Table(
        title=f"Systems ranked by {primary}" + (f": original -> {after}" if after else "")
    )
    table.add_column("system")
    extra = ["new rank", "shift", f"{primary} ({after})"] if after else []
    for column in ("rank", f"{primary} (original)", *extra):
        table.add_column(column, justify="right")
    for name in report.systems():
        row = [
            name,
            str(report.ranks["original"][name]),
            fmt(report.scores["original"][name][primary]),
        ]
        if after:
            shift = report.shifts[name]
            row += [
                str(report.ranks[after][name]),
                f"{shift:+d}" if shift else "0",
                fmt(report.scores[after][name][primary]),
            ]
        table.add_row(*row)
    out.print(table)
    for variant in ("original", "completed"):
        if variant in report.scores:
            out.print(_scores_table(report, variant))
    total = len(report.ranks["original"])
    for c in report.comparisons:
        out.print(
            f"{c.variant}: Kendall's tau {fmt(c.tau)}, tau_AP {fmt(c.tau_ap)}, "
            f"{c.changed} of {total} systems changed rank"
        )


def _scores_table(report: SystemsReport, variant: str) -> Table:
    table = Table(title=f"Scores with {variant} qrels")
    table.add_column("system")
    for measure in report.measures:
        table.add_column(measure, justify="right")
    for name in report.systems():
        table.add_row(name, *(fmt(report.scores[variant][name][m]) for m in report.measures))
    return table


def rag(
    qrels: QrelsOpt,
    generation: Annotated[Path, typer.Option(help="JSONL of system, qid, correct (bool or score)")],
    runs: RunsOpt = None,
    more_runs: MoreRuns = None,
    completed_qrels: CompletedOpt = None,
    k: Annotated[int, typer.Option(min=1, help="retrieval cutoff")] = 10,
    measure: Annotated[str, typer.Option(help="retrieval measure (nDCG, P, ...)")] = "nDCG",
    threshold: Annotated[
        float, typer.Option(help="correctness from which an answer is correct")
    ] = 0.5,
    rel_level: RelLevelOpt = 1,
    out_path: Annotated[Path | None, typer.Option("--out", help="JSON report")] = None,
    grades: GradesOpt = None,
) -> None:
    """RAGAlign@k: how well retrieval quality tracks answer correctness, before/after completion."""
    variants = {"original": load_qrels(qrels, grades)}
    if completed_qrels:
        variants["completed"] = load_qrels(completed_qrels, grades)
    answers = read_generation(generation)
    systems_ = load_runs(runs, more_runs)
    results = [
        rag_alignment(
            q,
            systems_,
            answers,
            k=k,
            measure=measure,
            rel_level=rel_level,
            threshold=threshold,
            variant=name,
        )
        for name, q in variants.items()
    ]
    if out_path is not None:
        write_json([r.model_dump(mode="json") for r in results], out_path)
    _print_rag(results)


def _print_rag(results: list[RagAlignment]) -> None:
    first = results[0]
    table = Table(
        title=f"RAGAlign@{first.k} ({len(first.systems)} systems, retrieval {first.measure})"
    )
    for column in (
        "qrels",
        "RAGAlign (Pearson)",
        "Kendall's tau",
        "per-query agreement",
        "kappa",
        "pairs",
    ):
        table.add_column(column, justify="left" if column == "qrels" else "right")
    for r in results:
        table.add_row(
            r.variant, fmt(r.pearson), fmt(r.kendall), fmt(r.agreement), fmt(r.kappa), str(r.pairs)
        )
    out.print(table)


def register(app: typer.Typer) -> None:
    """Add ``systems`` and ``rag`` to the ``docket eval`` group."""
    app.command("systems")(systems)
    app.command("rag")(rag)
