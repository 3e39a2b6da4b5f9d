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
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from docket.cli.common import console

Status = Callable[[int, int | None], str]
"""A text for the progress of ``(done, total)``, e.g. the spend so far and the ETA."""
LINES_PER_RUN = 20
"""Off a terminal, a run of known size writes about this many progress lines."""


class LineProgress:
    """Progress for logs (stderr is not a terminal): one plain line per ``every`` items.

    A line is also written when ``seconds`` have passed since the last one, and when a
    tag finishes, so a long run never leaves its log silent.
    """

    def __init__(
        self, every: int = 25, seconds: float = 10.0, status: Status | None = None
    ) -> None:
        self.every, self.seconds = max(1, every), seconds
        self.status = status
        self.done: dict[str, int] = {}
        self.last = time.monotonic()

    def advance(self, tag: str, total: int | None, count: int | None = None) -> None:
        """Count one finished item of ``tag`` (or set the count) and maybe print a line."""
        before = self.done.get(tag, 0)
        count = self.done[tag] = before + 1 if count is None else count
        if count == before:
            return  # the same count reported again (a run's final report)
        now = time.monotonic()
        crossed = count // self.every > before // self.every
        if crossed or count == total or now - self.last >= self.seconds:
            self.last = now
            of = f"/{total}" if total is not None else ""
            line = f"{escape(tag)}: {count}{of} pairs"
            if self.status is not None and (text := self.status(count, total)):
                line += f"; {escape(text)}"
            console.print(line, soft_wrap=True, highlight=False)


@contextmanager
def progress_meter(
    label: str, total: int | None = None, status: Status | None = None
) -> Iterator[Callable[..., None]]:
    """A callable that takes how many items are done so far, and optionally the total.

    The total may come with the calls (``meter(done, total)``, the library's progress
    callback) when it is not known up front. On a terminal it drives a rich progress bar;
    otherwise it writes plain lines (about :data:`LINES_PER_RUN` per run, and one at least
    every 10 seconds). ``status(done, total)`` adds a text to each line and to the bar (the
    spend so far, projected total and ETA: :class:`docket.jobs.bill.live.LiveSpend`).
    """
    if not console.is_terminal:
        lines: dict[str, LineProgress] = {}

        def line(done: int, of: int | None = None) -> None:
            size = of if of is not None else total
            if "run" not in lines:
                every = max(1, size // LINES_PER_RUN) if size else 100
                lines["run"] = LineProgress(every=every, status=status)
            lines["run"].advance(label, size, count=done)

        yield line
        return
    columns = (TextColumn(f"[bold]{escape(label)}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TextColumn("{task.fields[status]}"))  # fmt: skip
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task(label, total=total, status="")

        def bar(done: int, of: int | None = None) -> None:
            text = escape(status(done, of if of is not None else total)) if status else ""
            progress.update(task, completed=done, status=text,
                            **({"total": of} if of is not None else {}))  # fmt: skip

        yield bar


@contextmanager
def tagged_meter(every: int = 25) -> Iterator[Callable[[str, int, int], None]]:
    """Like :func:`progress_meter` for several runs at once: ``meter(tag, done, total)``.

    On a terminal, one bar per tag; otherwise a plain line every ``every`` pairs of a tag.
    """
    if not console.is_terminal:
        lines = LineProgress(every=every)
        yield lambda tag, done, total: lines.advance(tag, total, count=done)
        return
    with Progress(console=console, transient=True) as progress:
        tasks: dict[str, TaskID] = {}

        def bar(tag: str, done: int, total: int) -> None:
            if tag not in tasks:
                tasks[tag] = progress.add_task(escape(tag), total=total)
            progress.update(tasks[tag], completed=done, total=total)

        yield bar
