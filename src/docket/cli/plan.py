"""``docket plan`` and ``--plan``: what a job would cost, printed as a table or JSON; no LLM call."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from docket.cli.common import out
from docket.cli.judging_flags import JudgingFlags, MethodOpt, PathArg, judging_command
from docket.cli.plan_print import print_plan
from docket.jobs.bill.figures import JobPlan
from docket.jobs.bill.plan import plan_job
from docket.jobs.spec import JobSpec

app = typer.Typer()
JsonOpt = Annotated[bool, typer.Option("--json", help="print the plan as JSON")]


@app.command()
@judging_command("model", "judge", "job", "price", "plan")
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
    show_plan(pairs_path, judging.spec(method), job, as_json)


def show_plan(pairs: Any, spec: JobSpec, job: str | None, as_json: bool = False) -> JobPlan:
    """Plan the job and print it (a table, or JSON)."""
    result = plan_job(pairs, spec, job=job)
    if as_json:
        out.print_json(json.dumps(result.to_json()))
    else:
        print_plan(result)
    return result
