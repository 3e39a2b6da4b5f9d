"""``docket judge``: judge query-chunk pairs into the store (one call of the job API).

With ``--plan`` the job is planned instead (:func:`docket.jobs.plan_job`); with
``--pilot N`` a pilot (:func:`docket.jobs.run_pilot`) is judged and measured first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from docket.cli.common import finish_run, out, print_failed, resumable
from docket.cli.judging_flags import JudgingFlags, MethodOpt, judging_command
from docket.cli.plan import show_plan
from docket.cli.plan_print import print_pilot
from docket.cli.progress import progress_meter
from docket.cli.summary import print_summary
from docket.errors import PilotRejectedError
from docket.jobs import JobRun, JobSpec, job_input, run_job, run_pilot
from docket.store.base import display_url

app = typer.Typer()


@app.command()
@judging_command("model", "judge", "job", "run", "executor", "price", "plan", "plan_only",
                 "caps", "pilot")  # fmt: skip
def judge(
    pairs_path: Annotated[
        Path, typer.Argument(metavar="PAIRS", help="JSONL or TSV: qid, query, docid, text[, label]")
    ],
    method: MethodOpt = "dream",
    job: Annotated[str | None, typer.Option(help="job name (default: file stem + method)")] = None,
    *,
    judging: JudgingFlags,
) -> JobRun | None:
    """Judge query-chunk pairs (DREAM debate by default); resumable, results in the store."""
    spec = judging.spec(method)
    pilot, gate = judging.pilot()
    if judging.plan:
        show_plan(pairs_path, spec, job)
        return None
    pairs = spec.select(job_input(pairs_path))  # checked whole before any call, then streamed
    with resumable(spec.settings.db):
        if pilot:
            _pilot(pairs, spec, pilot, gate, job)
        live = spec.bill.live.status if spec.bill.live else None
        with progress_meter("judging", len(pairs), live) as on_progress:
            run = run_job(pairs, spec, job=job, on_progress=on_progress)
    print_summary(run, display_url(spec.settings.db))
    usage = run.usage  # the same count as the store's: what the server saw
    if usage.retries or usage.failures:
        out.print(f"{usage.requests} LLM requests: {usage.calls} answered, {usage.retries} "
                  f"retries after transient failures, {usage.failures} calls failed")  # fmt: skip
    print_failed(run.failed, run.outcome.busy)
    finish_run([run], judging.allow_failed)
    return run


def _pilot(pairs: object, spec: JobSpec, n: int, gate: object, job: str | None) -> None:
    """Judge and measure the pilot, print its report; a missed gate ends the command (4)."""
    try:
        report = run_pilot(pairs, spec, n, gate=gate, job=job)  # type: ignore[arg-type]
    except PilotRejectedError as exc:  # the pilot's judgments are saved
        print_pilot(exc.report)  # type: ignore[arg-type]
        raise
    print_pilot(report)
