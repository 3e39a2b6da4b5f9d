"""A pilot: judge a seeded, stratified sample first, measure it, and re-plan the whole job.

The pilot's pairs are judged in the job itself (so the main run skips them: 0 repeated
calls). From their stored judgments it measures, per pair, calls, tokens, latency,
escalations and parse failures; the rest of the job is projected from those numbers with
95 % intervals from a bootstrap over the pilot's pairs. With gold labels it also reports
balanced accuracy and Cohen's kappa (:func:`docket.agreement.cohen_kappa`) with intervals.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from docket.agreement import MIN_PAIRS, balanced_accuracy, cohen_kappa
from docket.errors import ConfigError
from docket.jobs.bill.figures import InFlight, Range, run_range
from docket.llm.usage import Price
from docket.relevance.types import Judgment, Pair

BOOTSTRAP = 1000
SEED = 17


@dataclass(frozen=True)
class PilotGate:
    """What a pilot must meet before the main run starts (None: no condition)."""

    min_kappa: float | None = None
    max_escalation: float | None = None

    def __post_init__(self) -> None:
        if self.min_kappa is not None and not -1 <= self.min_kappa <= 1:
            raise ConfigError(f"--min-kappa {self.min_kappa}: must be between -1 and 1")
        if self.max_escalation is not None and not 0 <= self.max_escalation <= 1:
            raise ConfigError(
                f"--max-escalation {self.max_escalation}: a share between 0 and 1",
                hint="e.g. --max-escalation 0.2 for 20%",
            )


def pilot_sample(pairs: Sequence[Pair], n: int, seed: int = SEED) -> list[Pair]:
    """``n`` pairs drawn round-robin over strata (query, gold label), each stratum shuffled.

    Raises:
        ConfigError: ``n`` < 1 or larger than the job.
    """
    if n < 1 or n > len(pairs):
        raise ConfigError(
            f"--pilot {n}: must be between 1 and the job's {len(pairs)} pairs",
            hint="e.g. --pilot 20",
        )
    rng = random.Random(seed)
    strata: dict[tuple[str, Any], list[Pair]] = defaultdict(list)
    for pair in pairs:
        strata[(pair.qid, pair.label)].append(pair)
    groups = [strata[key] for key in sorted(strata, key=str)]
    for group in groups:
        rng.shuffle(group)
    rng.shuffle(groups)
    chosen: list[Pair] = []
    depth = 0
    while len(chosen) < n:
        for group in groups:
            if depth < len(group) and len(chosen) < n:
                chosen.append(group[depth])
        depth += 1
    return chosen


@dataclass(frozen=True)
class PilotReport:
    """What the pilot measured and what it projects for the pairs after it.

    Per-pair figures are ``Range(low, mean, high)`` with a 95 % bootstrap interval;
    projections are for ``remaining`` pairs.
    """

    pairs: int
    remaining: int
    per_pair: dict[str, Range]
    projected: dict[str, Range]
    latency_s: float
    bacc: Range | None = None
    kappa: Range | None = None
    notes: list[str] = field(default_factory=list)
    cache_hits: int = 0
    """The pilot's calls the response cache answered (counted as calls all the same)."""
    scored: int = 0
    """Pilot pairs with a gold label: the n of ``bacc`` and ``kappa``."""

    def to_json(self) -> dict[str, Any]:
        """Plain dict for ``--json`` and the store."""
        return {
            "pairs": self.pairs, "remaining": self.remaining, "latency_s": self.latency_s,
            "cache_hits": self.cache_hits, "scored": self.scored,
            "per_pair": {k: v.to_json() for k, v in self.per_pair.items()},
            "projected": {k: v.to_json() for k, v in self.projected.items()},
            "bacc": self.bacc.to_json() if self.bacc else None,
            "kappa": self.kappa.to_json() if self.kappa else None, "notes": self.notes,
        }  # fmt: skip

    def missed(self, gate: PilotGate) -> str:
        """What the pilot missed of ``gate``, as one line ("" when it met every condition)."""
        if gate.min_kappa is not None:
            if self.kappa is None:
                return "--min-kappa needs gold labels in the input"
            if self.scored < MIN_PAIRS:
                return (f"pilot kappa over {self.scored} gold-labelled pairs: too few to check "
                        f"--min-kappa {gate.min_kappa:g} (a pilot of {MIN_PAIRS} or more)")  # fmt: skip
            if math.isnan(self.kappa.expected):
                return (f"pilot kappa is undefined over its {self.scored} pairs (one label only): "
                        f"--min-kappa {gate.min_kappa:g} cannot be checked")  # fmt: skip
            if self.kappa.expected < gate.min_kappa:
                return (
                    f"pilot kappa {self.kappa.expected:.2f} (95% {self.kappa.low:.2f}-"
                    f"{self.kappa.high:.2f}) is below --min-kappa {gate.min_kappa:g}"
                )
        rate = self.per_pair["escalations"].expected
        if gate.max_escalation is not None and rate > gate.max_escalation:
            return f"pilot escalation rate {rate:.1%} is above --max-escalation {gate.max_escalation:g}"
        return ""


FIGURES = ("calls", "prompt_tokens", "completion_tokens", "cached_prompt_tokens",
           "retries", "parse_failures", "escalations", "cost")  # fmt: skip


def measure(
    results: Sequence[tuple[Pair, Judgment]],
    remaining: int,
    price: Price,
    in_flight: InFlight,
    parallel: int,
    per_round: int = 1,
) -> PilotReport:
    """Measure the pilot's judgments and project ``remaining`` pairs (bootstrap intervals).

    A pair's calls and tokens are what it needed, answered by the server or by the
    response cache (the rest of the job will not find its answers there). Wall time is what
    the main run will pay (:func:`~docket.jobs.bill.figures.run_seconds`): its own
    start-up once, the projected calls at the measured latency of the server's answers
    through the runner's ramp (``in_flight``, ``parallel``), the pairs' rounds one after
    another (``per_round``: calls in one round of a pair) and docket's own time per call.
    The pilot's own pace is not projected: its start-up, and its few pairs that could not
    fill the calls in flight, would be charged again for every pair of the rest.
    """
    rows = [_row(judgment, price) for _, judgment in results]
    rng = np.random.default_rng(SEED)
    index = rng.integers(0, len(rows), size=(BOOTSTRAP, len(rows))) if rows else None
    per_pair = {name: _interval([r[name] for r in rows], index) for name in FIGURES}
    live = sum(r["calls"] - r["cache_hits"] for r in rows)
    hits = int(sum(r["cache_hits"] for r in rows))
    latency = sum(r["latency_s"] for r in rows) / live if live else 0.0
    projected = {name: _scale(per_pair[name], remaining) for name in FIGURES}
    projected["wall_s"] = run_range(
        projected["calls"], latency, in_flight, parallel, remaining, per_round
    )
    bacc, kappa, scored = _quality(results, index)
    notes = [f"pilot of {len(rows)} pairs; intervals: 95% bootstrap over its pairs",
             f"wall time: {latency:.2f} s a call; {in_flight.source}"]  # fmt: skip
    if hits:
        total = int(sum(r["calls"] for r in rows))
        notes.append(f"{hits} of the pilot's {total} calls came from the response cache; "
                     "they count as the calls and tokens their pairs needed")  # fmt: skip
    if not live:
        notes.append("no call reached the server: no latency measured, no wall time")
    if bacc is None:
        notes.append("no gold labels: no bAcc or kappa")
    return PilotReport(len(rows), remaining, per_pair, projected, latency, bacc, kappa, notes,
                       cache_hits=hits, scored=scored)  # fmt: skip


def _row(judgment: Judgment, price: Price) -> dict[str, float]:
    usage = judgment.usage or {}
    hits = float(usage.get("cache_hits", 0))
    row = {name: float(usage.get(name, 0)) for name in FIGURES[:5]}
    row["calls"] += hits
    row["prompt_tokens"] += float(usage.get("cache_hit_prompt_tokens", 0))
    row["completion_tokens"] += float(usage.get("cache_hit_completion_tokens", 0))
    row["cache_hits"] = hits
    row["parse_failures"] = float(judgment.parse_failures)
    row["escalations"] = float(judgment.decided_by == "escalated")
    row["latency_s"] = float(usage.get("latency_s", 0.0))
    row["cost"] = price.cost(row["prompt_tokens"], row["cached_prompt_tokens"],
                             row["completion_tokens"])  # fmt: skip
    return row


def _interval(values: list[float], index: np.ndarray | None) -> Range:
    if not values or index is None:
        return Range(0.0, 0.0, 0.0)
    data = np.asarray(values, dtype=float)
    means = data[index].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return Range(float(low), float(data.mean()), float(high))


def _scale(per_pair: Range, factor: float) -> Range:
    return Range(*(v * factor for v in per_pair))


def _quality(
    results: Sequence[tuple[Pair, Judgment]], index: np.ndarray | None
) -> tuple[Range | None, Range | None, int]:
    """bAcc and kappa of the pilot's labels against gold, and how many pairs have gold."""
    scored = [(p.label, j.label) for p, j in results if p.label is not None]
    if not scored or index is None:
        return None, None, 0
    # An escalated pair has no label yet: it counts as a miss (-1 matches no class).
    gold = [g for g, _ in scored]
    pred = [-1 if label is None else label for _, label in scored]
    keep = [i for i, (p, _) in enumerate(results) if p.label is not None]
    position = {original: k for k, original in enumerate(keep)}
    return (_stat(gold, pred, balanced_accuracy, index, position),
            _stat(gold, pred, cohen_kappa, index, position), len(scored))  # fmt: skip


def _stat(gold: list[int], pred: list[int], fn: Callable[..., float], index: np.ndarray,
          position: dict[int, int]) -> Range:  # fmt: skip
    point = fn(gold, pred)
    samples = []
    for draw in index:
        picked = [position[i] for i in draw if i in position]
        value = fn([gold[k] for k in picked], [pred[k] for k in picked]) if picked else math.nan
        if not math.isnan(value):
            samples.append(value)
    if not samples:
        return Range(point, point, point)
    low, high = np.percentile(samples, [2.5, 97.5])
    return Range(float(low), float(point), float(high))
