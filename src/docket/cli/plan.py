"""``docket plan`` and ``--plan``: what a job would cost, printed as a table or JSON; no LLM call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from docket.cli.common import escape, out
from docket.cli.judging_flags import JudgingFlags, MethodOpt, PathArg, judging_command
from docket.jobs.plan import JobPlan, Range, plan_job
from docket.jobs.result import JobRun
from docket.jobs.spec import JobSpec

app = typer.Typer()
JsonOpt = Annotated[bool, typer.Option("--json", help="print the plan as JSON")]


@app.command()
@judging_command
def plan(
    pairs_path: PathArg,
    method: MethodOpt = "dream",
    job: Annotated[str | None, typer.Option(help="job name (default: file stem + method)")] = None,
    as_json: JsonOpt = False,
    *,
    judging: JudgingFlags,
) -> None:
    """What judging PAIRS would cost: calls, tokens, USD, time and reviewer hours; no LLM call.

    Takes the arguments of ``docket judge``; pairs the store already holds are left out.
    """
    show_plan(pairs_path, judging.spec(method), judging, job, as_json)


def show_plan(
    pairs: Any, spec: JobSpec, judging: JudgingFlags, job: str | None, as_json: bool = False
) -> JobPlan:
    """Plan the job and print it (a table, or JSON)."""
    result = plan_job(pairs, spec, job=job, inputs=judging.plan_inputs())
    if as_json:
        out.print_json(json.dumps(result.to_json()))
    else:
        print_plan(result)
    return result


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


def stop_if_capped(run: JobRun) -> None:
    """After a run a budget cap stopped: name the cap and what is left, exit 5."""
    if not run.stopped_by:
        return
    left = run.total - len(run.results) - len(run.failed)
    out.print(
        f"[yellow]stopped by {escape(run.stopped_by)}[/yellow]; {left} of {run.total} pairs "
        "not judged yet; every finished pair is saved: rerun with a higher cap to resume",
        soft_wrap=True,
    )
    raise typer.Exit(5)


def plan_instead(
    pairs: Path | Any, spec: JobSpec, judging: JudgingFlags, job: str | None = None
) -> bool:
    """With ``--plan``: print the plan and return True (the command then stops)."""
    if not judging.plan:
        return False
    show_plan(pairs, spec, judging, job)
    return True
