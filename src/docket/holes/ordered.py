"""Judge pooled pairs in a budgeted order (:class:`docket.holes.order.HoleOrder`) through jobs.

:func:`judge_in_order` draws a batch, judges it with :func:`run_job`, feeds the labels
back and repeats until the budget is spent. Every batch goes to the same job, so a rerun
with a larger budget replays the earlier draws from the store (0 calls) and continues;
:func:`docket.holes.fill_holes` (``budget=``) and :func:`simulate_orders` use it.

Processes that fill the same job at once share it through the store: each judges the
pairs it claims, waits for the pairs another process holds and reads their labels, so
every process feeds back the same labels, draws the same order, and together they judge
the budget once (a budget of 240 is 240 pairs, not 240 per process). The job keeps the
order's settings, and a process with other settings is refused.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from docket.errors import ConfigError
from docket.holes.order import HoleOrder, Key
from docket.jobs.result import JobRun
from docket.jobs.run import Progress, run_job
from docket.jobs.spec import JobSpec
from docket.llm.usage import Usage
from docket.relevance.types import Judge, Pair
from docket.runner import StoredResults, Tally
from docket.store import Store
from docket.store.judgments import labels_of
from docket.store.spend import add_note, notes_of

BATCH = 200
"""Most pairs judged between two updates of the order (the order does not depend on it:
a batch holds one draw per query at most, see :meth:`HoleOrder.next_batch`)."""
PEER_WAIT_S = 0.2
"""How often a process looks again for the labels of pairs another process is judging."""


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
    settings: Mapping[str, object] | None = None,
) -> OrderedRun:
    """Judge ``budget`` pairs of ``order`` in batches of ``batch``, one job for all batches.

    Stops early when the model fails (``run.error``) or the candidates run out. The
    labels fed back are the judges' own (before review), so a later review does not
    change the order of a rerun. ``settings`` (the order, its seed, ...) are kept with the
    job; a run with other settings is refused, since it would draw another order.
    """
    outcome = Tally()
    usage, failed, queued = Usage(), [], 0
    batch_spec = spec
    while len(order.drawn) < budget:
        keys = order.next_batch(min(batch, budget - len(order.drawn)))
        if not keys:
            break
        done = len(order.drawn) - len(keys)
        runs, labels = _judge_batch(
            [pairs[key] for key in keys], batch_spec, job=job, store=store, source=source,
            judge=judge, on_progress=_offset(on_progress, done, budget),
        )  # fmt: skip
        if store is None or not isinstance(store, Store):
            _keep_settings(runs[0].store, job, settings or {})
        store = runs[0].store
        batch_spec = _untracked(spec)  # the run's plan is kept once, with its first batch
        for run in runs:
            # pairs another process held were waited for: only the last run's busy ones count
            outcome.add(run.outcome if run is runs[-1]
                        else dataclasses.replace(run.outcome, busy=0, seen=set()))  # fmt: skip
            usage.merge(run.usage)
            failed += run.failed
            queued += run.queued
        order.update(labels)  # the judges' labels as stored, before review
        if runs[-1].error is not None:
            break
    drawn = tuple(order.drawn)
    if store is None or not isinstance(store, Store):  # nothing drawn: open the job anyway
        empty = run_job([], spec, job=job, store=store, source=source, judge=judge)
        return OrderedRun(empty, drawn)
    results = StoredResults(store, job, frozenset(drawn))
    total = JobRun(job, store, results, outcome, queued, failed, usage, len(drawn))
    return OrderedRun(total, drawn)


def _judge_batch(
    batch: Sequence[Pair], spec: JobSpec, **run: object
) -> tuple[list[JobRun], dict[Key, int | None]]:
    """Judge a batch and wait for the pairs another process holds: the runs, the labels."""
    runs = [run_job(list(batch), spec, **run)]  # type: ignore[arg-type]
    labels = _labels(runs[-1], batch)
    while runs[-1].outcome.busy and runs[-1].error is None:
        time.sleep(PEER_WAIT_S)  # a live peer judges them; a dead peer's lease runs out
        held = {(q, d) for r in runs for q, d, _ in r.failed} | set(labels)
        rest = [pair for pair in batch if pair.key not in held]
        runs.append(run_job(rest, spec, **{**run, "store": runs[-1].store}))  # type: ignore[arg-type]
        labels = _labels(runs[-1], batch)
    return runs, labels


def _labels(run: JobRun, batch: Sequence[Pair]) -> dict[Key, int | None]:
    with run.store.read_session() as session:
        return labels_of(session, run.job, [pair.key for pair in batch])


def _untracked(spec: JobSpec) -> JobSpec:
    if spec.bill is None or not spec.bill.track:
        return spec
    return dataclasses.replace(spec, bill=dataclasses.replace(spec.bill, track=False))


def _keep_settings(store: Store, job: str, settings: Mapping[str, object]) -> None:
    """Keep the order's settings with the job, or refuse a run with other settings."""
    if not settings:
        return
    with store.session() as session:
        kept = [data for _, data in notes_of(session, job, "hole order")]
        if not kept:
            add_note(session, job, "hole order", dict(settings))
            return
    if kept[0] != dict(settings):
        shown = ", ".join(f"{k}={v}" for k, v in kept[0].items())
        raise ConfigError(
            f"job '{job}' draws its holes with {shown}; this run would draw another order",
            hint="use the same --order and --order-seed to continue it, or pick a new --job",
        )


def _offset(on_progress: Progress | None, done: int, total: int) -> Progress | None:
    if on_progress is None:
        return None
    return lambda settled, _: on_progress(done + settled, total)
