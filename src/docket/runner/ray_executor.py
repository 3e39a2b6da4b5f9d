"""Scale-out on Ray: the job's pairs are judged by Ray actors, each with its own Model.

The driver keeps the one batch loop (:func:`docket.runner.batch_loop.judge_pairs`): it streams
the input and sends small batches to the actors. Where the results are written depends on
the store:

- SQLite (one file on the driver's machine): the driver claims the pairs, the actors
  judge them and the driver commits what comes back.
- PostgreSQL (reachable from every machine): each actor opens the store itself and claims,
  judges and saves its batch (:mod:`docket.runner.saving`), returning only counts and keys,
  so the driver makes no per-pair write.

Either way every call is paid once. Each actor builds its own judge (and so its own Model
and provider, e.g. one per served-model replica or one embedded model per machine) from a
picklable factory. Actors restart when their process dies and Ray runs the batches they
held again (on PostgreSQL with the same claim owner, so the batch takes back its own
leases), so killing a worker mid-job repeats at most the calls of its batches in flight,
and the job completes. Ray is optional (``pip install 'docket[ray]'``).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from platformdirs import user_cache_dir

from docket.errors import DocketError, MissingDependencyError
from docket.fanout import bounded_each, bounded_map
from docket.llm.usage import Usage
from docket.relevance.pair_usage import sum_usage
from docket.relevance.types import Judge, Judgment, Pair
from docket.runner.batch_loop import Outcome, judge_one, judge_pairs
from docket.runner.saving import BatchReport, SharedJob, fail_batch
from docket.store.base import Store, open_store
from docket.store.claims import release

DEFAULT_BATCH = 16
MAX_BATCH_ATTEMPTS = 3
"""Runs of one batch: Ray runs a batch again on the restarted actor when its actor dies,
at most this often in all; then the batch's unfinished pairs fail with the reason."""
log = logging.getLogger(__name__)


def import_ray() -> Any:
    """The ray module, or an error naming the install command."""
    try:
        import ray
    except ImportError:
        raise MissingDependencyError("ray", "ray") from None
    return ray


def default_temp_dir() -> Path:
    """Ray's session files in the user cache directory (short: Ray's socket paths are)."""
    return Path(user_cache_dir("docket")) / "ray"


def init_ray(address: str | None = None, temp_dir: Path | None = None, **options: Any) -> None:
    """Join the cluster at ``address`` (``auto``, ``HOST:PORT``), or start a local one.

    No dashboard, no usage reporting, session files under ``temp_dir``.
    """
    ray = import_ray()
    if ray.is_initialized():
        return
    settings: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, **options}
    if address in (None, "", "local"):
        folder = temp_dir or default_temp_dir()
        folder.mkdir(parents=True, exist_ok=True)
        ray.init(_temp_dir=str(folder), **settings)
    else:
        ray.init(address=address, **settings)


class JudgeWorker:
    """The body of a Ray actor: one judge, batches judged concurrently on its event loop."""

    def __init__(self, make_judge: Callable[[], Judge]) -> None:
        self.judge = make_judge()
        self.stores: dict[str, Store] = {}

    async def judge_batch(self, pairs: list[Pair]) -> list[Outcome]:
        """Judge every pair of ``pairs`` at once (the Model bounds the calls in flight)."""
        return await bounded_map(pairs, lambda pair: judge_one(self.judge, pair), limit=len(pairs))

    async def save_batch(
        self, url: str, shared: SharedJob, pairs: list[Pair], number: int
    ) -> BatchReport:
        """Claim, judge and save batch ``number`` in the store at ``url`` (opened once)."""
        if url not in self.stores:
            self.stores[url] = open_store(url)
        finished: list[tuple[str, str]] = []
        judgments: list[Judgment] = []

        def on_result(pair: Pair, judgment: Judgment | None) -> None:
            finished.append(pair.key)
            if judgment is not None:
                judgments.append(judgment)

        outcome = await judge_pairs(
            self.stores[url], shared.job, pairs, self.judge, concurrency=len(pairs),
            owner=shared.batch_owner(number), retry_failed=shared.retry_failed,
            lease_s=shared.lease_s, filtered=True, on_result=on_result,
            required_reviews=shared.reviews,
        )  # fmt: skip
        usage = sum_usage(j.usage for j in judgments)
        return BatchReport(
            outcome.judged, outcome.failed, outcome.skipped, outcome.busy, outcome.error,
            finished, usage,
        )  # fmt: skip

    def pid(self) -> int:
        """The worker's process id (tests kill it)."""
        import os

        return os.getpid()


@dataclass
class RayExecutor:
    """Runs the calls of a job on ``workers`` Ray actors.

    Args:
        make_judge: builds the judge in each actor; must be picklable (a module-level
            function or a ``functools.partial`` of one).
        workers: actors to start (one per replica or machine is typical).
        batch: pairs sent to an actor per call.
        usage: what the actors' judgments of this run cost (they make the calls, so the
            driver's own models count none of them).
        pending: claim owner -> (store, job) of each batch sent to an actor that saves it
            and not yet reported; :meth:`stop` frees their leases.
    """

    make_judge: Callable[[], Judge]
    workers: int = 2
    batch: int = DEFAULT_BATCH
    actors: list[Any] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    pending: dict[str, tuple[Store, str]] = field(default_factory=dict)

    def start(self) -> list[Any]:
        """Start the actors (done by :meth:`outcomes` if not done before)."""
        if not self.actors:
            ray = import_ray()
            # Actors restart whenever they die (a long job outlives a lost machine), but a
            # batch that kills its actor every time (a pair that crashes the judge) is run
            # at most MAX_BATCH_ATTEMPTS times, then fails.
            retries = MAX_BATCH_ATTEMPTS - 1
            remote = ray.remote(max_restarts=-1, max_task_retries=retries)(JudgeWorker)
            self.actors = [remote.remote(self.make_judge) for _ in range(self.workers)]
        return self.actors

    async def outcomes(self, pairs: Iterable[Pair], concurrency: int) -> AsyncIterator[Outcome]:
        """Outcomes of ``pairs``, batch by batch, about ``concurrency`` pairs in flight."""
        actors = self.start()
        turn = itertools.count()

        async def run(chunk: list[Pair]) -> list[Outcome]:
            actor = actors[next(turn) % len(actors)]
            try:
                return await _result(actor.judge_batch.remote(chunk))
            except WorkerDied as exc:  # the driver commits: the pairs are stored as failed
                return [(pair, None, exc.reason) for pair in chunk]

        chunks = _chunks(pairs, self.batch)
        async for _, outcomes in bounded_each(chunks, run, limit=self._in_flight(concurrency)):
            self._count(sum_usage(j.usage for _, j, _ in outcomes if j is not None))
            for outcome in outcomes:
                yield outcome

    def saves_in(self, store: Store) -> bool:
        """Actors write to PostgreSQL themselves; a SQLite file is the driver's to write."""
        return store.engine.dialect.name == "postgresql"

    async def saved(
        self, store: Store, shared: SharedJob, pairs: Iterable[Pair], concurrency: int
    ) -> AsyncIterator[tuple[list[Pair], BatchReport]]:
        """Batches of ``pairs`` claimed, judged and saved by the actors, with their reports.

        The actors get the store's full URL (with its password: it is never shown).
        """
        actors = self.start()
        url = store.engine.url.render_as_string(hide_password=False)

        async def run(numbered: tuple[int, list[Pair]]) -> tuple[list[Pair], BatchReport]:
            number, chunk = numbered
            owner = shared.batch_owner(number)
            self.pending[owner] = (store, shared.job)
            actor = actors[number % len(actors)]
            try:
                report = await _result(actor.save_batch.remote(url, shared, chunk, number))
            except WorkerDied as exc:
                report = fail_batch(store, shared, chunk, number, exc.reason)
            del self.pending[owner]
            return chunk, report

        batches = enumerate(_chunks(pairs, self.batch))
        async for _, (chunk, report) in bounded_each(
            batches, run, limit=self._in_flight(concurrency)
        ):
            self._count(report.usage)
            yield chunk, report
            if report.error is not None:
                raise report.error

    def _count(self, usage: dict[str, float]) -> None:
        self.usage.merge(Usage(**{k: usage.get(k, 0) for k in vars(self.usage)}))

    def _in_flight(self, concurrency: int) -> int:
        """Batches in flight: about ``concurrency`` pairs, at least one per actor."""
        return max(len(self.actors), -(-concurrency // self.batch))

    def stop(self) -> None:
        """End the actors, and free the leases of batches they had not finished.

        A stopped run (Ctrl-C, a model that stays unavailable) so leaves no pair waiting
        for its lease to expire: the same command resumes the job at once.
        """
        if self.actors:
            ray = import_ray()
            for actor in self.actors:
                ray.kill(actor, no_restart=True)
            self.actors = []
        for owner, (store, job) in self.pending.items():
            with store.session() as session:
                release(session, job, owner)
        self.pending.clear()


async def _result(call: Any) -> Any:
    """The result of a Ray call; a docket error raised in the actor comes back as itself.

    Ray wraps it in a ``RayTaskError`` whose ``one_line`` loses the hint and whose text
    carries the actor's traceback; the CLI prints the original's one line instead.
    """
    ray = import_ray()
    try:
        return await call
    except ray.exceptions.RayTaskError as exc:
        if isinstance(exc.cause, DocketError):
            raise exc.cause from None
        raise
    except ray.exceptions.RayActorError as exc:
        raise WorkerDied(exc) from None


class WorkerDied(Exception):
    """A batch's actor died on every attempt (Ray gave up retrying the batch)."""

    def __init__(self, error: BaseException) -> None:
        text = " ".join(str(error).split())[:200] or type(error).__name__
        self.reason = (
            f"the Ray worker judging this pair's batch died on each of {MAX_BATCH_ATTEMPTS} "
            f"attempts ({text})"
        )
        super().__init__(self.reason)
        log.warning("a batch failed: %s", self.reason)


def _chunks(pairs: Iterable[Pair], size: int) -> Iterator[list[Pair]]:
    chunk: list[Pair] = []
    for pair in pairs:
        chunk.append(pair)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
