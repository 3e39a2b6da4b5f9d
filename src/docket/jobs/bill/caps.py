"""Spend caps that stop a job cleanly before it passes them, counted in the store.

A :class:`CapGate` holds a pair's worst case (from a dry run of the pair: its calls, their
tokens and cost at full ``max_tokens``, one escalation) in the job's spend row before the
pair starts, so a pair starts only if it can finish; it is then the gate of every model
call (:class:`~docket.llm.model.CallGate`), which spends from that hold, or from the row
when retries or re-asks go past it, and returns what a call did not use. The row is taken
from with one conditional UPDATE (:func:`docket.store.spend.take`), so processes sharing a
job and its cap can never pass it together. When a take fails nothing more starts; calls
in flight finish and their pairs are saved; a rerun with a higher cap resumes.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from docket.errors import CapReachedError, ConfigError
from docket.jobs.bill.dry import DryRunner
from docket.jobs.bill.figures import PlanInputs
from docket.jobs.bill.live import LiveSpend
from docket.llm.types import Completion, Request
from docket.llm.usage import Price
from docket.relevance import Judge, JudgeOptions
from docket.relevance.types import Judgment, Pair, complete_judge
from docket.store import Store
from docket.store.spend import DIMENSIONS, ensure_spend, give, spend_of, take

FLAGS = {"calls": "--max-calls", "tokens": "--max-tokens", "cost": "--max-cost",
         "escalations": "--max-escalations"}  # fmt: skip
Delta = dict[str, float]
WAIT_S = 0.02
"""How often a pair that does not fit looks again while other pairs are in flight."""


@dataclass(frozen=True)
class Caps:
    """A job's caps; None: no cap. Checked on creation (a cap must be > 0)."""

    cost: float | None = None
    calls: int | None = None
    tokens: int | None = None
    escalations: int | None = None

    def __post_init__(self) -> None:
        for name in DIMENSIONS:
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ConfigError(
                    f"{FLAGS[name]} {value}: a cap must be greater than 0",
                    hint=f"e.g. {FLAGS[name]} 100, or leave it out for no cap",
                )

    @property
    def any(self) -> bool:
        """True when at least one cap is set."""
        return any(getattr(self, n) is not None for n in DIMENSIONS)

    def limits(self) -> dict[str, float | None]:
        """``{dimension: cap}``."""
        return {n: getattr(self, n) for n in DIMENSIONS}


@dataclass(frozen=True)
class Bill:
    """What a job may spend and how it is priced and tracked (the spec's ``bill``).

    Attributes:
        caps: the spend caps (none by default).
        price: the main model's price (None: docket.toml, then the dated table, then 0).
        inputs: prices, latency, review seconds and rates for plans (:class:`PlanInputs`).
        track: plan the run at its start (kept with the job), for planned against actual.
        live: a :class:`~docket.jobs.bill.live.LiveSpend` the run fills, for progress displays.
    """

    caps: Caps = field(default_factory=Caps)
    price: Price | None = None
    inputs: PlanInputs = field(default_factory=PlanInputs)
    track: bool = False
    live: LiveSpend | None = None


def worst_tokens(request: Request) -> int:
    """An upper bound on a call's tokens: a token is at least one byte, plus full output."""
    framing = 8 * len(request.messages)
    return sum(len(m.content.encode()) for m in request.messages) + framing + request.max_tokens


@dataclass
class Hold:
    """What one pair still holds of the job's spend row."""

    left: Delta = field(default_factory=dict)


_PAIR: contextvars.ContextVar[Hold | None] = contextvars.ContextVar(
    "docket_pair_hold", default=None
)


class CapGate:
    """The caps of one job in one process: pair holds and the per-call gate."""

    def __init__(self, store: Store, job: str, caps: Caps, price: Price, options: JudgeOptions,
                 model: str) -> None:  # fmt: skip
        self.store, self.job, self.caps, self.price = store, job, caps, price
        self.options, self.model = options, model
        self.stopped = ""
        self.in_flight = 0
        self.waiting: dict[int, int] = {}
        """Started pairs (by their hold) with calls waiting for room past the hold."""
        with store.session() as session:
            ensure_spend(session, job)

    def spent(self) -> dict[str, float]:
        """The job's spend row now (all processes; holds of pairs in flight included)."""
        with self.store.read_session() as session:
            return spend_of(session, self.job)

    def _take(self, delta: Delta) -> bool:
        with self.store.session() as session:
            return take(session, self.job, delta, self.caps.limits())

    def _stop(self, delta: Delta) -> CapReachedError:
        if not self.stopped:
            self.stopped = self._reason(delta)
        return CapReachedError(self.stopped)

    def _give(self, delta: Delta) -> None:
        if any(delta.values()):
            with self.store.session() as session:
                give(session, self.job, delta)

    def _reason(self, delta: Delta) -> str:
        spent = self.spent()
        for name, cap in self.caps.limits().items():
            need = delta.get(name, 0)
            if cap is not None and spent[name] + need > cap:
                left = max(0, cap - spent[name])
                return (f"{FLAGS[name]} {cap:g}: {spent[name]:,.4g} spent, {left:,.4g} left, "
                        f"the next pair or call may need up to {need:,.4g}")  # fmt: skip
        return "a spend cap"

    async def worst_of_pair(self, pair: Pair) -> tuple[Delta, Delta]:
        """The pair's most calls (a dry run), their worst tokens and cost, one escalation;
        and the same with one more call (its costliest), a spare for a retry or a re-ask."""
        # A runner per pair: pairs run concurrently, and a runner's record is one pair's.
        requests = [r for _, r in (await DryRunner(self.options, self.model).run(pair)).most]
        calls = [self._worst(r) for r in requests]
        spare = [max(calls, key=lambda d: d["tokens"])] if calls else []
        return self._sum(calls, escalations=1), self._sum(calls + spare, escalations=1)

    def _worst(self, request: Request) -> Delta:
        tokens = worst_tokens(request)
        prompt = tokens - request.max_tokens
        return {"calls": 1, "tokens": tokens,
                "cost": self.price.cost(prompt, 0, request.max_tokens)}  # fmt: skip

    @staticmethod
    def _sum(deltas: list[Delta], escalations: int = 0) -> Delta:
        total = {n: 0.0 for n in DIMENSIONS}
        for delta in deltas:
            for name, value in delta.items():
                total[name] += value
        total["escalations"] = escalations
        return total

    # -- the pair guard ------------------------------------------------------------------
    async def start_pair(self, pair: Pair) -> Hold:
        """Hold the pair's worst case; raises CapReachedError if a cap would pass.

        The hold has a spare call, so a pair that needs a retry (a server error) or a
        re-ask finishes within its own hold instead of being stopped half-way at the cap;
        pairs that do not use it give it back when they end, for the pairs still in
        flight. Only a pair that would run alone starts without it, if that is all that fits.
        """
        worst, spared = await self.worst_of_pair(pair)
        # Pairs in flight hold their worst case and give most of it back: wait for them
        # before deciding that this pair does not fit.
        while not self.stopped:
            # Without its spare only when it would start alone: the job's last pair.
            for held in (spared, worst) if not self.in_flight else (spared,):
                if self._take(held):
                    self.in_flight += 1
                    return Hold(dict(held))
            if not self.in_flight:
                raise self._stop(worst)
            await asyncio.sleep(WAIT_S)
        raise CapReachedError(self.stopped)

    def end_pair(self, hold: Hold, judgment: Judgment | None) -> None:
        """Return what the pair did not use (its escalation, if it did not escalate)."""
        self.in_flight -= 1
        left = dict(hold.left)
        if judgment is not None and judgment.decided_by == "escalated":
            left["escalations"] = left.get("escalations", 0) - 1
        self._give({k: -v for k, v in left.items()})

    def charge(self, completions: list[Completion]) -> None:
        """Count calls answered before the caps were set (a method's check of its model).

        Each attempt counts as a call, the retried ones too, as the gate counts its own.
        """
        if completions:
            self._give({"calls": sum(1 + c.retries for c in completions),
                        "tokens": sum(c.prompt_tokens + c.completion_tokens for c in completions),
                        "cost": sum(self.price.cost(c.prompt_tokens, c.cached_prompt_tokens,
                                                    c.completion_tokens) for c in completions)})  # fmt: skip

    # -- a batch step's escalations ---------------------------------------------------------
    def escalations_left(self) -> float | None:
        """Escalations the cap still allows (None: no escalation cap)."""
        cap = self.caps.escalations
        return None if cap is None else max(0.0, cap - self.spent()["escalations"])

    def count_escalations(self, count: int) -> None:
        """Count a batch step's new escalations in the job's spend row."""
        self._give({"escalations": count})

    def stop_escalating(self, method: str, wanted: int, left: int) -> None:
        """Say that the cap held a batch step's escalations back (the run is stopped)."""
        self.stopped = self.stopped or (
            f"--max-escalations {self.caps.escalations:g}: {method} would escalate {wanted} "
            f"more pairs and {left} were left; the {left} it would send first were escalated, "
            "the others keep the model's label"
        )

    # -- the call gate (docket.llm.model.CallGate) ---------------------------------------
    async def before(self, request: Request) -> Any:
        """Spend a call's worst case from the pair's hold, else from the row (or refuse).

        A started pair's call past its hold (more retries than its spare) waits while
        other pairs are in flight: they give back what they did not use when they end. It
        is refused only when every pair in flight waits too (none will give anything back).
        """
        need = self._worst(request)
        hold = _PAIR.get()
        if hold is not None and all(hold.left.get(k, 0) >= v for k, v in need.items()):
            for name, value in need.items():
                hold.left[name] -= value
            return (need, hold)
        if hold is not None:
            self.waiting[id(hold)] = self.waiting.get(id(hold), 0) + 1
        try:
            while not self._take(need):
                if hold is None or len(self.waiting) >= self.in_flight:
                    raise self._stop(need)
                await asyncio.sleep(WAIT_S)
        finally:
            if hold is not None:
                self.waiting[id(hold)] -= 1
                if not self.waiting[id(hold)]:
                    del self.waiting[id(hold)]
        return (need, None)

    def after(self, ticket: Any, completion: Completion | None) -> None:
        """Give back what the call did not use (a failed attempt keeps its worst case: billed)."""
        need, hold = ticket
        used = dict(need)
        if completion is not None:
            used["tokens"] = completion.prompt_tokens + completion.completion_tokens
            used["cost"] = self.price.cost(completion.prompt_tokens,
                                           completion.cached_prompt_tokens,
                                           completion.completion_tokens)  # fmt: skip
        back = {k: need[k] - used[k] for k in need if need[k] > used[k]}
        if hold is not None:
            for name, value in back.items():
                hold.left[name] += value
        else:
            self._give({k: -v for k, v in back.items()})


def until_stopped(pairs: Iterable[Pair], caps: CapGate) -> Iterator[Pair]:
    """``pairs`` until the caps stops (the rest are not read, claimed or judged)."""
    for pair in pairs:
        if caps.stopped:
            return
        yield pair


class CappedJudge:
    """A judge whose pairs start only within the caps (see :class:`CapGate`)."""

    def __init__(self, judge: Judge, caps: CapGate) -> None:
        self.inner, self.caps = complete_judge(judge), caps
        self.method = judge.method
        self.batch_step = self.inner.batch_step

    async def judge(self, pair: Pair) -> Judgment:
        """Hold the pair's worst case, judge it, return the unused hold."""
        hold = await self.caps.start_pair(pair)
        token = _PAIR.set(hold)
        judgment = None
        try:
            judgment = await self.inner.judge(pair)
            return judgment
        finally:
            _PAIR.reset(token)
            self.caps.end_pair(hold, judgment)

    def finalize(
        self, judgments: list[Judgment], most_escalations: int | None = None
    ) -> list[Judgment]:
        """The inner judge's batch step, its escalations passed through the cap.

        A batch step that escalates (LARA's human share) counts its new escalations in the
        job's spend; past ``--max-escalations`` it escalates only what the cap leaves (the
        pairs it would send first) and the run stops with the cap named.
        """
        before = _escalated(judgments)
        after = self.inner.finalize(judgments, most_escalations)
        new = len(_escalated(after) - before)
        left = self.caps.escalations_left()
        if left is None or new <= left:
            self.caps.count_escalations(new)
            return after
        trimmed = self.inner.finalize(judgments, len(before) + int(left))
        self.caps.count_escalations(len(_escalated(trimmed) - before))
        self.caps.stop_escalating(self.method, new, int(left))
        return trimmed


def _escalated(judgments: list[Judgment]) -> set[tuple[str, str]]:
    return {(j.qid, j.docid) for j in judgments if j.decided_by == "escalated"}
