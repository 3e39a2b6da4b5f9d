"""Know the bill before paying it: what a job would cost, with no LLM call.

>>> from docket.jobs.bill.plan import plan_job
>>> plan = plan_job("pairs.jsonl", method="dream", model="local")  # doctest: +SKIP
>>> plan.calls.expected, plan.cost.expected, plan.notes  # doctest: +SKIP

:func:`plan_job` takes what :func:`~docket.jobs.run_job` takes. It leaves out the pairs the
store already holds for the job, runs the method's own code against models that answer at
once (:mod:`docket.jobs.bill.dry`) to get the real prompts of the best and worst case, counts
their tokens (:mod:`docket.jobs.bill.tokens`), prices them (:mod:`docket.jobs.bill.prices`) and
turns calls into time and escalations into reviewer hours. Every figure that rests on an
assumption says so in ``notes``.
"""

from __future__ import annotations

import asyncio
import logging
import random
from dataclasses import dataclass
from typing import Any

from docket.errors import DocketError
from docket.jobs.bill.dry import DryPair, dry_run
from docket.jobs.bill.figures import (
    CALL_OVERHEAD_S,
    START_UP_S,
    InFlight,
    JobPlan,
    PlanInputs,
    Range,
    calls_range,
    in_flight_of,
    parallel_calls,
    review_seconds,
    run_range,
)
from docket.jobs.bill.prices import PriceQuote
from docket.jobs.bill.tokens import TokenCounter, token_counter
from docket.jobs.compose import price_quote, store_of
from docket.jobs.spec import JobSpec
from docket.llm.model import Model
from docket.llm.types import Message, Request
from docket.relevance.types import Pair
from docket.store import Store, finished_keys
from docket.store.claims import failed_pairs

log = logging.getLogger(__name__)
COUNTED_PAIRS = 200
"""Pairs whose prompts are counted one by one; a larger job is extrapolated from a seeded sample."""
SAMPLE_SEED = 17


def plan_job(
    pairs: Any,
    spec: JobSpec | None = None,
    *,
    job: str | None = None,
    store: Store | str | None = None,
    **values: Any,
) -> JobPlan:
    """Plan the job :func:`~docket.jobs.run_job` would run on the same arguments; no LLM call.

    Args:
        pairs: as for :func:`~docket.jobs.run_job`.
        spec: as for :func:`~docket.jobs.run_job`; prices, latency, review seconds and
            rates come from ``spec.bill.inputs`` (:class:`PlanInputs`, keyword
            ``plan_inputs=``), the price from ``spec.bill``.
        job: as for :func:`~docket.jobs.run_job`.
        store: as for :func:`~docket.jobs.run_job`.
        **values: as for :func:`~docket.jobs.run_job` (the spec's keywords).

    Raises:
        InputError: a malformed pair. ConfigError: invalid options or prices.
    """
    spec = spec or JobSpec.of(**values)
    inputs = spec.bill.inputs
    loaded = spec.load(pairs)
    name = spec.job_name(loaded, job)
    price = price_quote(spec)
    opened = store_of(store, spec)
    held, seconds, seconds_source = _store_facts(opened, name, spec.retry_failed, inputs)
    todo = [p for p in loaded if p.key not in held]
    sample = _sample(todo, inputs.counted_pairs)
    counter = token_counter(spec.settings.model, probe=inputs.probe)
    counted = _count(dry_run(spec.options, spec.settings.model, sample), counter)
    scale = len(todo) / len(sample) if sample else 0.0
    return _plan(name, spec, len(loaded), todo, counted, scale, counter, price,
                 inputs, seconds, seconds_source, len(sample))  # fmt: skip


def _store_facts(
    store: Store, job: str, retry_failed: bool, inputs: PlanInputs
) -> tuple[set[tuple[str, str]], float, str]:
    with store.read_session() as session:
        held = set(finished_keys(session, job))
        if not retry_failed:
            held |= {(q, d) for q, d, _ in failed_pairs(session, job)}
        seconds, source = review_seconds(session, inputs.review_seconds)
    return held, seconds, source


def _sample(todo: list[Pair], limit: int) -> list[Pair]:
    if len(todo) <= limit:
        return todo
    return random.Random(SAMPLE_SEED).sample(todo, limit)


@dataclass(frozen=True)
class Counted:
    """Summed over the counted pairs: calls, prompt, completion and cached tokens per case."""

    calls: tuple[int, int]
    prompt: tuple[int, int]
    completion: tuple[int, int]
    cached: tuple[int, int]
    per_round: int


def _count(dry: list[DryPair], counter: TokenCounter) -> Counted:
    sums = {k: [0, 0] for k in ("calls", "prompt", "completion", "cached")}
    replies: dict[tuple[int, str], int] = {}
    per_round = 1
    for pair in dry:
        for case, requests in enumerate((pair.fewest, pair.most)):
            prefix = _prefix_tokens(requests, counter)
            sums["calls"][case] += len(requests)
            sums["prompt"][case] += sum(counter.count(r.messages) for _, r in requests)
            sums["completion"][case] += sum(_reply_tokens(r, counter, replies) for _, r in requests)
            sums["cached"][case] += prefix * max(0, len(requests) - 1)
        per_round = max(per_round, len(pair.fewest))
    return Counted(*(tuple(v) for v in sums.values()), per_round)  # type: ignore[arg-type]


def _prefix_tokens(requests: list[tuple[str, Request]], counter: TokenCounter) -> int:
    """Tokens of the pair's shared prefix (system message and shared block)."""
    if not requests:
        return 0
    first = requests[0][1]
    user = first.messages[-1].content
    shared = _shared_of(user)
    return counter.count((first.messages[0], Message("user", shared)))


def _shared_of(user_text: str) -> str:
    # The shared block ends with the chunk's closing delimiter (prompts.SHARED).
    end = user_text.find("</chunk>")
    return user_text[: end + len("</chunk>")] if end >= 0 else user_text


def _reply_tokens(request: Request, counter: TokenCounter, memo: dict[tuple[int, str], int]) -> int:
    from docket.jobs.bill.dry import typical_reply

    text = typical_reply(request, 1)
    key = (request.max_tokens, text)
    if key not in memo:
        memo[key] = min(request.max_tokens, counter.count((Message("assistant", text),)))
    return memo[key]


def _plan(
    name: str, spec: JobSpec, total: int, todo: list[Pair], counted: Counted, scale: float,
    counter: TokenCounter, price: PriceQuote, inputs: PlanInputs, seconds: float,
    seconds_source: str, sampled: int,
) -> JobPlan:  # fmt: skip
    rates = calls_range(spec.options, len(todo), inputs)
    share = rates.disagree_share

    def spread(pair_sums: tuple[int, int]) -> Range:
        low, high = pair_sums[0] * scale, pair_sums[1] * scale
        return Range(low, low + share * (high - low), high)

    calls = spread(counted.calls)
    prompt, completion, cached = (
        spread(counted.prompt),
        spread(counted.completion),
        spread(counted.cached),
    )
    cost = Range(
        *(price.price.cost(p, c, o) for p, c, o in zip(prompt, cached, completion, strict=True))
    )
    in_flight = inputs.in_flight or main_in_flight(spec, probe=inputs.probe)
    parallel = parallel_calls(spec.settings, counted.per_round, in_flight)
    latency = inputs.latency_s
    wall = (None if latency is None
            else run_range(calls, latency, in_flight, parallel, len(todo), counted.per_round))  # fmt: skip
    hours = Range(*(e * spec.reviews * seconds / 3600 for e in rates.escalations))
    notes = [
        f"tokens: {counter.source}" + (f", counted on {sampled} of {len(todo)} pairs" if sampled < len(todo) else ""),
        "completion tokens: estimated from a typical reply (the pilot measures them)",
        f"price: {price.source}",
        *rates.notes,
        f"review: {seconds:g} s per decision ({seconds_source})",
    ]  # fmt: skip
    if latency is None:
        notes.append("time: give --latency SECONDS per call (or run a pilot) to estimate it")
    else:
        notes.append(f"time: {latency:g} s a call; {in_flight.source}; a pair's rounds one "
                     f"after another; docket's own {START_UP_S:g} s to start and "
                     f"{CALL_OVERHEAD_S * 1000:g} ms a call")  # fmt: skip
    if cached.expected:
        notes.append("cached tokens: the pair's shared prefix, if the provider caches prefixes")
    return JobPlan(
        name, spec.method, spec.model_name, total, total - len(todo), len(todo), calls, prompt,
        completion, cached, cost, price, counter.source, sampled, parallel, latency, wall,
        rates.escalations, seconds, hours, notes, rates.assumed,
    )  # fmt: skip


def main_in_flight(spec: JobSpec, *, probe: bool) -> InFlight:
    """How the run's main model would keep calls in flight: built as the run builds it.

    With ``probe`` the server is asked what it serves (its slots), as the run's first call
    would; a server that cannot be asked leaves what the settings say.
    """
    settings = spec.settings
    model = Model(settings.model, max_concurrency=settings.max_in_flight,
                  request_timeout_s=settings.timeout)  # fmt: skip
    if probe:
        try:
            asyncio.run(model.check_server())
        except DocketError as exc:  # the run itself reports an unusable model
            log.debug("no server facts for %s: %s", settings.model, exc)
    return in_flight_of(model)


__all__ = ["JobPlan", "PlanInputs", "Range", "plan_job"]
