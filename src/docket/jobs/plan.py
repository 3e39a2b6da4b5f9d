"""Know the bill before paying it: what a job would cost, with no LLM call.

>>> from docket.jobs.plan import plan_job
>>> plan = plan_job("pairs.jsonl", method="dream", model="local")  # doctest: +SKIP
>>> plan.calls.expected, plan.cost.expected, plan.notes  # doctest: +SKIP

:func:`plan_job` takes what :func:`~docket.jobs.run_job` takes. It leaves out the pairs the
store already holds for the job, runs the method's own code against models that answer at
once (:mod:`docket.jobs.dry`) to get the real prompts of the best and worst case, counts
their tokens (:mod:`docket.jobs.tokens`), prices them (:mod:`docket.jobs.prices`) and
turns calls into time and escalations into reviewer hours. Every figure that rests on an
assumption says so in ``notes``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from docket.jobs.dry import DryPair, dry_run
from docket.jobs.inputs import job_input
from docket.jobs.plan_figures import (
    PlanInputs,
    Range,
    calls_range,
    parallel_calls,
    review_seconds,
)
from docket.jobs.prices import PriceQuote, load_price_table, quote
from docket.jobs.spec import JobSpec
from docket.jobs.tokens import TokenCounter, token_counter
from docket.llm.types import Message, Request
from docket.relevance.types import Pair
from docket.store import Store, finished_keys, open_store
from docket.store.claims import failed_pairs

COUNTED_PAIRS = 200
"""Pairs whose prompts are counted one by one; a larger job is extrapolated from a seeded sample."""
SAMPLE_SEED = 17


@dataclass(frozen=True)
class JobPlan:
    """What a job would do: pairs, calls, tokens, cost, time and reviewer workload.

    Ranges are ``(fewest, expected, most)`` over the pairs still to judge; ``notes`` say
    what each figure rests on (tokenizer, price source, assumed rates).
    """

    job: str
    method: str
    model: str
    pairs: int
    done: int
    todo: int
    calls: Range
    prompt_tokens: Range
    completion_tokens: Range
    cached_tokens: Range
    cost: Range
    price: PriceQuote
    token_source: str
    counted_pairs: int
    parallel_calls: int
    latency_s: float | None
    wall_s: Range | None
    escalations: Range
    review_s: float
    review_hours: Range
    notes: list[str] = field(default_factory=list)

    @property
    def tokens(self) -> Range:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def to_json(self) -> dict[str, Any]:
        """Plain dict for ``--json`` and for the store."""
        ranges = ("calls", "prompt_tokens", "completion_tokens", "cached_tokens", "cost",
                  "escalations", "review_hours")  # fmt: skip
        out: dict[str, Any] = {k: getattr(self, k) for k in ("job", "method", "model", "pairs",
                               "done", "todo", "token_source", "counted_pairs",
                               "parallel_calls", "latency_s", "review_s", "notes")}  # fmt: skip
        out.update({k: getattr(self, k).to_json() for k in ranges})
        out["tokens"] = self.tokens.to_json()
        out["wall_s"] = self.wall_s.to_json() if self.wall_s else None
        out["price"] = self.price.to_json()
        return out


class PlanMade(Exception):  # noqa: N818 - a signal, not an error
    """Raised by :func:`~docket.jobs.run_job` for a plan-only spec: carries the plan.

    So every command and library function written on ``run_job`` (holes fill, simulate,
    compare) plans the job it would run, with no LLM call.
    """

    def __init__(self, plan: JobPlan) -> None:
        super().__init__(f"plan of job {plan.job}")
        self.plan = plan


def plan_job(
    pairs: Any,
    spec: JobSpec | None = None,
    *,
    job: str | None = None,
    store: Store | str | None = None,
    inputs: PlanInputs | None = None,
    **values: Any,
) -> JobPlan:
    """Plan the job :func:`~docket.jobs.run_job` would run on the same arguments; no LLM call.

    Args:
        pairs, spec, job, store, values: as for :func:`~docket.jobs.run_job`.
        inputs: prices, latency, review seconds and rates (:class:`PlanInputs`).

    Raises:
        InputError: a malformed pair. ConfigError: invalid options or prices.
    """
    spec = spec or JobSpec.of(**values)
    inputs = inputs or PlanInputs()
    loaded = spec.select(job_input(pairs))
    name = job or f"{loaded.stem}-{spec.method}"
    price = quote(spec.model_name, load_price_table(inputs.config_path), inputs.prices)
    opened = store if isinstance(store, Store) else open_store(store or spec.settings.db)
    held, seconds, seconds_source = _store_facts(opened, name, spec.retry_failed, inputs)
    todo = [p for p in loaded if p.key not in held]
    sample = _sample(todo, inputs.counted_pairs)
    counter = token_counter(spec.settings.model, probe=inputs.probe)
    counted = _count(dry_run(spec.options, spec.settings.model, sample), counter)
    scale = len(todo) / len(sample) if sample else 0.0
    return _plan(name, spec, loaded_total(loaded), todo, counted, scale, counter, price,
                 inputs, seconds, seconds_source, len(sample))  # fmt: skip


def loaded_total(loaded: Any) -> int:
    """Distinct pairs of the input."""
    return len(loaded)


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
    from docket.jobs.dry import typical_reply

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
    parallel = parallel_calls(spec, counted.per_round)
    latency = inputs.latency_s
    wall = None if latency is None else Range(*(c * latency / parallel for c in calls))
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
    if cached.expected:
        notes.append("cached tokens: the pair's shared prefix, if the provider caches prefixes")
    return JobPlan(
        name, spec.method, spec.model_name, total, total - len(todo), len(todo), calls, prompt,
        completion, cached, cost, price, counter.source, sampled, parallel, latency, wall,
        rates.escalations, seconds, hours, notes,
    )  # fmt: skip


__all__ = ["JobPlan", "PlanInputs", "Range", "plan_job"]
