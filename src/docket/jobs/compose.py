"""The parts of a judging run, built the same way in every process.

:func:`make_judge` is module-level and takes only picklable values, so the Ray executor
can send ``functools.partial(make_judge, options, settings)`` to its actors and each one
builds its own judge and models: the distributed runner needs nothing of the CLI.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING

from docket.config import Settings
from docket.jobs.bill.prices import PriceQuote, load_price_table, quote
from docket.llm.pool import ModelPool
from docket.llm.usage import Price, Usage
from docket.relevance import Judge, JudgeOptions, build_judge
from docket.store import Store, open_store, upsert_job

if TYPE_CHECKING:
    from docket.jobs.spec import JobSpec
    from docket.runner.ray_executor import RayExecutor


def make_judge(options: JudgeOptions, settings: Settings) -> Judge:
    """Build the judge of a job from its options and settings (in any process)."""
    return build_judge(options, ModelPool(settings))


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


def open_job(store: Store, name: str, spec: JobSpec, source: str, method: str = "") -> None:
    """Create the job, or check that a rerun resumes it with the same method, model, options.

    Every command records the model's canonical name, so a rerun that only changes a call
    parameter (``?max_in_flight=``) resumes.
    """
    with store.session() as session:
        upsert_job(
            session, name=name, method=method or spec.method, model=spec.model_name,
            options=spec.options.record(), source=source, sticky=("instructions",),
        )  # fmt: skip


def store_of(store: Store | str | None, spec: JobSpec) -> Store:
    """``store`` if open, else the store at its URL, else at the spec's ``db`` setting."""
    return store if isinstance(store, Store) else open_store(store or spec.settings.db)


def price_quote(spec: JobSpec) -> PriceQuote:
    """The main model's price: the spec's, else the price flags, docket.toml, the dated table."""
    bill = spec.bill
    if bill.price is not None:
        return PriceQuote(spec.model_name, bill.price, "given")
    return quote(spec.model_name, load_price_table(bill.inputs.config_path), bill.inputs.prices)


def price_of(spec: JobSpec) -> Price:
    """The main model's price (:func:`price_quote`)."""
    return price_quote(spec).price
