"""The store side of a run: claiming pairs in batches and saving results in batches.

Both sit between the streamed input and :func:`docket.fanout.bounded_each`, so a job of any
size holds at most a claim batch, the calls in flight and one write batch in memory.
"""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from sqlalchemy.orm import Session
from sqlalchemy.pool import SingletonThreadPool, StaticPool

from docket.errors import ModelUnavailableError
from docket.relevance.types import Judgment, Pair
from docket.runner.escalate import queue_escalated
from docket.runner.journal import CallJournal, Taken, write_taken
from docket.runner.records import add_judgments
from docket.store.base import Store
from docket.store.claims import (
    DEFAULT_LEASE_S,
    claim,
    done_among,
    live_owners,
    mark_done,
    mark_failed,
    release,
    renew,
)

log = logging.getLogger(__name__)
Key = tuple[str, str]
FLUSH_EVERY_S = 0.5
"""A finished result waits at most this long (or for a full batch) before its commit."""


def new_owner() -> str:
    """A worker id that is unique across processes and machines: ``host:pid:random``."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def owner_is_dead(owner: str) -> bool:
    """Whether ``owner`` (a :func:`new_owner` id) names a process of this host that is gone.

    Only this host's processes can be checked; an owner elsewhere, one of this process, or
    one whose pid is alive (perhaps reused) counts as alive, so its leases wait to expire.
    """
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit() or int(pid_text) == os.getpid():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):
        return False  # alive under another user (or no pid this system can have)
    return False


@dataclass
class Tally:
    """What a run did with the pairs of its input: the runner's one account of a run.

    Attributes:
        judged: pairs judged and saved by this run.
        skipped: pairs already judged before (by an earlier run or another worker).
        failed: pairs the server refused in this run (stored as failed, with the reason).
        failed_before: pairs that had failed earlier and were not retried.
        busy: pairs another live worker held, left to it.
        capped: pairs left unjudged because a spend cap stopped the run (not saved).
        error: the model failure that stopped the run, if any.
        seen: the keys of the input's pairs read so far.
    """

    judged: int = 0
    skipped: int = 0
    failed: int = 0
    failed_before: int = 0
    busy: int = 0
    capped: int = 0
    error: ModelUnavailableError | None = None
    seen: set[Key] = field(default_factory=set)

    @property
    def settled(self) -> int:
        """Input pairs settled so far: judged now, judged before, or failed."""
        return self.judged + self.failed + self.skipped + self.failed_before

    def add(self, other: Tally) -> None:
        """Add ``other``'s counts (a later batch of the same job); the first error is kept."""
        for name in ("judged", "skipped", "failed", "failed_before", "busy", "capped"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.error = self.error or other.error
        self.seen |= other.seen


@dataclass
class Claimer:
    """Streams the input and yields only pairs this worker holds a lease on."""

    store: Store
    job: str
    owner: str
    batch: int
    done: set[Key]
    failed: set[Key]
    tally: Tally
    retry_failed: bool = False
    lease_s: float = DEFAULT_LEASE_S
    journal: CallJournal | None = None
    waiting: list[Pair] = field(default_factory=list)
    """Pairs other workers held when this one came to them (counted in ``tally.busy``)."""

    def pairs(self, source: Iterable[Pair]) -> Iterator[Pair]:
        """The pairs of ``source`` still to judge here, claimed a batch at a time."""
        chunk: list[Pair] = []
        for pair in self.todo(source):
            chunk.append(pair)
            if len(chunk) >= self.batch:
                yield from self._claim(chunk)
                chunk = []
        yield from self._claim(chunk)

    def todo(self, source: Iterable[Pair]) -> Iterator[Pair]:
        """The pairs of ``source`` not judged (nor failed, unless retrying) when the run began.

        Not claimed: :meth:`pairs` claims them here, or workers that save their own
        results claim them where they run (Ray on PostgreSQL).
        """
        for pair in source:
            self.tally.seen.add(pair.key)
            if pair.key in self.done:
                self.tally.skipped += 1
            elif pair.key in self.failed and not self.retry_failed:
                self.tally.failed_before += 1
            else:
                yield pair

    def _claim(self, chunk: list[Pair]) -> list[Pair]:
        if not chunk:
            return []
        keys = [pair.key for pair in chunk]
        # A pair another worker judged since we read the job has a done claim, so it is
        # not claimable: no need to look at the judgments here.
        with self.store.session() as session:
            held = self._claim_keys(session, keys)
            others = [key for key in keys if key not in held]
            done = done_among(session, self.job, others) if others else set()
            mine = done_among(session, self.job, list(done), self.owner) if done else set()
            if self.journal is not None and held:
                self.journal.read(session, list(held))  # calls an earlier run paid for
        # Saved under this owner by an earlier attempt of the same batch (its Ray worker
        # died after a commit): judged by this run, not before it.
        self.tally.judged += len(mine)
        self.tally.skipped += len(done) - len(mine)  # judged by another worker meanwhile
        self.tally.busy += len(others) - len(done)
        self.waiting += [p for p in chunk if p.key not in held and p.key not in done]
        return [pair for pair in chunk if pair.key in held]

    def retake(self) -> list[Pair]:
        """Look again at the pairs left to other workers: count those they finished, and
        claim those whose worker stopped (dead on this host, or its lease expired)."""
        chunk, self.waiting = self.waiting, []
        self.tally.busy -= len(chunk)
        return self._claim(chunk)  # counts the finished as skipped, the held as busy again

    def _claim_keys(self, session: Session, keys: list[Key]) -> set[Key]:
        """Claim ``keys``; leases of dead processes on this host are taken back at once."""
        held = claim(
            session, self.job, keys, self.owner,
            lease_s=self.lease_s, retry_failed=self.retry_failed,
        )  # fmt: skip
        others = [key for key in keys if key not in held]
        dead = {o for o in live_owners(session, self.job, others) if owner_is_dead(o)}
        if dead:
            taken = claim(
                session, self.job, others, self.owner,
                lease_s=self.lease_s, retry_failed=self.retry_failed, take_from=dead,
            )  # fmt: skip
            log.warning("took back %d pairs from stopped workers %s", len(taken), sorted(dead))
            held |= taken
        return held

    def renew(self) -> None:
        """Extend this worker's leases (called periodically while calls run)."""
        with self.store.session() as session:
            renew(session, self.job, self.owner, self.lease_s)

    def release(self) -> None:
        """Let go of every pair still claimed (a stopped run); others may take them."""
        with self.store.session() as session:
            release(session, self.job, self.owner)


@dataclass
class Writer:
    """Buffers finished pairs and commits them in batches, dropping their claims.

    With ``reviews`` set, escalated judgments are queued for that many reviewers in the
    transaction that saves them (methods without a batch step; the others queue after
    it). With a ``journal``, each commit also keeps the answered calls of the pairs still
    in flight and drops those of the pairs it saves (:mod:`docket.runner.journal`).
    """

    store: Store
    job: str
    owner: str
    batch: int
    reviews: int | None = None
    journal: CallJournal | None = None
    background: ThreadPoolExecutor | None = None
    """The thread commits run in (:func:`store_thread`); None: the caller's thread."""
    results: list[tuple[Pair, Judgment]] = field(default_factory=list)
    failures: list[tuple[Key, str]] = field(default_factory=list)
    last_flush: float = field(default_factory=time.monotonic)
    _commits: deque[Future[None]] = field(default_factory=deque)

    def add(self, pair: Pair, judgment: Judgment | None, reason: str) -> None:
        """Buffer one outcome; commit when the batch is full or old enough."""
        if self.journal is not None:
            self.journal.settle(pair.key)
        if judgment is None:
            self.failures.append((pair.key, reason))
        else:
            self.results.append((pair, judgment))
        pending = len(self.results) + len(self.failures)
        if pending >= self.batch or time.monotonic() - self.last_flush >= FLUSH_EVERY_S:
            self.flush(wait=False)

    def flush(self, wait: bool = True) -> None:
        """Commit everything buffered in one transaction.

        With a ``background`` thread and ``wait=False``, the commit runs there (in order
        with the earlier ones) and this returns at once; an earlier commit's error is
        raised here. ``wait=True`` returns when every commit so far is done.
        """
        self._raise_failed()
        self.last_flush = time.monotonic()
        journal = self.journal if self.journal is not None and self.journal.pending else None
        if self.results or self.failures or journal:
            taken = journal.take() if journal is not None else None
            batch = (self.results, self.failures, taken)
            self.results, self.failures = [], []
            if self.background is None:
                self._commit(*batch)
            else:
                self._commits.append(self.background.submit(self._commit, *batch))
        if wait:
            while self._commits:
                self._commits.popleft().result()

    def _raise_failed(self) -> None:
        while self._commits and self._commits[0].done():
            self._commits.popleft().result()

    def _commit(
        self, results: list[tuple[Pair, Judgment]], failures: list[tuple[Key, str]],
        taken: Taken | None,
    ) -> None:  # fmt: skip
        with self.store.session() as session:
            if taken is not None:
                write_taken(session, taken)
            add_judgments(session, self.job, results)
            mark_done(session, self.job, [pair.key for pair, _ in results], self.owner)
            mark_failed(session, self.job, failures)
            if self.reviews is not None:
                queue_escalated(session, self.job, results, self.reviews)


def store_thread(store: Store) -> ThreadPoolExecutor | None:
    """One thread for a run's commits, so the event loop sends while the store writes.

    Each commit opens its own session there. None for a store whose connections belong
    to one thread (an in-memory SQLite database): its commits stay in the loop's thread.
    """
    if isinstance(store.engine.pool, SingletonThreadPool | StaticPool):
        return None
    return ThreadPoolExecutor(1, thread_name_prefix="docket-store")
