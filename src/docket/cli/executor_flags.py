"""Where a judging command's calls run: the ``--executor`` flags and the executor they build.

``docket judge`` and ``docket holes fill|simulate`` share these, so the three commands
take the same flags and build the same Ray executor. Each Ray actor rebuilds the judge
from the job's options and settings with :func:`make_judge` (a module-level function,
so ``functools.partial(make_judge, options, settings)`` pickles).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Annotated

import typer

from docket.cli.common import ModelPool, model_factory
from docket.config import Settings
from docket.llm.usage import Usage
from docket.relevance import Judge, JudgeOptions, build_judge

if TYPE_CHECKING:
    from docket.runner.ray_executor import RayExecutor

ExecutorOpt = Annotated[
    str | None, typer.Option(help="local | ray (Ray workers, each with its own model)")
]
RayAddressOpt = Annotated[
    str | None, typer.Option(help="Ray cluster: auto or HOST:PORT (default: start one)")
]
RayWorkersOpt = Annotated[int | None, typer.Option(help="Ray actors (default 2)")]


def make_judge(options: JudgeOptions, settings: Settings) -> Judge:
    """Build the judge of a job from its options and settings (in any process)."""
    return build_judge(options, model_factory(settings))


def ray_executor(options: JudgeOptions, settings: Settings) -> RayExecutor | None:
    """The Ray executor when ``settings.executor`` asks for it (None: judge in this process).

    Joins ``settings.ray_address`` (or starts a local Ray) before any pair is claimed.
    """
    if settings.executor != "ray":
        return None
    from docket.runner.ray_executor import RayExecutor, init_ray

    init_ray(settings.ray_address)
    return RayExecutor(partial(make_judge, options, settings), workers=settings.ray_workers)


@contextmanager
def job_executor(options: JudgeOptions, settings: Settings) -> Iterator[RayExecutor | None]:
    """:func:`ray_executor` for the ``with`` block; its actors end with the block."""
    executor = ray_executor(options, settings)
    try:
        yield executor
    finally:
        if executor is not None:
            executor.stop()


def run_usage(models: ModelPool, executor: RayExecutor | None) -> Usage:
    """What this run's calls cost: this process's models, plus the Ray actors' calls."""
    total = models.usage()
    if executor is not None:
        total.merge(executor.usage)
    return total
