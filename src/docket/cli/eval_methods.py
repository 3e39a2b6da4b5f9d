"""``docket eval methods``: DREAM and the baselines side by side on gold-labelled pairs."""

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from docket.agreement import MIN_PAIRS, shown
from docket.cli.common import escape, finish_run, out, resumable
from docket.cli.judging_flags import RUNNING, JudgingFlags, judging_command
from docket.cli.outputs import image_path, output_path
from docket.cli.progress import tagged_meter
from docket.errors import ConfigError
from docket.ir.formats import write_atomically
from docket.jobs import job_input
from docket.jobs.methods import compare_methods
from docket.relevance.evaluate import EvalReport, pair_rows
from docket.relevance.evaluate_plot import plot_curves
from docket.relevance.metrics import FIGURES, MethodMetrics
from docket.relevance.options import METHODS
from docket.relevance.pairs_io import read_labels

ROWS: list[tuple[str, str, str]] = [
    # (field, heading, format) ; "%" = share shown as a percentage. The agreement figures
    # (metrics.FIGURES) are shown with their n, and as too few under MIN_PAIRS pairs.
    ("irrelevant_recall", "irrelevant recall", "%"),
    ("relevant_recall", "relevant recall", "%"),
    ("balanced_accuracy", "balanced accuracy", "%"),
    ("escalations_answered", "  escalations answered", "s"),
    ("kappa", "Cohen's kappa", ".3f"),
    ("weighted_kappa", "weighted kappa (linear)", ".3f"),
    ("escalation_rate", "escalation rate", "%"),
    ("automatic_accuracy", "accuracy of automatic labels", "%"),
    ("calls_per_pair", "LLM calls / pair", ".2f"),
    ("tokens_per_pair", "tokens / pair", ".0f"),
    ("parse_failures", "parse failures", "d"),
    ("engagement", "later turns engaged", "%"),
    ("invalid_evidence", "invalid evidence ids", "d"),
    ("unresolved", "unresolved escalations", "d"),
]


def register(app: typer.Typer) -> None:
    """Add the ``methods`` command to the ``docket eval`` group."""
    app.command("methods")(methods)


@judging_command(*RUNNING)
def methods(
    pairs: Annotated[Path, typer.Argument(help="Pairs with gold labels (JSONL or TSV).")],
    methods: Annotated[str, typer.Option(help="Comma-separated methods to compare.")] = ",".join(
        METHODS
    ),
    report_path: Annotated[
        Path | None,
        typer.Option("--out", help="Write the report as JSON here.", callback=output_path),
    ] = None,
    plot: Annotated[
        Path | None, typer.Option(help="Draw bAcc vs escalation as PNG here.", callback=image_path)
    ] = None,
    humans: Annotated[
        str,
        typer.Option(
            help="Who answers escalations: 'gold', 'review' (reviewers' decisions in --db), "
            "or a file of qid, docid, label."
        ),
    ] = "gold",
    job: Annotated[
        str | None, typer.Option(help="Prefix of the jobs, one per method (default: eval-<stem>).")
    ] = None,
    pairs_out: Annotated[
        Path | None,
        typer.Option(help="Write one JSONL row per method and pair here.", callback=output_path),
    ] = None,
    progress_every: Annotated[
        int, typer.Option(min=1, help="Off a terminal: a progress line every N pairs.")
    ] = 25,
    *,
    judging: JudgingFlags,
) -> None:
    """Compare relevance methods against gold labels; print a table, write JSON and a plot."""
    names = _method_list(methods)
    spec = judging.spec(names[0], methods=names)
    loaded = spec.select(job_input(pairs))
    decisions = _human_decisions(humans, spec.settings.db)
    with resumable(spec.settings.db), tagged_meter(progress_every) as on_progress:
        comparison = compare_methods(
            loaded, names, spec, humans=decisions, job_prefix=job, on_progress=on_progress
        )
    report = comparison.report
    out.print(metrics_table(report))
    if report.curves:
        out.print(curves_table(report))
    if report_path is not None:
        data = {"model": spec.model_name, **report.to_json()}
        write_atomically(report_path, [json.dumps(data, indent=2) + "\n"])
        out.print(f"report written to {report_path}", markup=False, soft_wrap=True)
    if plot is not None:
        out.print(f"plot written to {plot_curves(report, plot)}", markup=False, soft_wrap=True)
    if pairs_out is not None:
        rows = pair_rows(report, list(loaded), decisions)
        count = write_atomically(pairs_out, (json.dumps(r) + "\n" for r in rows))
        out.print(f"{count} per-pair rows written to {pairs_out}", markup=False, soft_wrap=True)
    for tag, run in comparison.runs.items():
        if run.failed:
            out.print(f"{tag}: {len(run.failed)} failed pairs are not scored", soft_wrap=True)
    finish_run(comparison.runs.values(), judging.allow_failed)


def _human_decisions(humans: str, db: str) -> dict[tuple[str, str], int] | None:
    """Gold stands in for humans, or recorded decisions from the review store or a file."""
    if humans == "gold":
        return None
    if humans != "review":
        return read_labels(humans)
    from docket.review.queue import reviewed_labels
    from docket.store import open_store

    with open_store(db).session() as session:
        return {key: outcome.label for key, outcome in reviewed_labels(session).items()}


def _method_list(text: str) -> list[str]:
    names = [name.strip().lower() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in METHODS]
    if unknown or not names:
        raise ConfigError(
            f"unknown method(s): {', '.join(unknown) or '(none given)'}",
            hint=f"choose from {', '.join(METHODS)}",
        )
    return list(dict.fromkeys(names))


def metrics_table(report: EvalReport) -> Table:
    """Methods side by side, one metric per row."""
    table = Table(title=f"Relevance methods on {report.pairs} pairs")
    table.add_column("metric")
    for name in report.metrics:
        table.add_column(name, justify="right")
    for field, heading, fmt in ROWS:
        cells = [_cell(m, field, fmt) for m in report.metrics.values()]
        if field in FIGURES:
            heading = f"{heading}, {FIGURES[field][1]}"
        table.add_row(heading, *(escape(c) for c in cells))
    table.caption = f"n: pairs a figure is computed over; fewer than {MIN_PAIRS}: too few"
    return table


def _cell(metrics: MethodMetrics, field: str, fmt: str) -> str:
    value = getattr(metrics, field)
    if field in FIGURES:
        return shown(value, getattr(metrics, FIGURES[field][0]), fmt)
    return _fmt(value, fmt)


def curves_table(report: EvalReport) -> Table:
    """Escalation rate and balanced accuracy per setting (DREAM rounds, LARA budgets)."""
    table = Table(title="Escalation vs balanced accuracy")
    for heading in ("method", "setting", "escalation rate", "balanced accuracy"):
        table.add_column(heading, justify="left" if heading in ("method", "setting") else "right")
    for points in report.curves.values():
        for p in points:
            table.add_row(
                escape(p.method),
                escape(p.setting),
                _fmt(p.escalation_rate, "%"),
                _fmt(p.balanced_accuracy, "%"),
            )
    return table


def _fmt(value: float | int | str | None, fmt: str) -> str:
    if value is None:
        return "-"
    if fmt == "s":
        return str(value)
    return f"{100 * value:.1f}%" if fmt == "%" else format(value, fmt)
