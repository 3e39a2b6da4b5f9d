"""A pilot as a step of its own: judge a sample of the job first, measure it, keep the report.

A command or a notebook calls :func:`run_pilot` before :func:`~docket.jobs.run_job`; the
pilot's pairs are judged in the job itself, so the main run skips them (0 repeated calls).

>>> report = run_pilot("pairs.jsonl", JobSpec.of(model="local"), 20)  # doctest: +SKIP
>>> run = run_job("pairs.jsonl", spec)  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
from typing import Any

from docket.errors import ConfigError, PilotRejectedError
from docket.jobs.bill.caps import FLAGS, Caps
from docket.jobs.bill.figures import parallel_calls
from docket.jobs.bill.pilot import PilotGate, PilotReport, measure, pilot_sample
from docket.jobs.bill.plan import main_in_flight, plan_job
from docket.jobs.compose import price_of, store_of
from docket.jobs.run import run_job
from docket.jobs.spec import JobSpec
from docket.llm.usage import Price
from docket.relevance.methods import method_spec
from docket.relevance.types import Pair
from docket.store import Store, finished_keys
from docket.store.spend import add_note


def run_pilot(
    pairs: Any,
    spec: JobSpec,
    n: int,
    *,
    gate: PilotGate | None = None,
    job: str | None = None,
    store: Store | str | None = None,
) -> PilotReport:
    """Judge a seeded stratified sample of ``n`` pairs in the job, measure it, keep the report.

    Args:
        pairs: the job's pairs, as for :func:`~docket.jobs.run_job`.
        spec: the job's spec, as for :func:`~docket.jobs.run_job`.
        n: pairs in the pilot (between 1 and the job's pairs).
        gate: what the pilot must meet before the main run should start.
        job: the job's name, as for :func:`~docket.jobs.run_job` (the same job).
        store: the store, as for :func:`~docket.jobs.run_job`.

    Raises:
        ConfigError: a pilot larger than the job, or a cap lower than the pilot's own
            fewest calls, tokens or cost (refused before any call, with the numbers).
        PilotRejectedError: the pilot missed the gate (its judgments stay saved; the
            error carries the report).
    """
    loaded = spec.load(pairs)
    name = spec.job_name(loaded, job)
    opened = store_of(store, spec)
    sample = pilot_sample(list(loaded), n)
    price = price_of(spec)
    # The pilot is already drawn from the selected input: no second --limit/--sample.
    inner = dataclasses.replace(spec, limit=None, sample=None)
    _refuse_caps_below_pilot(sample, inner, name, opened, spec.bill.caps, price)
    run = run_job(sample, inner, job=name, store=opened, source=loaded.source)
    with opened.read_session() as session:
        done = finished_keys(session, name)
    remaining = sum(1 for pair in loaded if pair.key not in done)
    # The main run's model starts where this one left it (the limit reached is kept).
    in_flight = main_in_flight(spec, probe=spec.bill.inputs.probe)
    per_round = _per_round(spec)
    parallel = parallel_calls(spec.settings, per_round, in_flight)
    report = measure(run.judgments(reviewed=False), remaining, price, in_flight, parallel,
                     per_round)  # fmt: skip
    with opened.session() as session:
        add_note(session, name, "pilot", report.to_json())
    missed = report.missed(gate) if gate is not None else ""
    if missed:
        raise PilotRejectedError(missed, report=report)
    return report


def _refuse_caps_below_pilot(
    sample: list[Pair], spec: JobSpec, job: str, store: Store, caps: Caps, price: Price
) -> None:
    if not caps.any:
        return
    plan = plan_job(sample, spec, job=job, store=store)
    fewest = {"calls": plan.calls.low, "tokens": plan.tokens.low,
              "cost": price.cost(plan.prompt_tokens.low, plan.cached_tokens.low,
                                 plan.completion_tokens.low)}  # fmt: skip
    for name, need in fewest.items():
        cap = getattr(caps, name)
        if cap is not None and need > cap:
            raise ConfigError(
                f"{FLAGS[name]} {cap:g} is lower than the pilot's own {name}: at least "
                f"{need:,.4g} for its {len(sample)} pairs",
                hint=f"raise {FLAGS[name]} or lower --pilot",
            )


def _per_round(spec: JobSpec) -> int:
    return method_spec(spec.options.method).calls_per_round(spec.options)
