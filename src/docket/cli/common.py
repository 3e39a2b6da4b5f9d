"""Helpers shared by the CLI verb groups: settings, models, console."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import typer
from rich.console import Console

from docket.config import Settings
from docket.llm import Model, RetryPolicy
from docket.llm.cache import ResponseCache

console = Console(stderr=True)
out = Console()


def model_factory(settings: Settings) -> Callable[[str | None], Model]:
    """Return get_model(name): one shared Model per name, all with the same cache."""
    cache = None if settings.cache == "off" else ResponseCache(settings.cache)
    retry = RetryPolicy(max_retries=settings.max_retries)
    models: dict[str, Model] = {}

    def get_model(name: str | None = None) -> Model:
        key = name or settings.model
        if key not in models:
            models[key] = Model(key, cache=cache, retry=retry)
        return models[key]

    return get_model


@contextmanager
def resumable(db: str) -> Iterator[None]:
    """Turn Ctrl-C into a one-line note that finished work is kept, and exit code 130."""
    try:
        yield
    except KeyboardInterrupt:
        console.print(
            f"[yellow]interrupted[/yellow]: every finished pair is saved in {db}; "
            "run the same command again to resume",
            soft_wrap=True,
        )
        raise typer.Exit(130) from None
