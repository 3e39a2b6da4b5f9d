"""A dry run of a judge: the method's own code builds every request, and no LLM is called.

A :class:`DryPool` stands in for the :class:`~docket.llm.pool.ModelPool`: each model it
gives answers at once with a typical, parseable reply and records the request. In the
``agree`` scenario every agent gives the same label (a debate ends in round 1); in
``disagree`` the labels alternate (every round runs, the pair escalates). The recorded
requests are the real prompts, so their tokens can be counted exactly.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from docket.llm.cache import journaled
from docket.llm.model import Model
from docket.llm.provider import ProviderDefaults
from docket.llm.types import Completion, Request, TokenLogprob
from docket.relevance import Judge, JudgeOptions, build_judge, prompts
from docket.relevance.types import Pair

Scenario = Literal["agree", "disagree"]
REASONING = (
    "Sentence S1 states the fact the query asks about, and the other sentences give its "
    "context; the other side's reading does not change what the chunk says."
)
"""A reply's reasoning of typical length (two sentences, as the prompts ask for)."""


def typical_reply(request: Request, label: int) -> str:
    """A parseable reply of typical length for ``request``'s reply format."""
    if request.json_schema is None:
        return "Yes" if label else "No"
    if request.json_schema is prompts.GRADE_SCHEMA:
        return json.dumps({"grade": 2 + label, "evidence": ["S1"], "reasoning": REASONING})
    word = "relevant" if label else "irrelevant"
    return json.dumps({"label": word, "evidence": ["S1"], "reasoning": REASONING})


@dataclass
class DryProvider(ProviderDefaults):
    """Answers at once without a model; records every request it is sent."""

    name: str
    scenario: Scenario
    requests: list[Request] = field(default_factory=list)
    counter: list[int] = field(default_factory=lambda: [0])
    """Calls so far, shared by a pool's providers so agents on other models alternate too."""
    max_concurrency: int = 1 << 16
    supports_json_schema: bool = True
    supports_logprobs: bool = True

    async def generate(self, request: Request) -> Completion:
        """The typical reply; labels alternate per call in the ``disagree`` scenario."""
        label = 1 if self.scenario == "agree" else self.counter[0] % 2
        self.counter[0] += 1
        self.requests.append(request)
        text = typical_reply(request, label)
        top = {"Yes": -0.1, "No": -2.4} if label else {"No": -0.1, "Yes": -2.4}
        logprobs = (TokenLogprob(text, -0.1, top),) if request.top_logprobs else ()
        return Completion(text=text, logprobs=logprobs)


class DryPool:
    """``pool(name)`` like a ModelPool, with :class:`DryProvider` models (no cache, no retry)."""

    def __init__(self, main: str, scenario: Scenario) -> None:
        self.main = main
        self.scenario = scenario
        self.providers: dict[str, DryProvider] = {}
        self.counter = [0]

    def __call__(self, name: str | None = None) -> Model:
        key = name or self.main
        if key not in self.providers:
            self.providers[key] = DryProvider(key, self.scenario, counter=self.counter)
        return Model(self.providers[key])

    def take(self) -> list[tuple[str, Request]]:
        """``(model, request)`` recorded since the last take, and forget them."""
        taken = [(n, r) for n, p in self.providers.items() for r in p.requests]
        for provider in self.providers.values():
            provider.requests = []
        return taken


@dataclass(frozen=True)
class DryPair:
    """The requests one pair would send in the best and the worst case."""

    fewest: list[tuple[str, Request]]
    most: list[tuple[str, Request]]


class DryRunner:
    """Dry-runs pairs with one pair of stand-in judges (reused: building judges costs)."""

    def __init__(self, options: JudgeOptions, model: str) -> None:
        self.pools = {s: DryPool(model, s) for s in ("agree", "disagree")}
        self.judges: dict[str, Judge] = {s: build_judge(options, p) for s, p in self.pools.items()}

    async def run(self, pair: Pair) -> DryPair:
        """The pair's requests when all agree and when none agree."""
        # Stand-in replies are never answers: kept out of the pair's call journal (a pair
        # under a budget cap is dry-run inside its own judging).
        with journaled(None):
            await self.judges["agree"].judge(pair)
            fewest = self.pools["agree"].take()
            await self.judges["disagree"].judge(pair)
        return DryPair(fewest, self.pools["disagree"].take())


def dry_run(options: JudgeOptions, model: str, pairs: Iterable[Pair]) -> list[DryPair]:
    """Each pair's requests when all agree and when none agree, with no LLM call."""
    runner = DryRunner(options, model)

    async def every() -> list[DryPair]:
        return [await runner.run(pair) for pair in pairs]

    return asyncio.run(every())
