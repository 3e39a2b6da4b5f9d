"""Local asyncio job runner: streamed input, claimed pairs, bounded calls, batched commits.

The input is streamed through :func:`docket.fanout.bounded_each`: at most ``concurrency``
pairs are being judged at once, and pairs are read (and claimed in the store) only as
slots free up, so memory does not grow with the input. Finished pairs are committed in
small batches (at most ``batch`` pairs or half a second of results), so a crash loses at
most the calls in flight and one unsaved batch, and a rerun skips all saved work without
any LLM call. Several processes (or Ray workers) may run the same job: each pair is
claimed with a lease before it is judged, so each call is paid once.

A pair the server refuses (:class:`~docket.errors.RequestRefusedError`, e.g. HTTP 400) is
recorded as failed with the reason and the job goes on; a rerun retries failed pairs only
when asked (``retry_failed``). A model that stays unavailable stops the job.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from docket.errors import CapReachedError, ModelUnavailableError, RequestRefusedError
from docket.fanout import bounded_each
from docket.llm.cache import journaled
from docket.relevance.types import Judge, Judgment, Pair, complete_judge
from docket.runner.batches import FLUSH_EVERY_S, Claimer, Key, Tally, Writer, new_owner
from docket.runner.journal import CallJournal, Kept
from docket.runner.records import judgment_from_record, pair_from_record, save_judgment
from docket.runner.saving import SavingExecutor, SharedJob, judge_elsewhere
from docket.store.base import Store
from docket.store.claims import DEFAULT_LEASE_S, failed_pairs
from docket.store.judgments import finished_keys, labels_of, load_judgments

log = logging.getLogger(__name__)
OnResult = Callable[[Pair, Judgment | None], None]
MAX_BATCH = 64
MAX_CLAIM = 256
PEER_POLL_S = 0.25
"""How often a run whose input is done looks again at the pairs other workers hold."""
PEER_PATIENCE_S = 3.0
"""How long it waits for those workers to save one of them before it leaves them."""


async def judge_pairs(
    store: Store,
    job: str,
    pairs: Iterable[Pair],
    judge: Judge,
    *,
    concurrency: int = 4,
    on_result: OnResult | None = None,
    retry_failed: bool = False,
    lease_s: float = DEFAULT_LEASE_S,
    owner: str | None = None,
    tally: Tally | None = None,
    executor: Executor | SavingExecutor | None = None,
    filtered: bool = False,
    required_reviews: int = 1,
    kept: Kept | None = None,
) -> Tally:
    """Judge the unfinished ``pairs`` of ``job``, saving finished pairs in small batches.

    ``pairs`` may be any iterable (a file read lazily); it is consumed once. ``executor``
    runs the calls (default: this process; see :mod:`docket.runner.ray_executor`). An
    executor whose workers save in the store themselves gets the pairs unclaimed, and this
    process writes nothing per pair. ``filtered``: the caller already left out the pairs
    judged or failed before (a worker's batch), so the job's keys are not read. ``kept``:
    calls answered before the run (a method's check of its model), replayed by their
    pairs. A model that stays unavailable stops the run: saved pairs stay saved and the
    error is returned in the tally (``error``, not raised) so the caller can report it after the batch step. Escalated
    judgments are queued for ``required_reviews`` reviewers as they are saved, unless the
    judge has a batch step (which may change them; :func:`docket.jobs.run_job` queues after it).
    """
    owner = owner or new_owner()
    tally = tally if tally is not None else Tally()
    claim_batch = min(concurrency, MAX_CLAIM)
    journal = CallJournal(job)
    journal.kept.update(kept or {})  # calls answered before the run, for their pairs to replay
    claimer = _claimer(store, job, owner, claim_batch, tally, retry_failed, lease_s, filtered,
                       pairs)  # fmt: skip
    claimer.journal = journal
    if isinstance(executor, SavingExecutor) and executor.saves_in(store):
        shared = SharedJob(job, owner, retry_failed, lease_s, required_reviews)
        todo = claimer.todo(pairs)
        return _outcome(tally, await judge_elsewhere(todo, executor, store, shared, tally,
                                                     concurrency, on_result))  # fmt: skip
    # Claims come a window ahead (one transaction per window); commits every MAX_BATCH.
    reviews = None if complete_judge(judge).batch_step else required_reviews
    writer = Writer(store, job, owner, max(1, min(concurrency, MAX_BATCH)), reviews, journal)
    heartbeat = asyncio.ensure_future(_keep_alive(claimer, writer, lease_s / 3))
    error = None
    try:
        local = executor or LocalExecutor(judge, journal)
        error = await _judge_claimed(
            claimer.pairs(pairs), local, writer, tally, concurrency, on_result
        )
        if error is None:
            error = await _after_peers(claimer, local, writer, tally, concurrency, on_result)
    finally:
        await _stop(heartbeat, writer, claimer)
    return _outcome(tally, error)


async def _stop(heartbeat: asyncio.Future[None], writer: Writer, claimer: Claimer) -> None:
    """End a local run: stop the lease heartbeat, save what is pending, release the claims."""
    heartbeat.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await heartbeat
    try:
        writer.flush()
    finally:
        claimer.release()


def _outcome(tally: Tally, error: ModelUnavailableError | None) -> Tally:
    tally.error = error
    return tally


LISTED_LOOKUP = 5000
"""Inputs up to this many listed pairs look up their own keys in the store."""


def _listed_keys(pairs: Iterable[Pair]) -> list[Key] | None:
    """The keys of a small input held in a list (None for a stream or a large input)."""
    listed = getattr(pairs, "pairs", pairs)
    if isinstance(listed, list | tuple) and len(listed) <= LISTED_LOOKUP:
        return [pair.key for pair in listed]
    return None


def _claimer(
    store: Store,
    job: str,
    owner: str,
    batch: int,
    tally: Tally,
    retry: bool,
    lease_s: float,
    filtered: bool,
    pairs: Iterable[Pair] = (),
) -> Claimer:
    done: set[Key] = set()
    failed: set[Key] = set()
    if not filtered:
        with store.read_session() as session:
            # a small listed input (a batch of an ordered fill) looks up its own keys, not
            # every key of a large job
            keys = _listed_keys(pairs)
            done = (
                finished_keys(session, job) if keys is None else set(labels_of(session, job, keys))
            )
            failed = {(q, d) for q, d, _ in failed_pairs(session, job, keys)}
    return Claimer(store, job, owner, batch, done, failed, tally, retry, lease_s)


Outcome = tuple[Pair, Judgment | None, str]
"""A judged pair: its judgment, or None and the reason the server refused it."""
CAPPED = "\0budget cap"
"""The reason of a pair a budget cap stopped: neither saved nor marked failed."""


async def judge_one(judge: Judge, pair: Pair, journal: CallJournal | None = None) -> Outcome:
    """Judge one pair; a refused request becomes a failed outcome, not an exception.

    With a ``journal``, the pair's calls replay what it kept and note what they answer.
    """
    calls = journal.begin(pair.key) if journal is not None else None
    try:
        with journaled(calls):
            judgment = await judge.judge(pair)
        if calls is not None:
            calls.judged = True  # its judgment is on its way to the writer
        return pair, judgment, ""
    except RequestRefusedError as exc:
        log.warning("pair (%s, %s) failed: %s", pair.qid, pair.docid, exc.message)
        return pair, None, exc.message
    except CapReachedError:
        return pair, None, CAPPED


class Executor(Protocol):
    """Where the calls run: in this process (the default) or on Ray workers."""

    def outcomes(self, pairs: Iterable[Pair], concurrency: int) -> AsyncIterator[Outcome]:
        """Judge ``pairs`` (already claimed), ``concurrency`` at a time, yielding outcomes."""
        ...


@dataclass(frozen=True)
class LocalExecutor:
    """Judges in this process's event loop through the one fan-out helper."""

    judge: Judge
    journal: CallJournal | None = None

    async def outcomes(self, pairs: Iterable[Pair], concurrency: int) -> AsyncIterator[Outcome]:
        """Outcomes in completion order, at most ``concurrency`` pairs at once."""
        async for _, outcome in bounded_each(
            pairs, lambda pair: judge_one(self.judge, pair, self.journal), limit=concurrency
        ):
            yield outcome


async def _judge_claimed(
    pairs: Iterable[Pair],
    executor: Executor,
    writer: Writer,
    tally: Tally,
    concurrency: int,
    on_result: OnResult | None,
) -> ModelUnavailableError | None:
    try:
        async for pair, judgment, reason in executor.outcomes(pairs, concurrency):
            if reason == CAPPED:  # released with the other claims when the run ends
                tally.capped += 1
                continue
            writer.add(pair, judgment, reason)
            if judgment is None:
                tally.failed += 1
            else:
                tally.judged += 1
            if on_result is not None:
                on_result(pair, judgment)
    except ModelUnavailableError as exc:
        return exc
    return None


async def _after_peers(
    claimer: Claimer,
    executor: Executor,
    writer: Writer,
    tally: Tally,
    concurrency: int,
    on_result: OnResult | None,
) -> ModelUnavailableError | None:
    """Stay while other workers finish the pairs they held; take over those of a stopped one.

    A pair saved by its worker counts as judged before; one whose worker died on this host
    (or whose lease expired) is claimed and judged here at once. The run leaves the rest
    to their workers (``busy``: the job is incomplete) once none of them settled for
    :data:`PEER_PATIENCE_S`.
    """
    quiet_since = time.monotonic()
    while claimer.waiting:
        left = len(claimer.waiting)
        mine = claimer.retake()
        if mine:
            error = await _judge_claimed(mine, executor, writer, tally, concurrency, on_result)
            if error is not None:
                return error
        if len(claimer.waiting) < left:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= PEER_PATIENCE_S:
            break
        if claimer.waiting:
            await asyncio.sleep(PEER_POLL_S)
    return None


async def _keep_alive(claimer: Claimer, writer: Writer, renew_every_s: float) -> None:
    # Leases renewed, and the calls of pairs in flight written, while the calls run: a
    # run killed outright loses at most the last half second of answers.
    renewed = time.monotonic()
    while True:
        await asyncio.sleep(min(FLUSH_EVERY_S, renew_every_s))
        if time.monotonic() - writer.last_flush >= FLUSH_EVERY_S:
            writer.flush()
        if time.monotonic() - renewed >= renew_every_s:
            claimer.renew()
            renewed = time.monotonic()


def finalize_job(store: Store, job: str, judge: Judge) -> None:
    """Run the method's batch step over the whole job and store what changed.

    Methods whose batch step changes nothing (``batch_step = False`` on the judge: DREAM,
    single, majority) skip it, so a large job is never loaded into memory at once.
    """
    judge = complete_judge(judge)
    if not judge.batch_step:
        return
    with store.read_session() as session:
        records = load_judgments(session, job)
        pairs = [pair_from_record(r) for r in records]
        before = [judgment_from_record(r) for r in records]
    # No write lock while the step runs: it may count in the store itself (a spend cap).
    after = judge.finalize(list(before))
    with store.session() as session:
        for pair, old, new in zip(pairs, before, after, strict=True):
            if new != old:
                save_judgment(session, job, pair, new)
