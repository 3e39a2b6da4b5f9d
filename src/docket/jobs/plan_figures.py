"""The figures of a plan that rest on rates rather than prompts: what the user or a pilot gives.

A debate's calls lie between all agents agreeing in round 1 and every round running; where
in that range a job falls is its disagreement share, unknown until a pilot measures it
(:data:`DEFAULT_DISAGREE_SHARE` until then, stated in the plan's notes).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median

from sqlalchemy import select
from sqlalchemy.orm import Session

from docket.errors import ConfigError
from docket.jobs.spec import JobSpec
from docket.relevance.lara import human_budget
from docket.relevance.options import JudgeOptions
from docket.store.review_tables import Decision

DEFAULT_DISAGREE_SHARE = 0.5
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
        probe: ask a served model's ``/tokenize`` (False: the run's own plan asks nothing).
    """

    prices: Mapping[str, float | None] = field(default_factory=dict)
    latency_s: float | None = None
    review_seconds: float | None = None
    disagree_share: float | None = None
    config_path: Path | None = None
    counted_pairs: int = 200
    probe: bool = True

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
        if options.adjudicator:
            return Rates(share, Range(0, 0, 0), [*notes, "escalations: the adjudicator decides"])
        return Rates(share, Range(0, share * todo, todo), notes)
    if method == "lara":
        budget = human_budget(options.budget, todo)
        notes = [f"calls per pair: 1; {budget} pairs ({options.budget:.1%}) go to humans"]
        return Rates(share, Range(budget, budget, budget), notes)
    per = options.samples if method == "majority" else 1
    notes = [f"calls per pair: {per}; escalations only from unparsed replies or ties"]
    return Rates(share, Range(0, 0, todo), notes)


def parallel_calls(spec: JobSpec, per_round: int) -> int:
    """Calls in flight at once: pairs at once times the pair's parallel calls, capped."""
    settings = spec.settings
    in_flight = settings.max_in_flight or _default_in_flight(settings.model)
    pairs = settings.concurrency if "concurrency" in settings.model_fields_set else in_flight
    return max(1, min(in_flight, pairs * max(1, per_round)))


def _default_in_flight(model: str) -> int:
    from docket.llm.provider import parse_model_name

    spec = parse_model_name(model)
    if spec.max_in_flight:
        return spec.max_in_flight
    return 1 if spec.name == "local" or spec.name.startswith("local:") else 64


def review_seconds(session: Session, given: float | None) -> tuple[float, str]:
    """Seconds per review: the flag, else the median the review app recorded, else 60."""
    if given is not None:
        return given, "given"
    recorded = [s for s in session.scalars(select(Decision.seconds)) if s is not None and s > 0]
    if recorded:
        return median(recorded), f"median of {len(recorded)} recorded review decisions"
    return DEFAULT_REVIEW_S, "default; give --review-seconds"
