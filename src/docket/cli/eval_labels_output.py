"""Renderings of a :class:`~docket.ir.label_agreement.LabelsReport`: table, CSV, Markdown, JSON.

Every rendering has one row per label set, best headline first (kappa at ``rel_level``).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from typing import Any

from rich.table import Table

from docket.cli.common import escape, id_column
from docket.cli.ir_common import fmt
from docket.ir.label_agreement import LabelAgreement, LabelsReport
from docket.ir.label_rankings import SystemRanking

Column = tuple[str, Callable[[LabelAgreement], Any]]


def agreement_columns(report: LabelsReport) -> list[Column]:
    """Every per-label-set column: heading and value."""
    columns: list[Column] = [
        ("label set", lambda r: r.name),
        ("pairs", lambda r: r.joined),
        ("gold covered", lambda r: r.gold_coverage),
        ("labels covered", lambda r: r.label_coverage),
        ("clipped", lambda r: r.clipped),
        ("kappa", lambda r: r.kappa),
        ("kappa linear", lambda r: r.kappa_linear),
        ("kappa quadratic", lambda r: r.kappa_quadratic),
    ]
    for t in range(report.scale[0] + 1, report.scale[1] + 1):
        columns.append((f"kappa >={t}", lambda r, t=t: r.binary_kappa[t]))
    columns += [
        ("alpha nominal", lambda r: r.alpha_nominal),
        ("alpha ordinal", lambda r: r.alpha_ordinal),
        ("alpha interval", lambda r: r.alpha_interval),
        (f"bAcc >={report.rel_level}", lambda r: r.balanced_accuracy),
        ("recall irrelevant", lambda r: r.recall_irrelevant),
        ("recall relevant", lambda r: r.recall_relevant),
    ]
    return columns


RANKING_COLUMNS: list[tuple[str, Callable[[SystemRanking], Any]]] = [
    ("queries", lambda r: r.queries),
    ("tau", lambda r: r.tau),
    ("tau_ap", lambda r: r.tau_ap),
    ("rho", lambda r: r.rho),
    ("rank changes", lambda r: r.changed),
    ("largest change", lambda r: _change(r)),
]


def _change(ranking: SystemRanking) -> str:
    change = ranking.largest_change
    if change is None:
        return ""
    return f"{change.system} {change.gold_rank}->{change.label_rank}"


def rows(report: LabelsReport) -> tuple[list[str], list[list[Any]]]:
    """The header and the rows of the flat renderings (CSV, Markdown)."""
    columns = agreement_columns(report)
    header = [heading for heading, _ in columns]
    by_name = {r.name: r for r in report.rankings or []}
    if report.rankings:
        header += [heading for heading, _ in RANKING_COLUMNS]
    table = []
    for result in report.results:
        row = [value(result) for _, value in columns]
        if report.rankings:
            row += [value(by_name[result.name]) for _, value in RANKING_COLUMNS]
        table.append(row)
    return header, table


def _cell(value: Any, digits: int = 4) -> str:
    return fmt(value, digits) if isinstance(value, float) or value is None else str(value)


def render_csv(report: LabelsReport) -> str:
    """CSV with a header line; numbers to 4 decimals, empty where undefined."""
    header, table = rows(report)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in table:
        writer.writerow(["" if v is None else _cell(v) for v in row])
    return buffer.getvalue()


def render_markdown(report: LabelsReport) -> str:
    """A GitHub Markdown table; numbers to 4 decimals, '-' where undefined."""
    header, table = rows(report)
    rule = "|".join(["---"] + ["---:"] * (len(header) - 1))
    lines = ["| " + " | ".join(header) + " |", f"|{rule}|"]
    for row in table:
        cells = [_cell(v).replace("|", "\\|") for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def render_json(report: LabelsReport) -> str:
    """The whole report as indented JSON (NaN never appears: undefined is null)."""
    return report.model_dump_json(indent=2) + "\n"


GRADED = ("kappa", "kappa linear", "kappa quadratic", "alpha nominal", "alpha ordinal")
GRADED += ("alpha interval",)
COVERAGE = ("pairs", "gold covered", "labels covered", "clipped")
SHORT = {
    "kappa linear": "lin.\nweights",
    "kappa quadratic": "quad.\nweights",
    "alpha nominal": "alpha\nnom.",
    "alpha ordinal": "alpha\nord.",
    "alpha interval": "alpha\nint.",
    "recall irrelevant": "recall\nirrel.",
    "recall relevant": "recall\nrel.",
    "gold covered": "gold\ncov.",
    "labels covered": "labels\ncov.",
}


def tables(report: LabelsReport) -> list[Table]:
    """Terminal tables of six columns at most, so that every value shows at 80 columns."""
    columns = dict(agreement_columns(report))
    binary = [h for h in columns if h.startswith("kappa >=")]
    binary += [f"bAcc >={report.rel_level}", "recall irrelevant", "recall relevant"]
    low, high = report.scale
    order = f"best kappa >={report.rel_level} first"
    found = [
        _table(
            report, columns, list(GRADED), f"Agreement with {report.gold}, grades {low}..{high}"
        ),
        _table(report, columns, binary, f"Binarised (relevant: grade >= t), {order}"),
        _table(report, columns, list(COVERAGE), "Pairs joined on (qid, docid)"),
    ]
    if report.rankings:
        found.append(_rankings_table(report))
        if len(report.rankings) <= 4:
            found.append(_systems_table(report.rankings))
    if len(report.results) == 1:
        found.append(_confusion_table(report))
    return found


def _table(report: LabelsReport, columns: dict, headings: list[str], title: str) -> Table:
    table = Table(title=escape(title))
    id_column(table, "label set", [r.name for r in report.results])
    for heading in headings:
        label = SHORT.get(heading, heading.replace(" ", "\n", 1))
        table.add_column(label, justify="right", overflow="fold")
    for result in report.results:
        table.add_row(escape(result.name), *(_cell(columns[h](result), 3) for h in headings))
    return table


def _rankings_table(report: LabelsReport) -> Table:
    rankings = {r.name: r for r in report.rankings or []}
    measure = report.measure or ""
    table = Table(title=f"System rankings by {measure}: gold vs each label set")
    id_column(table, "label set", list(rankings))
    for heading, _ in RANKING_COLUMNS:
        table.add_column(heading, justify="left" if heading == "largest change" else "right")
    for result in report.results:
        ranking = rankings[result.name]
        cells = [_cell(value(ranking), 3) for _, value in RANKING_COLUMNS]
        table.add_row(escape(result.name), *map(escape, cells))
    return table


def _systems_table(rankings: list[SystemRanking]) -> Table:
    first = rankings[0]
    table = Table(title=f"{first.measure} per system (rank)")
    systems = sorted(first.gold_ranks, key=lambda s: (first.gold_ranks[s], s))
    id_column(table, "system", systems)
    for heading in ["gold", *(r.name for r in rankings)]:
        table.add_column(escape(heading), justify="right")
    for system in systems:
        cells = [f"{fmt(first.gold_scores[system], 4)} ({first.gold_ranks[system]})"]
        cells += [f"{fmt(r.label_scores[system], 4)} ({r.label_ranks[system]})" for r in rankings]
        table.add_row(escape(system), *cells)
    return table


def _confusion_table(report: LabelsReport) -> Table:
    result = report.results[0]
    grades = range(report.scale[0], report.scale[1] + 1)
    table = Table(title=f"Confusion: gold grade (rows) x {escape(result.name)} (columns)")
    table.add_column("gold", justify="right")
    for grade in grades:
        table.add_column(str(grade), justify="right")
    for grade, counts in zip(grades, result.confusion, strict=True):
        table.add_row(str(grade), *map(str, counts))
    return table
