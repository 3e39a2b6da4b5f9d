"""Spend while a job runs: spent so far, projected total and ETA, for progress lines and bars."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from docket.llm.usage import Price, Usage


@dataclass
class LiveSpend:
    """Filled by :func:`~docket.jobs.run_job` (the run's usage and price); read by progress.

    ``status(done, total)`` projects the rest of the run from its pace so far.
    """

    usage: Callable[[], Usage] | None = None
    price: Price | None = None
    started: float = field(default_factory=time.monotonic)

    def spent(self) -> tuple[Usage, float]:
        """This run's usage so far and its cost."""
        usage = self.usage() if self.usage is not None else Usage()
        price = self.price or Price(0.0, 0.0, 0.0)
        cost = price.cost(usage.prompt_tokens, usage.cached_prompt_tokens, usage.completion_tokens)
        return usage, cost

    def status(self, done: int, total: int | None) -> str:
        """``spent $x (n calls), projected $y, ETA t`` (only the spend before any pair)."""
        if self.usage is None:
            return ""
        usage, cost = self.spent()
        text = f"spent ${cost:,.4f} ({usage.calls:,} calls)"
        if not done or not total:
            return text
        rest = max(0, total - done)
        elapsed = time.monotonic() - self.started
        projected = cost + cost / done * rest
        return f"{text}, projected ${projected:,.4f}, ETA {format_seconds(elapsed / done * rest)}"


def format_seconds(seconds: float) -> str:
    """``42 s``, ``17 min`` or ``3.5 h``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
