"""The one bounded fan-out helper: run an async function over many items, a window at a time.

Every batch loop in docket (judge jobs, holes fill, eval methods, verify, the atomizer,
RE-AD-Eval) goes through :func:`bounded_map` or :func:`bounded_each`. Both pull items
from an iterable lazily and keep at most ``limit`` calls in flight, so a 100,000-item
input never becomes 100,000 tasks (or 100,000 items in memory, for ``bounded_each``).
Progress is reported through a plain callback; this module imports nothing of docket
and nothing of rich, so engines and the runner can both use it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

OnDone = Callable[[int, R], None]
"""Called with (index of the item, its result) as each call finishes."""


async def bounded_each(
    items: Iterable[T], fn: Callable[[T], Awaitable[R]], *, limit: int
) -> AsyncIterator[tuple[int, R]]:
    """Yield ``(index, fn(item))`` in completion order, with at most ``limit`` in flight.

    Items are drawn from ``items`` only when a slot frees up: the next call starts as soon
    as one finishes, before the consumer sees the result (at most ``limit`` results wait
    for it). If ``fn`` raises, the calls still in flight are cancelled and the exception
    propagates to the consumer; the same happens when the consumer stops iterating early.
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    window = _Window(iter(enumerate(items)), fn, limit)
    try:
        window.refill()
        while window.running or window.finished:
            for index, task in await window.next_done():
                yield index, task.result()
    finally:
        window.closed = True
        for task in window.running:
            task.cancel()
        if window.running:
            await asyncio.gather(*window.running, return_exceptions=True)


class _Window(Generic[T, R]):
    """The calls of :func:`bounded_each` in flight, and those finished but not yet seen.

    A finished call is handed over by its done callback, which also starts the next item
    at once: O(1) a call (asyncio.wait adds and removes a callback on every running task at
    each wake), and at 256 calls in flight against a server whose replies come together,
    each slot's next request goes out before the consumer's work on the results.
    """

    def __init__(self, source: Iterator[tuple[int, T]], fn: Callable[[T], Awaitable[R]],
                 limit: int) -> None:  # fmt: skip
        self.source, self.fn, self.limit = source, fn, limit
        self.running: dict[asyncio.Future[R], int] = {}
        self.finished: list[tuple[int, asyncio.Future[R]]] = []
        self.closed = False
        self.drawn_error: BaseException | None = None
        self._wake: asyncio.Future[None] | None = None

    def refill(self) -> None:
        """Start items while a slot is free (and fewer than ``limit`` results wait)."""
        while len(self.running) < self.limit and len(self.finished) < self.limit:
            nxt = next(self.source, None)
            if nxt is None:
                return
            index, item = nxt
            task = asyncio.ensure_future(self.fn(item))
            task.add_done_callback(self._done)
            self.running[task] = index

    def _done(self, task: asyncio.Future[R]) -> None:
        index = self.running.pop(task, None)
        if index is None or self.closed:
            return
        self.finished.append((index, task))
        if not task.cancelled() and task.exception() is None and self.drawn_error is None:
            try:
                self.refill()
            except BaseException as exc:  # drawing the next item failed: the consumer raises it
                self.drawn_error = exc
        if self._wake is not None and not self._wake.done():
            # Called soon, not now: the calls just started send before the consumer runs.
            asyncio.get_running_loop().call_soon(_set, self._wake)

    async def next_done(self) -> list[tuple[int, asyncio.Future[R]]]:
        """The calls finished since the last look, in input order (waits for one)."""
        if not self.finished and self.drawn_error is None:
            self._wake = asyncio.get_running_loop().create_future()
            await self._wake
        if self.drawn_error is not None:
            raise self.drawn_error
        done, self.finished = sorted(self.finished, key=lambda item: item[0]), []
        self.refill()  # slots that a failed draw or the results' bound left empty
        return done


def _set(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def bounded_map(
    items: Iterable[T],
    fn: Callable[[T], Awaitable[R]],
    *,
    limit: int,
    on_done: OnDone[R] | None = None,
) -> list[R]:
    """Return ``[fn(item) for item in items]`` in input order, at most ``limit`` at once."""
    results: dict[int, R] = {}
    async for index, result in bounded_each(items, fn, limit=limit):
        results[index] = result
        if on_done is not None:
            on_done(index, result)
    return [results[i] for i in range(len(results))]
