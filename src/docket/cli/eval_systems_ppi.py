"""``docket eval systems --ppi``: the human labels' options and the printed report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from docket.audit.ppi_report import PpiReport
from docket.audit.samples import HumanSample
from docket.cli.common import escape, id_column
from docket.cli.common import out as default_out
from docket.cli.ir_common import fmt
from docket.errors import ConfigError
from docket.ir.formats import Qrels, Run

PpiOpt = Annotated[
    bool,
    typer.Option(
        help="prediction-powered intervals: LLM-completed qrels + human labels of a random "
        "sample (--audit-job or --human-sample)"
    ),
]
AuditJobOpt = Annotated[
    str | None, typer.Option(help="--ppi: human labels from this job's audit (audit draw)")
]
HumanSampleOpt = Annotated[
    Path | None,
    typer.Option("--human-sample", help="--ppi: qrels of human grades of a random sample of pairs"),
]
InclusionOpt = Annotated[
    Path | None,
    typer.Option(
        help="--ppi: TSV qid docid probability [stratum] of the human sample (default: uniform)"
    ),
]
PpiQueriesOpt = Annotated[
    bool,
    typer.Option(help="--ppi: the human sample judges whole queries drawn at random (any measure)"),
]
DbOpt = Annotated[str | None, typer.Option("--db", help="--audit-job: store path or URL")]


def human_sample(
    ppi: bool,
    audit_job: str | None,
    sample: Path | None,
    inclusion: Path | None,
    db: str | None,
    whole_queries: bool = False,
) -> HumanSample | None:
    """The human labels the options name, or None without ``--ppi``.

    Raises:
        ConfigError: a human-label option without ``--ppi``, ``--ppi`` without human
            labels, or both sources at once.
    """
    given = [name for name, v in (("--audit-job", audit_job), ("--human-sample", sample)) if v]
    if not ppi:
        extra = given + [
            name
            for name, v in (
                ("--inclusion", inclusion),
                ("--db", db),
                ("--ppi-queries", whole_queries),
            )
            if v
        ]
        if extra:
            raise ConfigError(f"{extra[0]} is read only with --ppi", hint="add --ppi")
        return None
    if len(given) != 1:
        raise ConfigError(
            "--ppi needs human labels from exactly one of --audit-job J or --human-sample QRELS",
            hint="draw an audit (docket audit draw) or pass a qrels file of a random sample",
        )
    if audit_job:
        if inclusion:
            raise ConfigError("--inclusion goes with --human-sample; an audit records its own")
        return _audit_sample(audit_job, db)
    from docket.audit.samples import read_human_sample

    return read_human_sample(sample, inclusion)


def _audit_sample(job: str, db: str | None) -> HumanSample:
    from docket.audit.draw import audit_labels
    from docket.audit.samples import from_audit
    from docket.config import load_settings
    from docket.store import open_store

    store = open_store(load_settings(db=db).db)
    return from_audit(audit_labels(store, job), job)


def ppi_evaluation(
    sample: HumanSample | None,
    runs: list[Run],
    original: Qrels,
    completed: Qrels | None,
    names: list[str],
    alpha: float,
    whole_queries: bool,
) -> PpiReport | None:
    """The prediction-powered report when human labels were given: the LLM labels are the
    completed qrels (or ``--qrels`` alone), the original judgments exact."""
    if sample is None:
        return None
    from docket.audit.systems import evaluate_systems_ppi

    return evaluate_systems_ppi(
        runs, completed or original, sample, names, alpha=alpha,
        original=original if completed is not None else None, whole_queries=whole_queries,
    )  # fmt: skip


def print_ppi(report: PpiReport, say: Console | None = None) -> None:
    """One table per measure, the differences, and what the human sample contradicts
    (on ``say``: standard output by default, standard error when stdout is a file)."""
    out = say or default_out
    level = f"{report.confidence:.0%}"
    out.print(
        f"Prediction-powered intervals ({report.design} design, {report.human_labels} human "
        f"labels, frame of {report.frame} automatic labels, {level} intervals)",
        markup=False,
    )
    if report.unanswered:
        out.print(f"  {report.unanswered} drawn pairs are not answered yet", markup=False)
    if report.skipped_measures:
        out.print(
            f"  not linear in the labels, skipped: {', '.join(report.skipped_measures)} "
            "(judge whole queries and pass --ppi-queries)",
            markup=False,
        )
    for measure in report.measures:
        out.print(_systems_table(report, measure))
        out.print(_pairs_table(report, measure))
    _print_warnings(report, out)


def _systems_table(report: PpiReport, measure: str) -> Table:
    rows = [s for s in report.systems if s.measure == measure]
    table = Table(title=f"{measure}: estimates with intervals, LLM-only, humans-only")
    id_column(table, "system", [s.system for s in rows])
    for column in ("estimate", "interval", "LLM only", "humans only"):
        table.add_column(column, justify="right", overflow="fold")
    for s in sorted(rows, key=lambda s: -s.estimate):
        table.add_row(
            escape(s.system),
            fmt(s.estimate),
            f"[{fmt(s.ci_low)}, {fmt(s.ci_high)}]",
            fmt(s.naive),
            f"[{fmt(s.human_only.ci_low)}, {fmt(s.human_only.ci_high)}]",
        )
    return table


def _pairs_table(report: PpiReport, measure: str) -> Table:
    rows = [p for p in report.pairs if p.measure == measure]
    table = Table(title=f"{measure}: differences (simultaneous intervals, Holm)")
    id_column(table, "systems", [n for p in rows for n in (p.a, f"vs {p.b}")])
    for column in ("difference", "interval", "Holm p", "order"):
        table.add_column(column, justify="right", overflow="fold")
    for p in rows:
        order = "-"
        if p.significant:
            order = f"{p.a} > {p.b}" if p.difference > 0 else f"{p.b} > {p.a}"
        table.add_row(
            f"{escape(p.a)}\nvs {escape(p.b)}",
            fmt(p.difference),
            f"[{fmt(p.ci_low)}, {fmt(p.ci_high)}]",
            fmt(p.p_holm, 4),
            escape(order),
        )
    return table


def _print_warnings(report: PpiReport, out: Console) -> None:
    for p in report.unsupported_orders():
        first, second = (p.a, p.b) if p.naive > 0 else (p.b, p.a)
        verdict = "not supported by"
        if p.significant:  # significant the other way round
            verdict = f"contradicted ({second} > {first}) by"
        out.print(
            f"LLM-only order {first} > {second} on {p.measure} (by {abs(p.naive):.3f}) "
            f"{verdict} the human sample",
            markup=False,
        )
    for s in report.naive_outside():
        out.print(
            f"LLM-only figure outside the interval: {s.system} {s.measure} {fmt(s.naive)} "
            f"not in [{fmt(s.ci_low)}, {fmt(s.ci_high)}]",
            markup=False,
        )
