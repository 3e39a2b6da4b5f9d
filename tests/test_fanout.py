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
    # The window, plus the next calls started for results the consumer has yet to see.
    assert drawn <= 8
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


async def test_the_next_call_starts_before_the_consumer_sees_a_result() -> None:
    # At many calls in flight, a slot's next request must not wait for the consumer's
    # work on the results that came in together (saving them, counting them).
    started: list[int] = []

    async def work(x: int) -> int:
        started.append(x)
        await asyncio.sleep(0.01 if x == 0 else 1)
        return x

    stream = bounded_each(range(5), work, limit=2)
    first = await stream.__anext__()
    assert first == (0, 0) and started == [0, 1, 2]  # item 2 started before 0 was seen
    await stream.aclose()
