"""The one place a judging run is composed: pairs + spec + store + executor -> :class:`JobRun`.

``docket judge``, ``docket holes fill|simulate``, ``docket eval methods``, the PyTerrier
transformer and notebooks all judge through :func:`run_job`, so every one of them
resumes, queues escalations for review, runs on Ray and reports usage the same way.
A plan (:func:`~docket.jobs.bill.plan.plan_job`) and a pilot
(:func:`~docket.jobs.bill.pilot_run.run_pilot`) are steps of their own, taken before it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable
from typing import Any

from docket.errors import ConfigError
from docket.jobs.bill.caps import CapGate, CappedJudge, until_stopped
from docket.jobs.bill.figures import JobPlan, in_flight_of
from docket.jobs.bill.plan import plan_job
from docket.jobs.compose import job_executor, open_job, price_of, price_quote, run_usage, store_of
from docket.jobs.guidance import check_guidance
from docket.jobs.inputs import JobInput
from docket.jobs.result import JobRun
from docket.jobs.spec import JobSpec
from docket.llm.cache import journaled
from docket.llm.pool import ModelPool
from docket.llm.usage import Usage
from docket.relevance import Judge, build_judge
from docket.relevance.lara import LaraJudge
from docket.runner import StoredResults, Tally, enqueue_escalations, finalize_job, judge_pairs
from docket.runner.journal import Kept, PairCalls
from docket.store import Store, finished_keys
from docket.store.claims import failed_pairs
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
    **values: Any,
) -> JobRun:
    """Judge ``pairs`` in a resumable job of the store, and queue its escalations for review.

    Args:
        pairs: a pairs file (JSONL/TSV), a pandas DataFrame with ``qid, query, docid,
            text[, label, grade]`` columns, or an iterable of :class:`~docket.Pair`.
        spec: how to judge; without it, ``values`` build one (:meth:`JobSpec.of`), e.g.
            ``method="dream", model="local", db="docket.db", rounds=2``, and the spend caps
            ``caps=Caps(calls=100)`` with the model's ``price=``.
        job: the job's name (default: the input's stem and the method). A rerun with the
            same name skips every saved pair without an LLM call.
        store: an open store or a store URL (default: the spec's ``db`` setting).
        on_progress: progress callback, see :data:`Progress`.
        source: what the job records as its input (default: the file path).
        judge: a judge of your own (any :class:`~docket.relevance.Judge`) instead of the one
            the spec's method builds; the job records its ``method``. Local executor only.

    Returns:
        The run; ``run.error`` holds a model failure that stopped it early (finished pairs
        are saved: :meth:`JobRun.raise_for_error`); ``stopped_by`` names a cap that stopped it.

    Raises:
        InputError: a malformed pair (file and line, or DataFrame row, and column).
        ConfigError: invalid options, or a job of that name with other settings.
    """
    spec = job_spec(spec, values)
    check_caps(spec)  # a cap that could not act is refused before the input is read
    loaded = spec.load(pairs)
    name = spec.job_name(loaded, job)
    models = ModelPool(spec.settings)
    # A plan counts the prompts of the spec's method: it says nothing of a caller's judge.
    tracked = spec if judge is None else _untracked(spec)
    judge = _judge(judge, spec, models)  # a bad model fails before the store opens
    models.check()  # a model id the server does not list is refused before the store opens
    opened = store_of(store, spec)
    checked = check_judge(judge, loaded, opened, name)
    open_job(opened, name, spec, source or loaded.source, method=judge.method)
    check_guidance(opened, name, loaded.guidance)
    planned = _track(loaded, tracked, name, opened, models)
    caps = _caps(spec, opened, name, models, checked)
    started = time.monotonic()
    tally, usage = _judge_all(opened, name, loaded, judge, caps, spec, models, on_progress,
                              checked)  # fmt: skip
    results = StoredResults(opened, name, frozenset(tally.seen))
    return JobRun(
        name, opened, results, tally, _queue(results, spec), _failed(opened, name, tally),
        usage, len(loaded),
        caps.stopped if caps else "", caps.spent() if caps else None,
        plan=planned, elapsed_s=time.monotonic() - started, key_types=loaded.key_types,
    )  # fmt: skip


def job_spec(spec: JobSpec | None, values: dict[str, Any]) -> JobSpec:
    """``spec``, or one built from keyword ``values``; both given is refused."""
    if spec is not None and values:
        raise ConfigError(
            f"give either a JobSpec or keyword options, not both ({', '.join(sorted(values))})"
        )
    return spec or JobSpec.of(**values)


def _untracked(spec: JobSpec) -> JobSpec:
    return dataclasses.replace(spec, bill=dataclasses.replace(spec.bill, track=False))


def _judge(judge: Judge | None, spec: JobSpec, models: ModelPool) -> Judge:
    if judge is None:
        return build_judge(spec.options, models)
    if spec.settings.executor != "local":
        raise ConfigError(
            "a judge object runs in this process only", hint="drop --executor ray, or the judge"
        )
    return judge


def check_judge(judge: Judge, loaded: JobInput, store: Store, job: str) -> Kept:
    """Ask the judge's model what the method needs of it (LARA: log-probabilities), once.

    Asked with the first pair still to judge; the answer is returned to be replayed as that
    pair's own call, whatever the cache setting, so it is paid once. A finished job, or a
    method that needs nothing checked, asks nothing (an empty mapping).
    """
    if not isinstance(judge, LaraJudge):
        return {}
    with store.read_session() as session:
        done = finished_keys(session, job)
    first = next((pair for pair in loaded if pair.key not in done), None)
    if first is None:
        return {}
    calls = PairCalls()
    with journaled(calls):
        asyncio.run(judge.check_logprobs(first))
    return {first.key: {str(key): completion for key, _, completion in calls.new}}


def _judge_all(
    store: Store, job: str, loaded: JobInput, judge: Judge, caps: CapGate | None,
    spec: JobSpec, models: ModelPool, on_progress: Progress | None, checked: Kept,
) -> tuple[Tally, Usage]:  # fmt: skip
    """The runner's loop over the pairs (within the caps), then the method's batch step."""
    feed = loaded if caps is None else until_stopped(loaded, caps)
    judge = judge if caps is None else CappedJudge(judge, caps)
    tally, total = Tally(), len(loaded)
    report = on_progress or (lambda _settled, _total: None)
    with job_executor(spec.options, spec.settings) as executor:
        asyncio.run(
            judge_pairs(
                store, job, feed, judge, concurrency=models.pairs_at_once(),
                retry_failed=spec.retry_failed, tally=tally, executor=executor,
                on_result=lambda _pair, _judgment: report(tally.settled, total),
                required_reviews=spec.reviews, kept=checked,
            )
        )  # fmt: skip
        usage = run_usage(models, executor)
    report(len(tally.seen) - tally.busy, total)
    # The batch step runs over what was finished even after a model failure: nothing is lost.
    finalize_job(store, job, judge)
    return tally, usage


def _queue(results: StoredResults, spec: JobSpec) -> int:
    """Queue the input's escalated pairs for review (after the batch step: it may change them)."""
    return enqueue_escalations(
        results.store, results.job, results.escalated(), required_reviews=spec.reviews
    )


def _failed(store: Store, job: str, tally: Tally) -> list[tuple[str, str, str]]:
    with store.read_session() as session:
        # a small run (a batch of an ordered fill) reads its own keys, not the whole job
        keys = tally.seen if len(tally.seen) <= 5000 else None
        return [f for f in failed_pairs(session, job, keys) if (f[0], f[1]) in tally.seen]


def _track(
    loaded: JobInput, spec: JobSpec, job: str, store: Store, models: ModelPool
) -> JobPlan | None:
    """The run's own plan, kept with the job, and the live spend filled (``bill.track``)."""
    bill = spec.bill
    if bill.live is not None:
        bill.live.usage = models.usage
        bill.live.price = price_of(spec)
    if not bill.track:
        return None
    # The run's own models, already asked what their servers serve: no second request.
    known = dataclasses.replace(bill.inputs, probe=False, in_flight=in_flight_of(models(None)))
    quiet = dataclasses.replace(bill, inputs=known)
    planned = plan_job(loaded, dataclasses.replace(spec, bill=quiet), job=job, store=store)
    with store.session() as session:
        add_note(session, job, "plan", planned.to_json())
    return planned


def check_caps(spec: JobSpec) -> None:
    """Refuse, before any call, caps that could not act: on Ray, or a cost cap with no price.

    Raises:
        ConfigError: one line naming the cap and how to make it act.
    """
    caps = spec.bill.caps
    if not caps.any:
        return
    if spec.settings.executor != "local":
        raise ConfigError("spend caps run with the local executor only", hint="drop --executor ray")
    if caps.cost is not None and not price_quote(spec).known:
        raise ConfigError(
            f"--max-cost {caps.cost:g}: no price is known for '{spec.model_name}', so the cap "
            "could never act",
            hint="give --price-input and --price-output (USD per million tokens; price= in "
            f'Python), or a [docket.prices."{spec.model_name}"] table in docket.toml',
        )


def _caps(
    spec: JobSpec, store: Store, job: str, models: ModelPool, checked: Kept
) -> CapGate | None:
    """The job's caps, made the gate of every model of the run (None: no caps).

    The call of the judge's check (``checked``), made before the caps were set, is charged
    to them.
    """
    caps = spec.bill.caps
    if not caps.any:
        return None
    gate = CapGate(store, job, caps, price_of(spec), spec.options, spec.settings.model)
    models.gate = gate
    for model in models.models.values():
        model.gate = gate
    gate.charge([completion for calls in checked.values() for completion in calls.values()])
    return gate
