"""How many calls go to one model at once: an AIMD limit between 1 and the user's bound.

The bound is the user's ``max_in_flight`` (or the provider's default). Within it the limit
follows what the server shows, the way TCP finds a link's capacity:

* it starts at what is known: the bound the user set, the slots a server reports, or the
  limit an earlier process reached against the same model
  (:mod:`docket.llm.limit_memory`); only when nothing is known does it start at
  :data:`START` and, until the first sign of overload, grow by one per answered call
  (doubling each round trip);
* after that it grows by one per round trip (``1 / limit`` per answered call);
* it halves on a sign of overload: a 429, 503 or client timeout
  (:class:`~docket.errors.ServerBusyError`), a per-call deadline passed, or, for a call
  sent beside others, a latency grown to :data:`LATENCY_FACTOR` times the fastest answer
  seen (or half the client timeout): calls queueing inside the server, about to time
  out. One decrease per round trip: the calls started before a decrease do not count
  again.

Only a fast answer (within :data:`GROW_FACTOR` of the fastest) to a call sent while the
limit was in use makes it grow: an answer that queued shows the server is full, and a run
that never fills the window does not raise it past what was tried. So a server whose
latency grows with the calls in flight settles where it starts to grow.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import deque
from dataclasses import dataclass, field

from docket.llm.limit_memory import Known, keep_limit, recall_limit

log = logging.getLogger(__name__)

START = 8
"""Calls in flight before anything is known: a 1-slot server at 0.3 s a call answers 8
within 2.4 s, well inside any client timeout, and slow start reaches 256 in five round
trips."""
LATENCY_FACTOR = 3.0
"""An answer this many times slower than the fastest one means calls wait in a queue."""
GROW_FACTOR = 1.5
"""Only answers within this factor of the fastest one raise the limit."""
SLACK_S = 0.05
"""Added to both factors: milliseconds of jitter on a fast server are no queue."""


@dataclass(frozen=True)
class Ticket:
    """One call's hold on a slot: when it started, beside how many, in which epoch."""

    started: float
    epoch: int
    in_flight: int


@dataclass
class _Gate:
    """The calls in flight and the waiting callers of one event loop."""

    in_flight: int = 0
    waiters: deque[asyncio.Future[None]] = field(default_factory=deque)


class AdaptiveLimit:
    """An AIMD limit on calls in flight to one model, bounded by ``bound``.

    Args:
        bound: the most calls in flight ever (the user's ``max_in_flight``).
        name: the model's name, for the one warning line.
        timeout_s: the client timeout of one request, if any: an answer slower than half
            of it counts as overload whatever the fastest answer was.
        user_bound: the user set ``bound``: start there (halving on overload still holds).
        remember: start at the limit an earlier process reached against ``name`` (when
            the user set no bound), and keep the limits this one reaches for the next.
    """

    def __init__(
        self,
        bound: int,
        name: str,
        timeout_s: float | None = None,
        *,
        user_bound: bool = False,
        remember: bool = False,
    ) -> None:
        self.bound = max(1, bound)
        self.name = name
        self.timeout_s = timeout_s
        self.remember = remember
        known = None if user_bound or not remember else recall_limit(name)
        start = self.bound if user_bound else known.limit if known else START
        self.limit = float(min(self.bound, start))
        # A limit found by an overload is a ceiling to creep up from, not to double.
        self.slow_start = self.limit < self.bound and not (known and known.overloaded)
        self._kept = self.current
        self.fastest_s = math.inf
        self.epoch = 0
        self.decreases = 0
        self._gates: dict[int, _Gate] = {}

    @property
    def current(self) -> int:
        """Calls allowed in flight now."""
        return max(1, int(self.limit))

    def set_capacity(self, slots: int) -> None:
        """Use what the server reports: at most ``slots`` calls at once, from the start."""
        self.bound = max(1, min(self.bound, slots))
        self.limit = float(self.bound)
        self.slow_start = False

    def _gate(self) -> _Gate:
        # One gate per event loop: sync wrappers may run several loops in turn.
        return self._gates.setdefault(id(asyncio.get_running_loop()), _Gate())

    async def acquire(self) -> Ticket:
        """Wait for a slot; the ticket goes back to :meth:`release`."""
        gate = self._gate()
        if gate.in_flight >= self.current or gate.waiters:
            waiter = asyncio.get_running_loop().create_future()
            gate.waiters.append(waiter)
            try:
                await waiter
            except BaseException:
                if waiter.done() and not waiter.cancelled():
                    gate.in_flight -= 1  # it was handed a slot it will not use
                    self._wake(gate)
                elif waiter in gate.waiters:
                    gate.waiters.remove(waiter)
                raise
        else:
            gate.in_flight += 1
        return Ticket(time.perf_counter(), self.epoch, gate.in_flight)

    def release(self, ticket: Ticket, *, latency: float | None, overloaded: bool = False) -> None:
        """Give the slot back, telling how the call went.

        Args:
            ticket: from :meth:`acquire`.
            latency: seconds the server took to answer; None: no answer.
            overloaded: a sign of overload without an answer (429, 503, timeout).
        """
        gate = self._gate()
        in_flight = gate.in_flight
        gate.in_flight -= 1
        if overloaded:
            self._decrease(ticket, "timeouts or HTTP 429/503")
        elif latency is not None:
            self.fastest_s = min(self.fastest_s, latency)
            if ticket.in_flight > 1 and self._slow(latency):
                self._decrease(ticket, latency)
            elif (
                latency <= GROW_FACTOR * self.fastest_s + SLACK_S and in_flight >= self.current / 2
            ):
                self._increase()
        self._wake(gate)

    def _slow(self, latency: float) -> bool:
        if self.timeout_s is not None and latency > self.timeout_s / 2:
            return True
        return latency > LATENCY_FACTOR * self.fastest_s + SLACK_S

    def _increase(self) -> None:
        step = 1.0 if self.slow_start else 1.0 / self.limit
        self.limit = min(float(self.bound), self.limit + step)
        if self.current >= 1.25 * self._kept or self._kept < self.current == self.bound:
            self._keep()

    def _keep(self) -> None:
        # Rarely: on a decrease, or a quarter above what was kept (a ramp writes a few times).
        self._kept = self.current
        if self.remember:
            keep_limit(self.name, Known(self.current, overloaded=self.decreases > 0))

    def _decrease(self, ticket: Ticket, why: float | str) -> None:
        self.slow_start = False
        if ticket.epoch != self.epoch:
            return  # sent before the last decrease: its signal was already acted on
        before = self.current
        self.limit = max(1.0, self.limit / 2)
        self.epoch += 1
        if self.current == before:
            return  # already at one call: nothing lowered, nothing to tell
        self.decreases += 1
        self._keep()
        reason = why if isinstance(why, str) else self._latency_text(why)
        if self.decreases == 1:
            log.warning(
                "%s: the server looks busy (%s); calls in flight lowered from %d to %d "
                "(adjusted as it goes, at most %d)",
                self.name, reason, before, self.current, self.bound,
            )  # fmt: skip
        else:
            log.info("%s: calls in flight %d -> %d (%s)", self.name, before, self.current, reason)

    def _latency_text(self, latency: float) -> str:
        if latency > LATENCY_FACTOR * self.fastest_s + SLACK_S:
            return f"answers take {latency:.1f} s, {latency / self.fastest_s:.0f}x the fastest"
        return f"answers take {latency:.1f} s of a {self.timeout_s:g} s timeout"

    def _wake(self, gate: _Gate) -> None:
        while gate.waiters and gate.in_flight < self.current:
            waiter = gate.waiters.popleft()
            if not waiter.done():
                gate.in_flight += 1
                waiter.set_result(None)
