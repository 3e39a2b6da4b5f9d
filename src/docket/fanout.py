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
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

OnDone = Callable[[int, R], None]
"""Called with (index of the item, its result) as each call finishes."""


async def bounded_each(
    items: Iterable[T], fn: Callable[[T], Awaitable[R]], *, limit: int
) -> AsyncIterator[tuple[int, R]]:
    """Yield ``(index, fn(item))`` in completion order, with at most ``limit`` in flight.

    Items are drawn from ``items`` only when a slot frees up. If ``fn`` raises, the calls
    still in flight are cancelled and the exception propagates to the consumer; the same
    happens when the consumer stops iterating early.
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    source = iter(enumerate(items))
    running: dict[asyncio.Task[R], int] = {}

    def refill() -> None:
        while len(running) < limit:
            nxt = next(source, None)
            if nxt is None:
                return
            index, item = nxt
            running[asyncio.ensure_future(fn(item))] = index

    try:
        refill()
        while running:
            done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            # Calls that finished together come out in input order (asyncio.wait's set has
            # none), so fast or scripted backends give a reproducible order.
            for task in sorted(done, key=running.__getitem__):
                index = running.pop(task)
                yield index, task.result()
            refill()
    finally:
        for task in running:
            task.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)


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
