"""Workers that claim, judge and save their batches themselves (Ray on PostgreSQL).

The driver streams the input and leaves out what was judged or failed before; each batch
goes to a worker that claims its pairs, judges them and saves them with the same
:class:`~docket.runner.batches.Claimer` and :class:`~docket.runner.batches.Writer` as a
local run (the worker runs :func:`docket.runner.batch_loop.judge_pairs` over its batch), and
sends back only counts and keys. So the driver makes no per-pair write, and several
machines write to one PostgreSQL store at once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from docket.errors import ModelUnavailableError
from docket.relevance.types import Judgment, Pair
from docket.runner.batches import Key, Tally
from docket.store.base import Store
from docket.store.claims import done_among, fail_unfinished


@dataclass(frozen=True)
class SharedJob:
    """What a worker needs to know of the job to claim and save a batch of it.

    Attributes:
        job: the job's name.
        owner: the driver's claim owner; batch ``n`` claims as :meth:`batch_owner`, so a
            batch that Ray runs again (its worker died) takes back its own leases at once.
        retry_failed: claim pairs that failed in earlier runs too.
        lease_s: seconds a claim holds without renewal.
        reviews: reviewers per escalated pair, queued when the judgment is saved.
    """

    job: str
    owner: str
    retry_failed: bool
    lease_s: float
    reviews: int = 1

    def batch_owner(self, number: int) -> str:
        """The claim owner of batch ``number`` (the same on every attempt of the batch)."""
        return f"{self.owner}/{number}"


@dataclass(frozen=True)
class BatchReport:
    """What a worker did with one batch.

    Attributes:
        judged, failed, skipped, busy: the batch's pairs judged and saved, refused by the
            server, judged elsewhere meanwhile, and held by another live worker.
        error: the model failure that stopped the batch, if any.
        finished: keys of the pairs judged or failed, in the order they finished.
        usage: the finished judgments' usage added up (calls, tokens, retries), so the
            driver can report what the run cost although the calls were made elsewhere.
    """

    judged: int
    failed: int
    skipped: int
    busy: int
    error: ModelUnavailableError | None
    finished: list[Key]
    usage: dict[str, float]


@runtime_checkable
class SavingExecutor(Protocol):
    """An executor whose workers claim, judge and save pairs in the store themselves."""

    def saves_in(self, store: Store) -> bool:
        """Whether its workers write to ``store`` themselves (else the driver commits)."""
        ...

    def saved(
        self, store: Store, shared: SharedJob, pairs: Iterable[Pair], concurrency: int
    ) -> AsyncIterator[tuple[list[Pair], BatchReport]]:
        """Each batch of ``pairs`` with the report of the worker that saved it.

        Raises the :class:`ModelUnavailableError` that stopped a batch, after yielding it.
        """
        ...


def fail_batch(
    store: Store, shared: SharedJob, chunk: list[Pair], number: int, reason: str
) -> BatchReport:
    """The report of batch ``number`` whose worker died on every attempt.

    Its pairs that are neither judged nor held by another worker are stored as failed with
    ``reason`` (``--retry-failed`` judges them again); pairs an attempt saved before it
    died count as judged by this run.
    """
    owner, keys = shared.batch_owner(number), [pair.key for pair in chunk]
    with store.session() as session:
        done = done_among(session, shared.job, keys)
        mine = done_among(session, shared.job, list(done), owner) if done else set()
        failed = fail_unfinished(session, shared.job, [k for k in keys if k not in done],
                                 owner, reason)  # fmt: skip
    busy = len(keys) - len(done) - len(failed)
    finished = [key for key in keys if key in mine] + failed
    return BatchReport(len(mine), len(failed), len(done) - len(mine), busy, None, finished, {})


async def judge_elsewhere(
    pairs: Iterable[Pair],
    executor: SavingExecutor,
    store: Store,
    shared: SharedJob,
    tally: Tally,
    concurrency: int,
    on_result: Callable[[Pair, Judgment | None], None] | None,
) -> ModelUnavailableError | None:
    """Add up what the workers saved; ``on_result`` gets each finished pair (no judgment)."""
    try:
        async for chunk, report in executor.saved(store, shared, pairs, concurrency):
            _add(tally, report)
            finished = set(report.finished)
            for pair in chunk:
                if on_result is not None and pair.key in finished:
                    on_result(pair, None)
    except ModelUnavailableError as exc:
        return exc
    return None


def _add(tally: Tally, report: BatchReport) -> None:
    tally.judged += report.judged
    tally.failed += report.failed
    tally.skipped += report.skipped  # judged elsewhere since the driver read the job
    tally.busy += report.busy
