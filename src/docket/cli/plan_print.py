"""How a plan and a budget stop are printed (shared by ``docket plan`` and every judging command)."""

from __future__ import annotations

import typer
from rich.table import Table

from docket.cli.common import escape, out
from docket.jobs.pilot import PilotReport
from docket.jobs.plan import JobPlan, Range
from docket.jobs.result import JobRun


def print_plan(result: JobPlan) -> None:
    """The plan as a table of fewest / expected / most, then its notes."""
    out.print(
        f"plan for job [bold]{escape(result.job)}[/bold] ({escape(result.method)}, "
        f"{escape(result.model)}): {result.todo} pairs to judge "
        f"({result.done} of {result.pairs} already in the store)",
        soft_wrap=True,
    )
    table = Table("", "fewest", "expected", "most")
    rows: list[tuple[str, Range | None, str]] = [
        ("LLM calls", result.calls, "{:,.0f}"),
        ("prompt tokens", result.prompt_tokens, "{:,.0f}"),
        ("completion tokens", result.completion_tokens, "{:,.0f}"),
        ("cached prefix tokens", result.cached_tokens, "{:,.0f}"),
        ("cost (USD)", result.cost, "{:,.2f}"),
        ("wall time", result.wall_s, "time"),
        ("escalations", result.escalations, "{:,.0f}"),
        ("reviewer hours", result.review_hours, "{:,.1f}"),
    ]
    for label, values, fmt in rows:
        if values is None:
            table.add_row(label, "-", "-", "-")
        else:
            table.add_row(label, *(_fmt(v, fmt) for v in values))
    out.print(table)
    for note in result.notes:
        out.print(f"  note: {escape(note)}", soft_wrap=True)


def _fmt(value: float, fmt: str) -> str:
    if fmt != "time":
        return fmt.format(value)
    if value < 120:
        return f"{value:.0f} s"
    if value < 7200:
        return f"{value / 60:.0f} min"
    return f"{value / 3600:.1f} h"


def stop_if_capped(result: object) -> None:
    """After a run a budget cap stopped: name the cap and what is left, exit 5.

    ``result`` is what a judging command returned: a JobRun, or a value holding one
    (``.run``) or several (``.runs``); anything else is left alone.
    """
    runs = getattr(result, "runs", None)
    for run in runs.values() if isinstance(runs, dict) else [getattr(result, "run", result)]:
        if isinstance(run, JobRun) and run.stopped_by:
            _stopped(run)


def _stopped(run: JobRun) -> None:
    left = run.total - len(run.results) - len(run.failed)
    out.print(
        f"[yellow]stopped by {escape(run.stopped_by)}[/yellow]; {left} of {run.total} pairs "
        "not judged yet; every finished pair is saved: rerun with a higher cap to resume",
        soft_wrap=True,
    )
    raise typer.Exit(5)


def print_pilot(report: PilotReport | None) -> None:
    """The pilot's measures per pair and its projection for the rest of the job."""
    if report is None:
        return
    table = Table("pilot", "per pair (95% interval)", f"projected for {report.remaining} pairs")
    for name in ("calls", "prompt_tokens", "completion_tokens", "escalations",
                 "parse_failures", "retries", "cost"):  # fmt: skip
        per, total = report.per_pair[name], report.projected[name]
        fmt = "{:,.4f}" if name == "cost" else "{:,.0f}"
        table.add_row(name.replace("_", " "), _span(per, "{:,.3g}"), _span(total, fmt))
    wall = report.projected["wall_s"]
    table.add_row("wall time", f"{report.latency_s:.2f} s a call", _span(wall, "time"))
    for name in ("bacc", "kappa"):
        value = getattr(report, name)
        if value is not None:
            table.add_row(name, _span(value, "{:.2f}"), "")
    out.print(table)
    for note in report.notes:
        out.print(f"  note: {escape(note)}", soft_wrap=True)


def _span(value: Range, fmt: str) -> str:
    low, mid, high = (_fmt(v, fmt) for v in value)
    return f"{mid} ({low} - {high})"
