"""Token, call, latency and cost accounting."""

from __future__ import annotations

from dataclasses import dataclass

from docket.llm.types import Completion

# USD per million tokens (prompt, completion) for names we know; unknown models cost 0.
PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "openai:gpt-4o-mini": (0.15, 0.60),
    "openai:gpt-4o": (2.50, 10.00),
    "openai:gpt-4.1-mini": (0.40, 1.60),
}


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

    def add_completion(self, model_name: str, completion: Completion) -> None:
        """Count one answered call (a cache hit counts as a hit, not a call)."""
        if completion.cached:
            self.cache_hits += 1
            return
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


def cost_of(model_name: str, completion: Completion) -> float:
    """Dollar cost of one completion, 0 for local or unknown models."""
    prompt_price, completion_price = PRICES_PER_MTOK.get(model_name, (0.0, 0.0))
    return (
        completion.prompt_tokens * prompt_price + completion.completion_tokens * completion_price
    ) / 1e6
