"""Helpers shared by the CLI verb groups: settings, models, console."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.markup import escape as _escape_markup
from rich.table import Table

from docket.cli import exits
from docket.config import Settings
from docket.llm.pool import ModelPool
from docket.store.base import display_url

if TYPE_CHECKING:
    from docket.jobs.result import JobRun

console = Console(stderr=True)
out = Console()


def escape(text: object) -> str:
    """User, corpus or model text made safe to print with rich: ``[x]`` stays ``[x]``."""
    return _escape_markup(str(text))


def id_column(table: Table, heading: str, values: Iterable[object] = (), **kwargs: Any) -> None:
    """Add an identifying column (qid, docid, system) that is never cut or wrapped.

    Its minimum width is its longest value, so at a narrow terminal rich shrinks and
    wraps the other columns instead.
    """
    width = max([len(heading), *(len(str(v)) for v in values)])
    table.add_column(heading, no_wrap=True, min_width=width, overflow="fold", **kwargs)


def value_column(table: Table, heading: str, values: Iterable[object] = (), **kwargs: Any) -> None:
    """Add a column whose values (labels, counts) are never cut: its minimum width is its
    longest word (heading included), and a cell that still does not fit folds rather than
    ending in "…"."""
    words = [w for v in (heading, *values) for w in str(v).split()]
    width = max([1, *(len(w) for w in words)])
    table.add_column(heading, min_width=width, overflow="fold", **kwargs)


def model_factory(settings: Settings) -> ModelPool:
    """The model pool for ``settings`` (see :class:`docket.llm.pool.ModelPool`)."""
    return ModelPool(settings)


EXIT_INTERRUPTED = exits.INTERRUPTED
EXIT_TERMINATED = exits.TERMINATED


@contextmanager
def resumable(db: str) -> Iterator[None]:
    """Turn Ctrl-C or SIGTERM into a note that finished work is kept; exit 130 or 143.

    SIGTERM is handled as SIGINT is: the run stops at the next await, the batch being
    saved is committed (with its review tasks) and the leases are freed, so the same
    command resumes at once.
    """
    terminated: list[int] = []
    previous = _stop_on_sigterm(terminated)
    try:
        yield
    except KeyboardInterrupt:
        what = "terminated (SIGTERM)" if terminated else "interrupted"
        console.print(
            f"[yellow]{what}[/yellow]: every finished pair is saved in "
            f"{escape(display_url(db))}; run the same command again to resume",
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_TERMINATED if terminated else EXIT_INTERRUPTED) from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _stop_on_sigterm(terminated: list[int]) -> Any:
    """Make SIGTERM raise SIGINT (noting it in ``terminated``); return the old handler.

    Raising SIGINT reuses everything Ctrl-C does: asyncio cancels the running job so its
    ``finally`` blocks save and release, and outside asyncio Python raises
    KeyboardInterrupt. Signals can be handled in the main thread only.
    """
    if threading.current_thread() is not threading.main_thread():
        return None

    def on_sigterm(signum: int, _frame: Any) -> None:
        terminated.append(signum)
        if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, signal.SIG_DFL, None):
            # SIGINT is ignored (a job started with `&` from a script): raising it would do
            # nothing. asyncio.run cancels the job when the exception leaves its loop.
            raise KeyboardInterrupt
        signal.raise_signal(signal.SIGINT)

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    return signal.SIG_DFL if previous is None else previous  # None: set outside Python


EXIT_FAILED = exits.FAILED
EXIT_INCOMPLETE = exits.INCOMPLETE


def finish_run(runs: Iterable[JobRun], allow_failed: bool = False) -> None:
    """Exit as the runs say, in this order (codes in :mod:`docket.cli.exits`).

    A spend cap that stopped a run names the cap and what is left (5); a model that stayed
    unavailable raises its one-line error (2); pairs held by other live workers
    leave the job incomplete (75); pairs a server refused fail the command (3) unless
    ``allow_failed``; else 0.
    """
    runs = list(runs)
    for run in runs:
        if run.stopped_by:
            _stopped(run)
    for run in runs:
        run.raise_for_error()
    busy = sum(run.outcome.busy for run in runs)
    if busy:
        console.print(
            f"[yellow]incomplete[/yellow]: {busy} pairs are still held by other workers; "
            "run the same command again when they stop",
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_INCOMPLETE)
    if any(run.failed for run in runs) and not allow_failed:
        raise typer.Exit(EXIT_FAILED)


def _stopped(run: JobRun) -> None:
    left = run.total - len(run.results) - len(run.failed)
    out.print(
        f"[yellow]stopped by {escape(run.stopped_by)}[/yellow]; {left} of {run.total} pairs "
        "not judged yet; every finished pair is saved: rerun with a higher cap to resume",
        soft_wrap=True,
    )
    raise typer.Exit(exits.CAPPED)


def print_failed(failed: list[tuple[str, str, str]], busy: int, limit: int = 20) -> None:
    """Name the pairs a server refused, and say how to retry them."""
    for qid, docid, reason in failed[:limit]:
        out.print(f"[red]failed[/red] {escape(f'({qid}, {docid}): {reason}')}", soft_wrap=True)
    if len(failed) > limit:
        out.print(f"... and {len(failed) - limit} more failed pairs (docket export lists them)")
    if failed:
        out.print(
            f"{len(failed)} failed pairs are not judged; fix the cause and rerun with "
            "--retry-failed to judge them again",
            soft_wrap=True,
        )
    if busy:
        out.print(f"{busy} pairs were being judged by another worker and were left to it")
