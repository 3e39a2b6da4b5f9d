"""Judge pooled pairs in a budgeted order (:class:`docket.holes.order.HoleOrder`) through jobs.

:func:`judge_in_order` draws a batch, judges it with :func:`run_job`, feeds the labels
back and repeats until the budget is spent. Every batch goes to the same job, so a rerun
with a larger budget replays the earlier draws from the store (0 calls) and continues;
:func:`docket.holes.fill_holes` (``budget=``) and :func:`simulate_orders` use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from docket.holes.order import HoleOrder, Key
from docket.jobs.result import JobRun
from docket.jobs.run import Progress, run_job
from docket.jobs.spec import JobSpec
from docket.llm.usage import Usage
from docket.relevance.types import Judge, Pair
from docket.runner import StoredResults, Tally
from docket.store import Store

BATCH = 20
"""Pairs judged between two updates of the order (part of what makes an order replayable)."""


@dataclass(frozen=True)
class OrderedRun:
    """The job after an ordered run, and the pairs drawn, in draw order."""

    run: JobRun
    drawn: tuple[Key, ...]


def judge_in_order(
    pairs: Mapping[Key, Pair],
    order: HoleOrder,
    budget: int,
    spec: JobSpec,
    *,
    job: str,
    source: str,
    batch: int = BATCH,
    on_progress: Progress | None = None,
    judge: Judge | None = None,
    store: Store | str | None = None,
) -> OrderedRun:
    """Judge ``budget`` pairs of ``order`` in batches of ``batch``, one job for all batches.

    Stops early when the model fails (``run.error``) or the candidates run out. The
    labels fed back are the judges' own (before review), so a later review does not
    change the order of a rerun.
    """
    outcome = Tally()
    usage, failed, queued = Usage(), [], 0
    while len(order.drawn) < budget:
        keys = order.next_batch(min(batch, budget - len(order.drawn)))
        if not keys:
            break
        done = len(order.drawn) - len(keys)
        run = run_job(
            [pairs[key] for key in keys], spec, job=job, store=store, source=source,
            judge=judge, on_progress=_offset(on_progress, done, budget),
        )  # fmt: skip
        store = run.store
        outcome.add(run.outcome)
        usage.merge(run.usage)
        failed += run.failed
        queued += run.queued
        # lean rows (no transcripts) as stored, i.e. the judges' labels before review
        order.update({(r.qid, r.docid): r.label for r in run.results.summary_rows()})
        if run.error is not None:
            break
    drawn = tuple(order.drawn)
    if store is None or not isinstance(store, Store):  # nothing drawn: open the job anyway
        empty = run_job([], spec, job=job, store=store, source=source, judge=judge)
        return OrderedRun(empty, drawn)
    results = StoredResults(store, job, frozenset(drawn))
    total = JobRun(job, store, results, outcome, queued, failed, usage, len(drawn))
    return OrderedRun(total, drawn)


def _offset(on_progress: Progress | None, done: int, total: int) -> Progress | None:
    if on_progress is None:
        return None
    return lambda settled, _: on_progress(done + settled, total)
