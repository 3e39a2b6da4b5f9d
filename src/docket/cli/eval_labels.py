"""``docket eval labels GOLD LABELS... [--runs RUN...]``: agreement of label files with gold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from typer.core import TyperCommand

from docket.cli.common import out
from docket.cli.eval_labels_output import render_csv, render_json, render_markdown, tables
from docket.cli.ir_common import RelLevelOpt, write_json
from docket.cli.outputs import image_path, output_path
from docket.errors import ConfigError
from docket.ir.formats import write_atomically
from docket.ir.label_agreement import LabelsReport, evaluate_labels
from docket.ir.label_files import Scale, parse_scale

FORMATS = ("table", "csv", "json", "markdown")


class RunsTakeTheRest(TyperCommand):
    """Lets ``--runs`` take several values: ``--runs a b c`` reads as ``--runs a --runs b ...``.

    The label files are positional, so without this a second run would be read as a
    label file. Values after ``--runs`` up to the next option are runs.
    """

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:  # type: ignore[override]
        spread, in_runs = [], False
        for arg in args:
            if arg.startswith("-"):
                in_runs = arg == "--runs" or arg.startswith("--runs=")
                spread.append(arg)
            elif in_runs and spread[-1] != "--runs":
                spread += ["--runs", arg]
            else:
                spread.append(arg)
        return super().parse_args(ctx, spread)


def labels(
    gold: Annotated[
        str,
        typer.Argument(metavar="GOLD", help="gold labels: TREC qrels, JSONL, job:NAME, irds:ID"),
    ],
    label_files: Annotated[
        list[str],
        typer.Argument(metavar="LABELS", help="label sets to compare with gold (same kinds)"),
    ],
    runs: Annotated[
        list[Path] | None,
        typer.Option("--runs", help="TREC run files, after the label files: --runs R1 R2 ..."),
    ] = None,
    measure: Annotated[str, typer.Option(help="ir_measures name that ranks systems")] = "nDCG@10",
    rel_level: RelLevelOpt = 1,
    scale: Annotated[
        str | None, typer.Option(help="label scale LO:HI; labels outside it are refused")
    ] = None,
    clip: Annotated[
        str | None, typer.Option(help="clip labels into LO:HI (and use it as the scale)")
    ] = None,
    per_query: Annotated[
        Path | None, typer.Option(help="per-query kappa: .json, else TSV", callback=output_path)
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="table | csv | json | markdown")] = "table",
    out_path: Annotated[
        Path | None, typer.Option("--out", help="JSON report", callback=output_path)
    ] = None,
    plot: Annotated[
        Path | None,
        typer.Option(
            help="PNG: confusion heatmap per label set (a grid for many)", callback=image_path
        ),
    ] = None,
    db: Annotated[str | None, typer.Option(help="store path or URL for job: sources")] = None,
) -> None:
    """Agreement of label files with gold: kappa (plain, weighted, binarised), alpha, bAcc.

    With --runs: Kendall's tau, tau_AP and Spearman's rho between system rankings.
    """
    if fmt not in FORMATS:
        raise ConfigError(f"--format must be one of {', '.join(FORMATS)}, not '{fmt}'")
    report = evaluate_labels(
        gold,
        label_files,
        _scale(scale, clip),
        rel_level,
        per_query=per_query is not None,
        runs=runs or (),
        measure=measure,
        db=db,
    )
    _print(report, fmt)
    if out_path is not None:
        write_json(report.model_dump(mode="json"), out_path)
    if per_query is not None:
        _write_per_query(report, per_query)
    if plot is not None:
        from docket.ir.label_plot import plot_confusions

        plot_confusions(report, plot)
    _notes(report, out_path, per_query, plot)


def _scale(scale: str | None, clip: str | None) -> Scale:
    if clip is None:
        return parse_scale(scale or "0:3")
    clipped = parse_scale(clip, clip=True, option="--clip")
    if scale is not None and parse_scale(scale) != Scale(clipped.low, clipped.high):
        raise ConfigError(f"--scale {scale} and --clip {clip} disagree", hint="give one of them")
    return clipped


def _print(report: LabelsReport, fmt: str) -> None:
    if fmt == "table":
        for table in tables(report):
            out.print(table)
        return
    render = {"csv": render_csv, "json": render_json, "markdown": render_markdown}[fmt]
    typer.echo(render(report), nl=False)


def _write_per_query(report: LabelsReport, path: Path) -> None:
    rows = [(r.name, q) for r in report.results for q in r.per_query or []]
    if path.suffix == ".json":
        data = {r.name: [q.model_dump() for q in r.per_query or []] for r in report.results}
        write_atomically(path, [json.dumps(data, indent=2) + "\n"])
    else:
        header = "label_set\tqid\tpairs\tkappa\theadline_kappa\n"
        lines = (
            f"{n}\t{q.qid}\t{q.pairs}\t{_tsv(q.kappa)}\t{_tsv(q.headline_kappa)}\n" for n, q in rows
        )
        write_atomically(path, [header, *lines])


def _tsv(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def _notes(
    report: LabelsReport, out_path: Path | None, per_query: Path | None, plot: Path | None
) -> None:
    """What was clipped and written, on stderr so that csv/json/markdown stay clean."""
    clipped = {r.name: r.clipped for r in report.results if r.clipped}
    if report.gold_clipped:
        clipped = {"gold": report.gold_clipped, **clipped}
    low, high = report.scale
    for name, count in clipped.items():
        noun = "label" if count == 1 else "labels"
        typer.echo(f"{name}: {count} {noun} clipped into {low}..{high}", err=True)
    for what, path in (("report", out_path), ("per-query kappa", per_query), ("plot", plot)):
        if path is not None:
            typer.echo(f"{what} written to {path}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``labels`` to the ``docket eval`` group."""
    app.command("labels", cls=RunsTakeTheRest)(labels)
