"""Retry warnings, aggregated: one line per model every few seconds, with counts.

A dead server fails every call in flight at once, and each call retries several times; a
line per retry buried the one error line that follows under hundreds (336 for one
``docket verify``). The first failure is told at once, so a user sees what is wrong; the
next ones are counted by kind and told together once :data:`INTERVAL_S` has passed.
"""

from __future__ import annotations

import logging
import time
from collections import Counter

log = logging.getLogger("docket.llm.model")

INTERVAL_S = 5.0


class RetryLog:
    """Counts one model's transient failures and logs them at most once per interval."""

    def __init__(self, name: str, interval_s: float = INTERVAL_S) -> None:
        self.name = name
        self.interval_s = interval_s
        self._pending: Counter[str] = Counter()
        self._last = -float("inf")

    def failed(self, error: Exception, delay_s: float) -> None:
        """Note one transient failure that will be retried in ``delay_s`` seconds."""
        now = time.monotonic()
        self._pending[kind_of(error)] += 1
        if now - self._last < self.interval_s:
            return
        total = sum(self._pending.values())
        if total == 1:
            log.warning("%s: transient failure (%s); retry in %.1fs", self.name, error, delay_s)
        else:
            kinds = ", ".join(f"{kind} x{n}" for kind, n in self._pending.most_common())
            since = "" if self._last == -float("inf") else f" in {now - self._last:.0f} s"
            log.warning(
                "%s: %d transient failures%s (%s); retrying", self.name, total, since, kinds
            )
        self._pending.clear()
        self._last = now


def kind_of(error: Exception) -> str:
    """The failure without its details: ``HTTP 503``, ``ClientConnectorError``, ..."""
    text = str(error)
    return text.split(":", 1)[0].strip()[:60] or type(error).__name__
