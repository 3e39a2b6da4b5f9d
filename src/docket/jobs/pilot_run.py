"""Running a job's pilot through :func:`~docket.jobs.run_job` and keeping it with the job.

``run_job`` passes itself in (it runs the pilot, and this module must not import it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from docket.errors import ConfigError, PilotRejectedError
from docket.jobs.caps import FLAGS, Caps
from docket.jobs.inputs import JobInput
from docket.jobs.pilot import PilotReport, measure, pilot_sample
from docket.jobs.plan import plan_job
from docket.jobs.plan_figures import parallel_calls
from docket.jobs.prices import load_price_table, quote
from docket.jobs.result import JobRun
from docket.jobs.spec import JobSpec
from docket.llm.usage import Price
from docket.store import Store, finished_keys
from docket.store.spend import add_note


def run_pilot(
    run_job: Callable[..., JobRun], loaded: JobInput, spec: JobSpec, job: str, store: Store,
    caps: Caps | None, price: Price | None,
) -> PilotReport:  # fmt: skip
    """Judge the pilot sample in ``job``, measure it, keep the report with the job.

    Raises:
        ConfigError: a pilot larger than the job, or a cap lower than the pilot's own
            fewest calls, tokens or cost (refused before any call, with the numbers).
        PilotRejectedError: the pilot missed the gate (its judgments stay saved).
    """
    bill = spec.bill
    sample = pilot_sample(list(loaded), bill.pilot)
    price = price or quote(spec.model_name, load_price_table()).price
    # The pilot is already drawn from the selected input: no second --limit/--sample.
    inner = dataclasses.replace(
        spec, limit=None, sample=None, bill=dataclasses.replace(bill, pilot=0, gate=None)
    )
    _refuse_caps_below_pilot(sample, inner, job, store, caps, price)
    run = run_job(sample, inner, job=job, store=store, source=loaded.source, caps=caps,
                  price=price)  # fmt: skip
    with store.read_session() as session:
        done = finished_keys(session, job)
    remaining = sum(1 for pair in loaded if pair.key not in done)
    parallel = parallel_calls(spec, _per_round(spec))
    elapsed = run.elapsed_s if run.outcome.judged == len(sample) else 0.0  # a fresh pilot only
    report = measure(run.judgments(reviewed=False), remaining, price, parallel, elapsed)
    with store.session() as session:
        add_note(session, job, "pilot", report.to_json())
    if bill.gate is not None:
        try:
            report.check(bill.gate)
        except PilotRejectedError as exc:
            exc.report = report
            raise
    return report


def _refuse_caps_below_pilot(
    sample: list, spec: JobSpec, job: str, store: Store, caps: Caps | None, price: Price
) -> None:
    if caps is None or not caps.any:
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
    options = spec.options
    if options.method == "dream":
        return options.agents
    return options.samples if options.method == "majority" else 1
