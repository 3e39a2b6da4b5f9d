"""Helpers shared by the CLI verb groups: settings, models, console."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape as _escape_markup
from rich.table import Table

from docket.config import Settings
from docket.llm import Model, RetryPolicy
from docket.llm.cache import ResponseCache
from docket.llm.provider import parse_model_name
from docket.llm.usage import Usage
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


class ModelPool:
    """``pool(name)``: one shared Model per name, all with the same cache and retry policy.

    ``pool(None)`` is the main model. :meth:`usage` adds up what this process's calls
    cost, so a run can report what it did apart from what the store already held.
    Each Model keeps at most ``settings.max_in_flight`` calls in flight (a
    ``?max_in_flight=N`` in a model's name wins for that model; neither given: the
    provider's default) and gives each HTTP request ``settings.timeout`` seconds.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.cache = None if settings.cache == "off" else ResponseCache(settings.cache)
        self.retry = RetryPolicy(max_retries=settings.max_retries)
        self.models: dict[str, Model] = {}

    def __call__(self, name: str | None = None) -> Model:
        key = name or self.settings.model
        if key not in self.models:
            self.models[key] = Model(
                key,
                cache=self.cache,
                retry=self.retry,
                max_concurrency=self.settings.max_in_flight,
                request_timeout_s=self.settings.timeout,
            )
        return self.models[key]

    def usage(self) -> Usage:
        """Calls, cache hits, tokens, retries and parse failures of this process so far."""
        total = Usage()
        for model in self.models.values():
            total.merge(model.usage)
        return total


def model_factory(settings: Settings) -> ModelPool:
    """The model pool for ``settings`` (see :class:`ModelPool`)."""
    return ModelPool(settings)


def pairs_at_once(settings: Settings, get_model: Callable[[str | None], Model]) -> int:
    """``--concurrency`` if the user set it, else as many pairs as the model has calls in flight.

    So a served model (64 calls in flight) is kept busy without tuning, and the embedded
    model (1) judges one pair at a time, finishing pairs in order.
    """
    if "concurrency" in settings.model_fields_set:
        return settings.concurrency
    return get_model(None).max_concurrency


def canonical_model(name: str) -> str:
    """The model name without its call parameters (what a job records)."""
    return parse_model_name(name).name


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
