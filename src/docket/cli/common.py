"""Helpers shared by the CLI verb groups: settings, models, console."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape as _escape_markup
from rich.table import Table

from docket.config import Settings
from docket.llm.pool import ModelPool
from docket.store.base import display_url

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


@contextmanager
def resumable(db: str) -> Iterator[None]:
    """Turn Ctrl-C into a one-line note that finished work is kept, and exit code 130."""
    try:
        yield
    except KeyboardInterrupt:
        console.print(
            f"[yellow]interrupted[/yellow]: every finished pair is saved in {escape(display_url(db))}; "
            "run the same command again to resume",
            soft_wrap=True,
        )
        raise typer.Exit(130) from None


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
