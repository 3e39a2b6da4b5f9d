"""One judging job end to end: judge, batch step, escalate, with a progress callback."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from docket.relevance.types import Judge, Pair
from docket.runner.batch_loop import Executor, JobOutcome, finalize_job, run_judge_job
from docket.runner.batches import Tally
from docket.runner.escalate import enqueue_escalations
from docket.runner.results import StoredResults
from docket.store.base import Store
from docket.store.claims import failed_pairs


@dataclass(frozen=True)
class JobResult:
    """The judged pairs of the job's input (read from the store), this run, the queue.

    Attributes:
        results: ``(pair, judgment)`` per judged pair of the input, read lazily.
        outcome: what this run did.
        queued: escalated pairs in the review queue.
        failed: ``(qid, docid, reason)`` of the input's pairs that failed (this or earlier runs).
    """

    results: StoredResults
    outcome: JobOutcome
    queued: int
    failed: list[tuple[str, str, str]]


def judge_job(
    store: Store,
    job: str,
    pairs: Iterable[Pair],
    judge: Judge,
    *,
    concurrency: int,
    on_progress: Callable[[int], None] | None = None,
    required_reviews: int = 1,
    retry_failed: bool = False,
    executor: Executor | None = None,
) -> JobResult:
    """Judge the unfinished pairs, finalize, and queue escalations.

    ``on_progress`` is called with the number of input pairs settled so far (judged now,
    judged before, failed) after each result and once at the end. The model error that
    stopped a run (if any) is in ``outcome.error``; the batch step and the escalation
    still run over what was finished, so nothing is lost.
    """
    tally = Tally()
    report = on_progress or (lambda _done: None)
    outcome = asyncio.run(
        run_judge_job(
            store, job, pairs, judge,
            concurrency=concurrency, retry_failed=retry_failed, tally=tally,
            executor=executor, on_result=lambda _pair, _judgment: report(_settled(tally)),
            required_reviews=required_reviews,
        )
    )  # fmt: skip
    report(len(tally.seen) - outcome.busy)
    finalize_job(store, job, judge)
    results = StoredResults(store, job, frozenset(tally.seen))
    queued = enqueue_escalations(store, job, results.escalated(), required_reviews=required_reviews)
    with store.session() as session:
        failed = [f for f in failed_pairs(session, job) if (f[0], f[1]) in tally.seen]
    return JobResult(results, outcome, queued, failed)


def _settled(tally: Tally) -> int:
    return tally.judged + tally.failed + tally.skipped + tally.failed_before
