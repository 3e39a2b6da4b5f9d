"""Counting the prompt tokens of requests without any LLM call, and saying how they were counted.

- ``local`` (and other GGUF models): the model's own tokenizer on the prompt rendered with
  its chat template, exactly what :class:`~docket.llm.local.LocalProvider` sends;
- a served model whose server answers ``POST /tokenize`` (llama.cpp's server and vLLM do):
  the server's count;
- anything else: an estimate (characters / 4), stated as one.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from docket.llm.provider import create_provider
from docket.llm.types import Message

log = logging.getLogger(__name__)
CHARS_PER_TOKEN = 4.0
"""The estimate's ratio (English text, BPE tokenizers); the pilot measures the real one."""
TOKENIZE_TIMEOUT_S = 5.0

Count = Callable[[Sequence[Message]], int]


@dataclass(frozen=True)
class TokenCounter:
    """``count(messages)`` gives prompt tokens; ``source`` says how (for the plan's note)."""

    count: Count
    source: str
    exact: bool


def estimate(messages: Sequence[Message]) -> int:
    """Characters / 4 plus a few tokens of chat framing per message."""
    return sum(int(len(m.content) / CHARS_PER_TOKEN) + 4 for m in messages)


ESTIMATE = TokenCounter(estimate, "estimate: characters / 4 (no tokenizer reachable)", False)


def token_counter(model: str, probe: bool = True) -> TokenCounter:
    """The best counter for ``model``: its own tokenizer, its server's, or the estimate.

    ``probe=False`` does not ask a server (a run's own plan: no request but the job's).
    """
    try:
        provider = create_provider(model)
    except Exception as exc:  # noqa: BLE001 - an unusable model is reported by the run itself
        log.debug("no tokenizer for %s: %s", model, exc)
        return ESTIMATE
    if provider.has_tokenizer:
        return TokenCounter(provider.count_prompt_tokens, f"{provider.name}'s own tokenizer", True)
    base = provider.base_url
    if base and probe:
        served = _served_counter(base, provider.model)
        if served is not None:
            return served
    return ESTIMATE


def _served_counter(base_url: str, model: str) -> TokenCounter | None:
    """A counter over the server's ``/tokenize``, if it answers one probe."""
    root = base_url.rstrip("/")
    root = root[: -len("/v1")] if root.endswith("/v1") else root
    url = f"{root}/tokenize"

    def count(messages: Sequence[Message]) -> int:
        # Both servers take plain text in ``content`` (llama.cpp) or ``prompt`` (vLLM).
        text = "\n".join(m.content for m in messages)
        reply = _post(url, {"content": text, "prompt": text, "model": model})
        tokens = reply.get("count", None)
        return int(tokens) if tokens is not None else len(reply["tokens"])

    try:
        count((Message("user", "probe"),))
    except (OSError, ValueError, KeyError, TypeError, urllib.error.URLError) as exc:
        log.debug("%s does not tokenize: %s", url, exc)
        return None
    return TokenCounter(count, f"the server's {url}", True)


def _post(url: str, body: dict[str, object]) -> dict[str, object]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=TOKENIZE_TIMEOUT_S) as response:  # noqa: S310
        reply = json.loads(response.read())
    if not isinstance(reply, dict):
        raise ValueError("not a JSON object")
    return reply
