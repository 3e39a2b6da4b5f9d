"""``docket judge``: judge query-chunk pairs into the store (one call of the job API)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from docket.cli.common import finish_run, out, print_failed, resumable
from docket.cli.judging_flags import JudgingFlags, MethodOpt, judging_command
from docket.cli.plan_print import stop_if_capped
from docket.cli.progress import progress_meter
from docket.cli.summary import RunReport, print_summary
from docket.jobs import JobRun, job_input, run_job
from docket.store.base import display_url

app = typer.Typer()


@app.command()
@judging_command
def judge(
    pairs_path: Annotated[
        Path, typer.Argument(metavar="PAIRS", help="JSONL or TSV: qid, query, docid, text[, label]")
    ],
    method: MethodOpt = "dream",
    job: Annotated[str | None, typer.Option(help="job name (default: file stem + method)")] = None,
    *,
    judging: JudgingFlags,
) -> JobRun:
    """Judge query-chunk pairs (DREAM debate by default); resumable, results in the store."""
    spec = judging.spec(method)
    pairs = spec.select(job_input(pairs_path))  # checked whole before any call, then streamed
    with (
        resumable(spec.settings.db),
        progress_meter("judging", len(pairs), spec.bill.live.status) as on_progress,
    ):
        run = run_job(pairs, spec, job=job, on_progress=on_progress)
    report = RunReport(
        judged=run.outcome.judged, skipped=run.outcome.skipped, usage=run.usage, queued=run.queued
    )
    print_summary(run.results, run.job, display_url(spec.settings.db), report)
    if report.usage.retries or report.usage.failures:
        usage = report.usage  # the same count as the store's: what the server saw
        out.print(f"{usage.requests} LLM requests: {usage.calls} answered, {usage.retries} "
                  f"retries after transient failures, {usage.failures} calls failed")  # fmt: skip
    print_failed(run.failed, run.outcome.busy)
    stop_if_capped(run)  # a cap comes first: exit 5
    finish_run([run], judging.allow_failed)
    return run  # a budget cap that stopped it: exit 5 (judging_command)
