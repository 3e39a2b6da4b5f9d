"""The one place a judging run is composed: pairs + spec + store + executor -> :class:`JobRun`.

``docket judge``, ``docket holes fill|simulate``, ``docket eval methods``, the PyTerrier
transformer and notebooks all judge through :func:`run_job`, so every one of them
resumes, queues escalations for review, runs on Ray and reports usage the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from docket.errors import ConfigError
from docket.jobs.compose import job_executor, open_job, run_usage
from docket.jobs.inputs import job_input
from docket.jobs.result import JobRun
from docket.jobs.spec import JobSpec
from docket.llm.pool import ModelPool
from docket.relevance import Judge, build_judge
from docket.runner import judge_job
from docket.store import Store, open_store

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

    Returns:
        The run; ``run.error`` holds the model failure that stopped it early, if any
        (the finished pairs are saved either way; :meth:`JobRun.raise_for_error`).

    Raises:
        InputError: a malformed pair (file and line, or DataFrame row, and column).
        ConfigError: invalid options, or a job of that name with other settings.
    """
    if spec is not None and values:
        raise ConfigError(
            f"give either a JobSpec or keyword options, not both ({', '.join(sorted(values))})"
        )
    spec = spec or JobSpec.of(**values)
    loaded = spec.select(job_input(pairs))
    if loaded.duplicates:
        log.warning("%s: %d duplicate pairs judged once", loaded.source, loaded.duplicates)
    name = job or f"{loaded.stem}-{spec.method}"
    models = ModelPool(spec.settings)
    if judge is None:
        judge = build_judge(spec.options, models)  # a bad model fails before the store opens
    elif spec.settings.executor != "local":
        raise ConfigError(
            "a judge object runs in this process only", hint="drop --executor ray, or the judge"
        )
    models.check()  # a model id the server does not list is refused before the store opens
    opened = store if isinstance(store, Store) else open_store(store or spec.settings.db)
    open_job(opened, name, spec, source or loaded.source, method=judge.method)
    with job_executor(spec.options, spec.settings) as executor:
        run = judge_job(
            opened, name, loaded, judge,
            concurrency=models.pairs_at_once(), on_progress=_reporter(on_progress, len(loaded)),
            required_reviews=spec.reviews, retry_failed=spec.retry_failed, executor=executor,
        )  # fmt: skip
        usage = run_usage(models, executor)
    return JobRun(
        name, opened, run.results, run.outcome, run.queued, run.failed, usage, len(loaded)
    )


def _reporter(on_progress: Progress | None, total: int) -> Callable[[int], None] | None:
    if on_progress is None:
        return None
    return lambda done: on_progress(done, total)
