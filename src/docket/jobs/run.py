"""The one place a judging run is composed: pairs + spec + store + executor -> :class:`JobRun`.

``docket judge``, ``docket holes fill|simulate``, ``docket eval methods``, the PyTerrier
transformer and notebooks all judge through :func:`run_job`, so every one of them
resumes, queues escalations for review, runs on Ray and reports usage the same way.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from typing import Any

from docket.errors import ConfigError
from docket.jobs.caps import Bill, Budget, CappedJudge, Caps, until_stopped
from docket.jobs.compose import job_executor, open_job, run_usage
from docket.jobs.guidance import check_guidance
from docket.jobs.inputs import JobInput, job_input
from docket.jobs.pilot_run import run_pilot
from docket.jobs.plan import JobPlan, PlanMade, plan_job
from docket.jobs.plan_figures import PlanInputs
from docket.jobs.prices import load_price_table, quote
from docket.jobs.result import JobRun
from docket.jobs.spec import JobSpec
from docket.llm.pool import ModelPool
from docket.llm.usage import Price
from docket.relevance import Judge, build_judge
from docket.runner import judge_job
from docket.store import Store, open_store
from docket.store.spend import add_note

log = logging.getLogger(__name__)
Progress = Callable[[int, int], None]
"""Called with ``(settled, total)``: input pairs settled so far (judged now, judged before,
or failed) and the input's distinct pairs."""


def run_job(
    pairs: Any,
    spec: JobSpec | None = None,
    *,
    job: str | None = None,
    store: Store | str | None = None,
    on_progress: Progress | None = None,
    source: str | None = None,
    judge: Judge | None = None,
    caps: Caps | None = None,
    price: Price | None = None,
    **values: Any,
) -> JobRun:
    """Judge ``pairs`` in a resumable job of the store, and queue its escalations for review.

    Args:
        pairs: a pairs file (JSONL/TSV), a pandas DataFrame with ``qid, query, docid,
            text[, label, grade]`` columns, or an iterable of :class:`~docket.Pair`.
        spec: how to judge; without it, ``values`` build one (:meth:`JobSpec.of`), e.g.
            ``method="dream", model="local", db="docket.db", rounds=2``.
        job: the job's name (default: the input's stem and the method). A rerun with the
            same name skips every saved pair without an LLM call.
        store: an open store or a store URL (default: the spec's ``db`` setting).
        on_progress: progress callback, see :data:`Progress`.
        source: what the job records as its input (default: the file path).
        judge: a judge of your own (any :class:`~docket.relevance.Judge`) instead of the one
            the spec's method builds; the job records its ``method``. Local executor only.
        caps: budget caps counted in the store (:class:`~docket.jobs.caps.Caps`); a run
            they stop has ``stopped_by`` set, and a rerun with higher caps resumes.
        price: the main model's price for ``caps.cost`` (default: docket.toml, then the
            dated table; see :mod:`docket.jobs.prices`).

    Returns:
        The run; ``run.error`` holds the model failure that stopped it early, if any
        (the finished pairs are saved either way; :meth:`JobRun.raise_for_error`).

    Raises:
        InputError: a malformed pair (file and line, or DataFrame row, and column).
        ConfigError: invalid options, or a job of that name with other settings.
        PlanMade: ``spec.bill.plan_only``: the plan, and nothing was judged.
    """
    if spec is not None and values:
        raise ConfigError(
            f"give either a JobSpec or keyword options, not both ({', '.join(sorted(values))})"
        )
    spec = spec or JobSpec.of(**values)
    bill = spec.bill or Bill()
    caps, price = caps or bill.caps, price or bill.price
    loaded = spec.select(job_input(pairs))
    if loaded.duplicates:
        log.warning("%s: %d duplicate pairs judged once", loaded.source, loaded.duplicates)
    name = job or f"{loaded.stem}-{spec.method}"
    if bill.plan_only:
        raise PlanMade(plan_job(loaded, spec, job=name, store=store, inputs=bill.inputs))
    if bill.pilot:
        store = store if isinstance(store, Store) else open_store(store or spec.settings.db)
        report = run_pilot(run_job, loaded, spec, name, store, caps, price)
        main = run_job(loaded, dataclasses.replace(spec, bill=dataclasses.replace(bill, pilot=0)),
                       job=name, store=store, on_progress=on_progress, source=source,
                       judge=judge, caps=caps, price=price)  # fmt: skip
        return dataclasses.replace(main, pilot=report)
    models = ModelPool(spec.settings)
    # A plan counts the prompts of the spec's method: it says nothing of a caller's judge.
    bill = bill if judge is None else dataclasses.replace(bill, track=False)
    if judge is None:
        judge = build_judge(spec.options, models)  # a bad model fails before the store opens
    elif spec.settings.executor != "local":
        raise ConfigError(
            "a judge object runs in this process only", hint="drop --executor ray, or the judge"
        )
    models.check()  # a model id the server does not list is refused before the store opens
    opened = store if isinstance(store, Store) else open_store(store or spec.settings.db)
    open_job(opened, name, spec, source or loaded.source, method=judge.method)
    check_guidance(opened, name, loaded.guidance)
    planned = _track(bill, loaded, spec, name, opened, models, price)
    budget = _budget(caps, price, opened, name, spec, models)
    feed = loaded if budget is None else until_stopped(loaded, budget)
    judge = judge if budget is None else CappedJudge(judge, budget)
    started = time.monotonic()
    with job_executor(spec.options, spec.settings) as executor:
        run = judge_job(
            opened, name, feed, judge,
            concurrency=models.pairs_at_once(), on_progress=_reporter(on_progress, len(loaded)),
            required_reviews=spec.reviews, retry_failed=spec.retry_failed, executor=executor,
        )  # fmt: skip
        usage = run_usage(models, executor)
    return JobRun(
        name, opened, run.results, run.outcome, run.queued, run.failed, usage, len(loaded),
        budget.stopped if budget else "", budget.spent() if budget else None,
        plan=planned, elapsed_s=time.monotonic() - started,
    )  # fmt: skip


def _track(
    bill: Bill, loaded: JobInput, spec: JobSpec, job: str, store: Store, models: ModelPool,
    price: Price | None,
) -> JobPlan | None:  # fmt: skip
    """The run's own plan, kept with the job, and the live spend filled (``bill.track``)."""
    inputs = dataclasses.replace(bill.inputs or PlanInputs(), probe=False)
    if bill.live is not None:
        bill.live.usage = models.usage
        bill.live.price = price or quote(spec.model_name, load_price_table(), inputs.prices).price
    if not bill.track:
        return None
    planned = plan_job(loaded, spec, job=job, store=store, inputs=inputs)
    with store.session() as session:
        add_note(session, job, "plan", planned.to_json())
    return planned


def _budget(
    caps: Caps | None, price: Price | None, store: Store, job: str, spec: JobSpec,
    models: ModelPool,
) -> Budget | None:  # fmt: skip
    """The job's budget, made the gate of every model of the run (None: no caps)."""
    if caps is None or not caps.any:
        return None
    if spec.settings.executor != "local":
        raise ConfigError(
            "budget caps run with the local executor only", hint="drop --executor ray"
        )
    price = price or quote(spec.model_name, load_price_table()).price
    budget = Budget(store, job, caps, price, spec.options, spec.settings.model)
    models.gate = budget
    for model in models.models.values():
        model.gate = budget
    return budget


def _reporter(on_progress: Progress | None, total: int) -> Callable[[int], None] | None:
    if on_progress is None:
        return None
    return lambda done: on_progress(done, total)
