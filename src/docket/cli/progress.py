"""Progress of long runs: a live bar on a terminal, plain lines in a log.

Engines and the runner report progress through callbacks and never import rich; this is
where the CLI turns those callbacks into output. When stderr is not a terminal (CI, a
job scheduler, ``2> log``) a live bar would print nothing until the end, so a plain line
is written every ``every`` items and at least every ``seconds``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from docket.cli.common import console

LINES_PER_RUN = 20
"""Off a terminal, a run of known size writes about this many progress lines."""


class LineProgress:
    """Progress for logs (stderr is not a terminal): one plain line per ``every`` items.

    A line is also written when ``seconds`` have passed since the last one, and when a
    tag finishes, so a long run never leaves its log silent.
    """

    def __init__(self, every: int = 25, seconds: float = 10.0) -> None:
        self.every, self.seconds = max(1, every), seconds
        self.done: dict[str, int] = {}
        self.last = time.monotonic()

    def advance(self, tag: str, total: int | None, count: int | None = None) -> None:
        """Count one finished item of ``tag`` (or set the count) and maybe print a line."""
        before = self.done.get(tag, 0)
        count = self.done[tag] = before + 1 if count is None else count
        now = time.monotonic()
        crossed = count // self.every > before // self.every
        if crossed or count == total or now - self.last >= self.seconds:
            self.last = now
            of = f"/{total}" if total is not None else ""
            line = f"{escape(tag)}: {count}{of} pairs"
            console.print(line, soft_wrap=True, highlight=False)


@contextmanager
def progress_meter(label: str, total: int | None) -> Iterator[Callable[[int], None]]:
    """A callable that takes how many of ``total`` items are done so far.

    On a terminal it drives a rich progress bar; otherwise it writes plain lines (about
    :data:`LINES_PER_RUN` per run, and one at least every 10 seconds).
    """
    if not console.is_terminal:
        every = max(1, (total or 0) // LINES_PER_RUN) if total else 100
        lines = LineProgress(every=every)
        yield lambda done: lines.advance(label, total, count=done)
        return
    columns = (TextColumn(f"[bold]{escape(label)}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())  # fmt: skip
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task(label, total=total)
        yield lambda done: progress.update(task, completed=done)
