"""Local asyncio job runner: bounded concurrency, every finished pair committed at once.

Because each judgment is committed as soon as it is known, an interrupted or failing job
keeps its finished work, and a rerun skips it without any LLM call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from docket.errors import ModelUnavailableError
from docket.relevance.types import Judge, Judgment, Pair
from docket.store.base import Store
from docket.store.judgments import (
    finished_keys,
    judgment_from_record,
    load_judgments,
    pair_from_record,
    save_judgment,
)

log = logging.getLogger(__name__)
OnResult = Callable[[Pair, Judgment], None]


@dataclass
class JobOutcome:
    """What a run did: pairs judged now, skipped as already finished, and the failure if any."""

    judged: int = 0
    skipped: int = 0
    error: ModelUnavailableError | None = None


async def run_judge_job(
    store: Store,
    job: str,
    pairs: Sequence[Pair],
    judge: Judge,
    *,
    concurrency: int = 4,
    on_result: OnResult | None = None,
) -> JobOutcome:
    """Judge the unfinished ``pairs`` of ``job`` and store each judgment when it is done.

    A model that stays unavailable after the Model's retries stops the job: pairs already
    finished stay stored and the error is returned in the outcome (not raised) so the
    caller can report it after the batch step.
    """
    with store.session() as session:
        done = finished_keys(session, job)
    todo = [p for p in pairs if p.key not in done]
    outcome = JobOutcome(skipped=len(pairs) - len(todo))
    semaphore = asyncio.Semaphore(concurrency)

    async def work(pair: Pair) -> None:
        async with semaphore:
            judgment = await judge.judge(pair)
        with store.session() as session:
            save_judgment(session, job, pair, judgment)
        outcome.judged += 1
        if on_result is not None:
            on_result(pair, judgment)

    tasks = [asyncio.create_task(work(p)) for p in todo]
    try:
        await asyncio.gather(*tasks)
    except ModelUnavailableError as exc:
        outcome.error = exc
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return outcome


def finalize_job(store: Store, job: str, judge: Judge) -> list[tuple[Pair, Judgment]]:
    """Run the method's batch step over the whole job and store what changed."""
    with store.session() as session:
        records = load_judgments(session, job)
        pairs = [pair_from_record(r) for r in records]
        before = [judgment_from_record(r) for r in records]
        after = judge.finalize(list(before))
        for pair, old, new in zip(pairs, before, after, strict=True):
            if new != old:
                save_judgment(session, job, pair, new)
    return list(zip(pairs, after, strict=True))
