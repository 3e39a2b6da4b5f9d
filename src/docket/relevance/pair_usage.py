"""Per-pair accounting shared by the relevance methods.

Usage is summed from the completions each pair's calls returned, never read from
``Model.usage``, which is global to the model and shared by concurrent pairs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from docket.llm.model import Parsed
from docket.llm.types import Completion
from docket.llm.usage import Usage


def usage_of(
    model_name: str,
    completions: Iterable[Completion],
    parse_failures: int = 0,
    failed_attempts: Iterable[int] = (),
) -> dict:
    """Calls, cache hits, tokens, latency and cost of ``completions`` as a plain dict.

    As in :class:`Usage`, a cache hit counts as a hit, not a call, and adds no tokens;
    ``cache_hit_tokens`` keeps the tokens such answers once cost (and
    ``cache_hit_prompt_tokens`` / ``cache_hit_completion_tokens`` split them), so a method's
    size per pair can be reported, and a pilot projected, whether or not its answers came
    from the cache. Each call that
    got no answer (``failed_attempts``: its HTTP requests) counts as one failure and its
    retries, as ``Model.usage`` counts it, so stored usage adds up to what the server saw.
    """
    usage = Usage(parse_failures=parse_failures)
    for attempts in failed_attempts:
        usage.failures += 1
        usage.retries += attempts - 1
    hit_prompt = hit_completion = 0
    for completion in completions:
        usage.add_completion(model_name, completion)
        if completion.cached:
            hit_prompt += completion.prompt_tokens
            hit_completion += completion.completion_tokens
    return {**usage.to_json(), "cache_hit_tokens": hit_prompt + hit_completion,
            "cache_hit_prompt_tokens": hit_prompt,
            "cache_hit_completion_tokens": hit_completion}  # fmt: skip


def sum_usage(usages: Iterable[Mapping[str, Any]]) -> dict:
    """Add usage dicts field by field (missing fields count as 0)."""
    total = Usage().to_json()
    for usage in usages:
        for key, value in usage.items():
            total[key] = total.get(key, 0) + value
    return total


def failures_of(parsed: Parsed[Any]) -> int:
    """How many replies of a structured call failed to parse (0, 1 or 2)."""
    return len(parsed.raw) - (1 if parsed.ok else 0)


def parsed_usage(model_name: str, parsed: Parsed[Any]) -> dict:
    """Usage of one structured call, including its parse failures."""
    return usage_of(model_name, parsed.completions, failures_of(parsed), parsed.failed_attempts)
