"""One judging job end to end: judge, batch step, escalate, with progress."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from docket.relevance.types import Judge, Judgment, Pair
from docket.runner.escalate import enqueue_escalations
from docket.runner.local import JobOutcome, finalize_job, run_judge_job
from docket.store.base import Store


@dataclass(frozen=True)
class JobResult:
    """Every pair of the job with its judgment, what this run did, and the queue size."""

    results: list[tuple[Pair, Judgment]]
    outcome: JobOutcome
    queued: int


def judge_job(
    store: Store,
    job: str,
    pairs: Sequence[Pair],
    judge: Judge,
    *,
    concurrency: int,
    console: Console | None = None,
    required_reviews: int = 1,
    label: str = "judging",
) -> JobResult:
    """Judge the unfinished pairs with a progress bar, finalize, and queue escalations.

    The model error that stopped a run (if any) is in ``outcome.error``; the batch step
    and the escalation still run over what was finished, so nothing is lost.
    """
    columns = (TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task(label, total=len(pairs))
        outcome = asyncio.run(
            run_judge_job(
                store,
                job,
                pairs,
                judge,
                concurrency=concurrency,
                on_result=lambda _pair, _judgment: progress.advance(task),
            )
        )
        progress.update(task, completed=outcome.judged + outcome.skipped)
    wanted = {p.key for p in pairs}
    results = [r for r in finalize_job(store, job, judge) if r[0].key in wanted]
    queued = enqueue_escalations(store, job, results, required_reviews=required_reviews)
    return JobResult(results, outcome, queued)
