"""Values exchanged between engines, the Model wrapper and providers."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: Role
    content: str


@dataclass(frozen=True)
class Request:
    """Everything that determines a model's output for one call.

    Attributes:
        messages: the chat, shared prefix first so serving engines can cache it.
        max_tokens: cap on generated tokens.
        temperature: sampling temperature; 0 means greedy.
        stop: stop strings.
        json_schema: ask for JSON matching this schema where the provider supports it.
        top_logprobs: return this many alternatives per generated token (0 = none).
        seed: sampling seed where supported.
    """

    messages: tuple[Message, ...]
    max_tokens: int = 256
    temperature: float = 0.0
    stop: tuple[str, ...] = ()
    json_schema: dict[str, Any] | None = None
    top_logprobs: int = 0
    seed: int | None = None

    def cache_key(self, model_name: str) -> str:
        """Hash of canonical JSON of the model and every output-changing parameter."""
        payload = {"model": model_name, **asdict(self)}
        canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(canonical.encode()).hexdigest()

    @property
    def prompt_text(self) -> str:
        """All message contents joined; used for rough token estimates and prefix stats."""
        return "\n".join(m.content for m in self.messages)


class RequestKey:
    """The cache key of a request to a model, computed when first read (``str(key)``).

    Hashing the canonical request costs about half a millisecond: a call that no keeper
    looks up (no response cache, a pair with nothing to replay) never pays it.
    """

    __slots__ = ("_model", "_request", "_value")

    def __init__(self, request: Request, model_name: str) -> None:
        self._request, self._model, self._value = request, model_name, ""

    def __str__(self) -> str:
        if not self._value:
            self._value = self._request.cache_key(self._model)
        return self._value


@dataclass(frozen=True)
class TokenLogprob:
    """A generated token with its log-probability and the top alternatives."""

    token: str
    logprob: float
    top: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Completion:
    """A provider's answer to one request."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    logprobs: tuple[TokenLogprob, ...] = ()
    finish_reason: str = "stop"
    latency_s: float = 0.0
    cached: bool = False
    """Answered from the response cache (or kept as such): nobody paid for it."""
    retries: int = 0
    """Transient failures retried before this answer came (0 for a cache hit)."""
    replayed: bool = False
    """Answered from the job's call journal: paid by this job before this run (an earlier,
    stopped run, or a method's check of its model), so it costs the run nothing again."""

    def to_json(self) -> dict[str, Any]:
        """Serialise for the response cache and judgment records."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Completion:
        """Inverse of :meth:`to_json`."""
        logprobs = tuple(TokenLogprob(**lp) for lp in data.get("logprobs", ()))
        return cls(**{**data, "logprobs": logprobs})


def user(content: str) -> Message:
    """Shorthand for a user message."""
    return Message("user", content)


def system(content: str) -> Message:
    """Shorthand for a system message."""
    return Message("system", content)
