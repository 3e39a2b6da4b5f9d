"""``docket eval methods``: DREAM and the baselines side by side on gold-labelled pairs."""

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress, TaskID
from rich.table import Table

from docket.cli.common import console, escape, model_factory, out
from docket.cli.progress import LineProgress
from docket.config import Settings, load_settings
from docket.errors import ConfigError
from docket.ir.formats import write_atomically
from docket.relevance.evaluate import EvalReport, evaluate_methods, pair_rows, plot_curves
from docket.relevance.metrics import Key
from docket.relevance.options import METHODS, JudgeOptions, check_applicable
from docket.relevance.pairs_io import read_labels, read_pairs
from docket.relevance.types import Judgment

ROWS: list[tuple[str, str, str]] = [
    # (field, heading, format) ; "%" = share shown as a percentage
    ("irrelevant_recall", "irrelevant recall", "%"),
    ("relevant_recall", "relevant recall", "%"),
    ("balanced_accuracy", "balanced accuracy", "%"),
    ("escalations_answered", "  escalations answered", "s"),
    ("kappa", "Cohen's kappa vs gold", ".3f"),
    ("weighted_kappa", "weighted kappa (grades)", ".3f"),
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


def methods(
    pairs: Annotated[Path, typer.Argument(help="Pairs with gold labels (JSONL or TSV).")],
    methods: Annotated[str, typer.Option(help="Comma-separated methods to compare.")] = ",".join(
        METHODS
    ),
    model: Annotated[
        str | None, typer.Option(help="Main model, e.g. local or openai:gpt-4o-mini.")
    ] = None,
    rounds: Annotated[int, typer.Option(help="DREAM: maximum debate rounds.")] = 2,
    budget: Annotated[float, typer.Option(help="LARA: fraction of pairs sent to humans.")] = 0.035,
    stances: Annotated[str, typer.Option(help="DREAM: opposing, swapped or neutral.")] = "opposing",
    agents: Annotated[int, typer.Option(help="DREAM: number of agents.")] = 2,
    agent_models: Annotated[str, typer.Option(help="DREAM: comma-separated model per agent.")] = "",
    adjudicator: Annotated[str | None, typer.Option(help="DREAM: LLM adjudicator model.")] = None,
    scale: Annotated[str, typer.Option(help="single: binary or graded (0-3).")] = "binary",
    samples: Annotated[int, typer.Option(help="majority: number of votes.")] = 5,
    report_path: Annotated[
        Path | None, typer.Option("--out", help="Write the report as JSON here.")
    ] = None,
    plot: Annotated[Path | None, typer.Option(help="Draw bAcc vs escalation as PNG here.")] = None,
    humans: Annotated[
        str,
        typer.Option(
            help="Who answers escalations: 'gold', 'review' (reviewers' decisions in --db), "
            "or a file of qid, docid, label."
        ),
    ] = "gold",
    db: Annotated[str | None, typer.Option(help="Store with review decisions.")] = None,
    cache: Annotated[str | None, typer.Option(help="Response cache file, or 'off'.")] = None,
    concurrency: Annotated[int | None, typer.Option(help="Pairs judged at once.")] = None,
    pairs_out: Annotated[
        Path | None, typer.Option(help="Write one JSONL row per method and pair here.")
    ] = None,
    progress_every: Annotated[
        int, typer.Option(min=1, help="Off a terminal: a progress line every N pairs.")
    ] = 25,
) -> None:
    """Compare relevance methods against gold labels; print a table, write JSON and a plot."""
    settings = load_settings(model=model, cache=cache, concurrency=concurrency, db=db)
    names = _method_list(methods)
    options = JudgeOptions.checked(
        rounds=rounds,
        budget=budget,
        stances=stances,
        agents=agents,
        scale=scale,
        samples=samples,
        adjudicator=adjudicator,
        agent_models=[m.strip() for m in agent_models.split(",") if m.strip()],
    )
    check_applicable(names, options)
    pair_list = read_pairs(pairs)
    decisions = _human_decisions(humans, settings.db)
    report = _run(pair_list, names, options, settings, decisions, progress_every)
    out.print(metrics_table(report))
    if report.curves:
        out.print(curves_table(report))
    if report_path is not None:
        report_path.parent.mkdir(parents=True, exist_ok=True)
        data = {"model": settings.model, **report.to_json()}
        report_path.write_text(json.dumps(data, indent=2) + "\n")
        typer.echo(f"report written to {report_path}")
    if plot is not None:
        typer.echo(f"plot written to {plot_curves(report, plot)}")
    if pairs_out is not None:
        rows = pair_rows(report, list(pair_list), decisions)
        count = write_atomically(pairs_out, (json.dumps(r) + "\n" for r in rows))
        typer.echo(f"{count} per-pair rows written to {pairs_out}")


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


def _run(
    pairs: list,
    names: list[str],
    options: JudgeOptions,
    settings: Settings,
    decisions: dict[Key, int] | None,
    progress_every: int = 25,
) -> EvalReport:
    # One Model per name, sharing the response cache: DREAM's curve re-runs for other R
    # then repeat earlier rounds from the cache instead of calling the model again.
    get_model = model_factory(settings)

    def run(on_pair: Callable[[str, Judgment], None]) -> EvalReport:
        return asyncio.run(
            evaluate_methods(
                pairs,
                names,
                options,
                get_model,
                humans=decisions,
                duplicates=getattr(pairs, "duplicates", 0),
                on_pair=on_pair,
                concurrency=settings.concurrency,
            )
        )

    if not console.is_terminal:
        lines = LineProgress(every=progress_every)
        return run(lambda tag, _judgment: lines.advance(tag, len(pairs)))
    with Progress(console=console, transient=True) as progress:
        tasks: dict[str, TaskID] = {}

        def on_pair(tag: str, _judgment: Judgment) -> None:
            if tag not in tasks:
                tasks[tag] = progress.add_task(escape(tag), total=len(pairs))
            progress.advance(tasks[tag])

        return run(on_pair)


def metrics_table(report: EvalReport) -> Table:
    """Methods side by side, one metric per row."""
    table = Table(title=f"Relevance methods on {report.pairs} pairs")
    table.add_column("metric")
    for name in report.metrics:
        table.add_column(name, justify="right")
    for field, heading, fmt in ROWS:
        values = [getattr(m, field) for m in report.metrics.values()]
        table.add_row(heading, *(escape(_fmt(v, fmt)) for v in values))
    return table


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
