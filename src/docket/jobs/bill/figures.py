"""The figures of a plan that rest on rates rather than prompts: what the user or a pilot gives.

A debate's calls lie between all agents agreeing in round 1 and every round running; where
in that range a job falls is its disagreement share, unknown until a pilot measures it
(:data:`DEFAULT_DISAGREE_SHARE` until then, stated in the plan's notes).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from docket.config import Settings
from docket.errors import ConfigError
from docket.jobs.bill.prices import PriceQuote
from docket.relevance.lara import human_budget
from docket.relevance.methods import method_spec
from docket.relevance.options import JudgeOptions
from docket.store.review_tables import Decision

DEFAULT_DISAGREE_SHARE = 0.5
START_UP_S = 0.1
"""A run's own time before its first call and after its last (opening the store, reading the
input, the first connections, the batch step, the review queue): 0.1-0.3 s for a 200-pair
job on SQLite, ``benchmarks/plan_accuracy.py``. A plan and a pilot add it once."""
CALL_OVERHEAD_S = 0.001
"""docket's own time per call besides waiting for it (building the prompt, parsing the reply,
saving it): 0.6-0.9 ms of CPU on an idle core, ``benchmarks/judge_throughput.py``. The
runner's one event loop spends it one call after another, so it adds to the wall time."""
DEFAULT_REVIEW_S = 60.0
"""Seconds a reviewer spends per escalated pair when the store has no recorded decisions."""


@dataclass(frozen=True)
class Range:
    """Fewest, expected and most of one figure."""

    low: float
    expected: float
    high: float

    def __iter__(self) -> Iterator[float]:
        return iter((self.low, self.expected, self.high))

    def __add__(self, other: Range) -> Range:
        return Range(self.low + other.low, self.expected + other.expected, self.high + other.high)

    def to_json(self) -> dict[str, float]:
        """``{"low", "expected", "high"}``."""
        return {"low": self.low, "expected": self.expected, "high": self.high}


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
    assumed: str = ""
    """What the expected column assumes, unmeasured ("" when it rests on the prompts alone)."""

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
                               "parallel_calls", "latency_s", "review_s", "notes",
                               "assumed")}  # fmt: skip
        out.update({k: getattr(self, k).to_json() for k in ranges})
        out["tokens"] = self.tokens.to_json()
        out["wall_s"] = self.wall_s.to_json() if self.wall_s else None
        out["price"] = self.price.to_json()
        return out


@dataclass(frozen=True)
class PlanInputs:
    """What a plan cannot read from the prompts: prices, latency, review time, rates.

    Attributes:
        prices: ``input``/``cached_input``/``output`` USD per million tokens for the main
            model (None: not given; docket.toml or the dated defaults then).
        latency_s: seconds per LLM call (None: no time estimate).
        review_seconds: seconds per review decision (None: the store's median, else 60).
        disagree_share: share of debates that run every round (None: 0.5, stated).
        config_path: the docket.toml to read ``[docket.prices]`` from (default ./docket.toml).
        counted_pairs: pairs whose prompts are counted (a larger job is extrapolated).
        probe: ask a served model's ``/tokenize`` and what it serves (False: the run's own
            plan asks nothing).
        in_flight: what is known of the run's calls in flight (None: the plan builds the
            main model as the run would, and asks it).
    """

    prices: Mapping[str, float | None] = field(default_factory=dict)
    latency_s: float | None = None
    review_seconds: float | None = None
    disagree_share: float | None = None
    config_path: Path | None = None
    counted_pairs: int = 200
    probe: bool = True
    in_flight: InFlight | None = None

    def __post_init__(self) -> None:
        for flag, value in (
            ("--latency", self.latency_s),
            ("--review-seconds", self.review_seconds),
        ):
            if value is not None and not value > 0:
                raise ConfigError(f"{flag} {value}: must be greater than 0", hint=f"e.g. {flag} 2")
        share = self.disagree_share
        if share is not None and not 0 <= share <= 1:
            raise ConfigError(f"disagree_share {share}: must be between 0 and 1")


@dataclass(frozen=True)
class Rates:
    """Where in the calls range a job falls, and the escalations that follow."""

    disagree_share: float
    escalations: Range
    notes: list[str]
    assumed: str = ""
    """What the expected figures assume and nothing measured ("" when nothing is assumed)."""


def calls_range(options: JudgeOptions, todo: int, inputs: PlanInputs) -> Rates:
    """The disagreement share and expected escalations of ``options.method`` on ``todo`` pairs."""
    share = DEFAULT_DISAGREE_SHARE if inputs.disagree_share is None else inputs.disagree_share
    method = options.method
    if method == "dream":
        calls = f"{options.agents} (all agree in round 1) to {options.agents * options.rounds} (all {options.rounds} rounds)"
        how = (
            "measured" if inputs.disagree_share is not None else "assumed (run --pilot to measure)"
        )
        notes = [f"calls per pair: {calls}; {share:.0%} of debates run every round, {how}"]
        assumed = ("" if inputs.disagree_share is not None else
                   f"{share:.0%} of debates run every round (not measured: --pilot N measures "
                   "it); the job lies between fewest and most")  # fmt: skip
        if options.adjudicator:
            notes.append("escalations: the adjudicator decides")
            return Rates(share, Range(0, 0, 0), notes, assumed)
        return Rates(share, Range(0, share * todo, todo), notes, assumed)
    if method == "lara":
        budget = human_budget(options.lara_budget, todo)
        notes = [f"calls per pair: 1; {budget} pairs ({options.lara_budget:.1%}) go to humans"]
        return Rates(share, Range(budget, budget, budget), notes)
    per = method_spec(method).calls_per_round(options)
    notes = [f"calls per pair: {per}; escalations only from unparsed replies or ties"]
    return Rates(share, Range(0, 0, todo), notes)


@dataclass(frozen=True)
class InFlight:
    """How a run keeps calls in flight to its main model: where it starts, how far it goes.

    Attributes:
        start: calls in flight at the first round trip.
        bound: the most calls in flight (the user's bound, the server's slots).
        ramps: the limit doubles each round trip from ``start`` (nothing was known).
        source: what the figures rest on, for the plan's notes.
    """

    start: int
    bound: int
    ramps: bool
    source: str = ""


def in_flight_of(model: Any) -> InFlight:
    """What a run's main model starts at, as the runner's own limit says (``model.limit``).

    ``model`` is a :class:`~docket.llm.model.Model`, built as the run builds it and perhaps
    probed (the slots a server reports bound it).
    """
    limit = model.limit
    bound, start = limit.bound, min(limit.current, limit.bound)
    how = "doubling each round trip" if limit.slow_start else "from the first call"
    return InFlight(start, bound, limit.slow_start,
                    f"{start} calls in flight at first, up to {bound}, {how}")  # fmt: skip


def parallel_calls(settings: Settings, per_round: int, in_flight: InFlight) -> int:
    """Calls in flight at once, ramp done: pairs at once times a pair's calls per round, capped."""
    pairs = settings.concurrency if "concurrency" in settings.model_fields_set else in_flight.bound
    return max(1, min(in_flight.bound, pairs * max(1, per_round)))


def wall_seconds(
    calls: float, latency_s: float, in_flight: InFlight, parallel: int, depth: int = 1
) -> float:
    """Seconds ``calls`` calls of ``latency_s`` take as the runner sends them.

    Each round trip answers the calls in flight; they start at ``in_flight.start`` and,
    when the limit ramps, double each round trip up to ``parallel`` (what the pairs can
    keep in flight). A last, partial round trip takes a whole latency. ``depth`` is the
    round trips one pair takes one after another (a debate's rounds): the last pairs
    started take their later rounds after every other call is answered, ``depth - 1``
    round trips more.
    """
    cap = max(1, parallel)
    window = max(1, min(in_flight.start, cap))
    left, trips = max(0.0, calls), 0
    while left > 0 and window < cap and in_flight.ramps:
        left -= window
        trips += 1
        window = min(cap, 2 * window)
    if left > 0:
        trips += math.ceil(left / (cap if in_flight.ramps else window))
    if calls > 0:
        trips += max(1, depth) - 1
    return trips * latency_s


def run_seconds(
    calls: float, latency_s: float, in_flight: InFlight, parallel: int, depth: int = 1
) -> float:
    """A run's wall time: its start-up (:data:`START_UP_S`), the round trips of its calls
    (:func:`wall_seconds`) and docket's own time per call (:data:`CALL_OVERHEAD_S`)."""
    trips = wall_seconds(calls, latency_s, in_flight, parallel, depth)
    return START_UP_S + trips + max(0.0, calls) * CALL_OVERHEAD_S


def run_range(
    calls: Range, latency_s: float, in_flight: InFlight, parallel: int, pairs: int,
    per_round: int,
) -> Range:  # fmt: skip
    """:func:`run_seconds` of each figure of ``calls`` for ``pairs`` pairs, a pair's rounds
    (``per_round`` calls each) one after another (:func:`depth_of`)."""
    return Range(*(run_seconds(c, latency_s, in_flight, parallel, depth_of(c, pairs, per_round))
                   for c in calls))  # fmt: skip


def depth_of(calls: float, pairs: int, per_round: int) -> int:
    """Round trips one pair takes one after another: its calls over the calls of a round
    (``calls`` over ``pairs`` pairs, rounded up: a share of debates going on means the last
    pairs started may go on too)."""
    if pairs <= 0 or calls <= 0:
        return 1
    return max(1, math.ceil(calls / pairs / max(1, per_round) - 1e-9))


def review_seconds(session: Session, given: float | None) -> tuple[float, str]:
    """Seconds per review: the flag, else the median the review app recorded, else 60."""
    if given is not None:
        return given, "given"
    recorded = [s for s in session.scalars(select(Decision.seconds)) if s is not None and s > 0]
    if recorded:
        return median(recorded), f"median of {len(recorded)} recorded review decisions"
    return DEFAULT_REVIEW_S, "default; give --review-seconds"
