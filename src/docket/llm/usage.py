"""Token, call, latency and cost accounting."""

from __future__ import annotations

from dataclasses import dataclass

from docket.llm.types import Completion


@dataclass(frozen=True)
class Price:
    """USD per million tokens: fresh input, cached (prefix) input, output."""

    input: float
    cached_input: float
    output: float

    def cost(self, prompt: float, cached: float, completion: float) -> float:
        """Dollars for ``prompt`` input tokens (of which ``cached`` hit a prefix cache)."""
        fresh = max(0.0, prompt - cached)
        return (fresh * self.input + cached * self.cached_input + completion * self.output) / 1e6


PRICES_DATE = "2025-06-01"
"""When :data:`DEFAULT_PRICES` were copied from the providers' price pages."""
DEFAULT_PRICES: dict[str, Price] = {
    "openai:gpt-4o-mini": Price(0.15, 0.075, 0.60),
    "openai:gpt-4o": Price(2.50, 1.25, 10.00),
    "openai:gpt-4.1-mini": Price(0.40, 0.10, 1.60),
    "openai:gpt-4.1": Price(2.00, 0.50, 8.00),
}
"""A small dated table of well-known API models; ``[docket.prices]`` or flags override it.
``local`` and unknown served models cost 0."""


@dataclass
class Usage:
    """Counters for one Model (or one judgment, when summed per item)."""

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0
    retries: int = 0
    parse_failures: int = 0
    failures: int = 0
    replayed: int = 0
    """Calls answered from the job's call journal, paid before this run. A pair's usage
    counts them among its ``calls`` (the job paid them); a run's does not (the run that
    paid them counted them), so the job's spend counts each call once."""

    def add_completion(self, model_name: str, completion: Completion) -> None:
        """Count one answered call for a pair (a cache hit counts as a hit, not a call).

        A call replayed from the job's journal counts as a call, with its tokens and cost:
        the job paid for it, in the run that made it.
        """
        if completion.cached:
            self.cache_hits += 1
            return
        self.replayed += completion.replayed
        self.calls += 1
        self.retries += completion.retries
        self.prompt_tokens += completion.prompt_tokens
        self.completion_tokens += completion.completion_tokens
        self.cached_prompt_tokens += completion.cached_prompt_tokens
        self.latency_s += completion.latency_s
        self.cost_usd += cost_of(model_name, completion)

    def merge(self, other: Usage) -> None:
        """Add another Usage into this one."""
        for key, value in vars(other).items():
            setattr(self, key, getattr(self, key) + value)

    @property
    def requests(self) -> int:
        """HTTP requests the server saw: each answered call, each retry, each failed call."""
        return self.calls + self.retries + self.failures

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def to_json(self) -> dict[str, float | int]:
        """Plain dict for records and reports."""
        return dict(vars(self))  # asdict's deep copy costs more than the rest of a call


def cost_of(model_name: str, completion: Completion, price: Price | None = None) -> float:
    """Dollar cost of one completion at ``price`` (default: the dated table; 0 if unknown)."""
    price = price or DEFAULT_PRICES.get(model_name)
    if price is None:
        return 0.0
    return price.cost(
        completion.prompt_tokens, completion.cached_prompt_tokens, completion.completion_tokens
    )
