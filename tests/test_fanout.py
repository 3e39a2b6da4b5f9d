"""The one bounded fan-out helper: order, window, errors."""

from __future__ import annotations

import asyncio

import pytest

from docket.fanout import bounded_each, bounded_map


async def test_map_keeps_input_order_and_reports_each() -> None:
    seen: list[int] = []

    async def slow_square(x: int) -> int:
        await asyncio.sleep(0.001 * (5 - x))
        return x * x

    result = await bounded_map(range(5), slow_square, limit=3, on_done=lambda i, _r: seen.append(i))
    assert result == [0, 1, 4, 9, 16]
    assert sorted(seen) == [0, 1, 2, 3, 4]


async def test_never_more_than_limit_in_flight_and_items_drawn_lazily() -> None:
    in_flight = peak = drawn = 0

    def items():
        nonlocal drawn
        for i in range(50):
            drawn += 1
            yield i

    async def work(_: int) -> None:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0)
        in_flight -= 1

    stream = bounded_each(items(), work, limit=4)
    await stream.__anext__()
    assert drawn <= 5  # the window, plus the one refill after the first finished
    async for _ in stream:
        pass
    assert peak == 4
    assert drawn == 50


async def test_error_cancels_the_rest() -> None:
    cancelled = 0

    async def work(x: int) -> int:
        nonlocal cancelled
        if x == 0:
            raise RuntimeError("boom")
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled += 1
            raise
        return x

    with pytest.raises(RuntimeError, match="boom"):
        await bounded_map(range(4), work, limit=4)
    assert cancelled == 3


async def test_limit_must_be_positive() -> None:
    async def work(x: int) -> int:
        return x

    with pytest.raises(ValueError, match="at least 1"):
        await bounded_map([1], work, limit=0)
