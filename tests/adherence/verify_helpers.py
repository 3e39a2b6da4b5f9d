"""Shared pieces of the verifier, API and page tests: a small rule set and fake models."""

from __future__ import annotations

import re

from docket.adherence.record import Record, Turn
from docket.adherence.rules import RuleSet
from docket.llm import Completion, Model, Request, RetryPolicy
from docket.llm.fake import FakeProvider, slow_fake
from docket.llm.provider import register_provider

NO_RETRY = RetryPolicy(max_retries=0)

RULES = {
    "name": "test-dialogue",
    "rules": [
        {
            "id": "F1",
            "text": "Each turn has at most 12 words.",
            "tier": "fmt",
            "scope": {"kind": "each_turn"},
            "check": {"checker": "word_count", "params": {"max": 12}},
        },
        {
            "id": "F2",
            "text": "No turn contains a URL.",
            "tier": "fmt",
            "scope": {"kind": "each_turn"},
            "check": {"checker": "urls", "params": {"present": False}},
        },
        {
            "id": "F3",
            "text": "User and assistant alternate, user first.",
            "tier": "fmt",
            "scope": {"kind": "record"},
            "check": {"checker": "role_alternation", "params": {"first_role": "user"}},
        },
        {
            "id": "S1",
            "text": "The assistant does not call itself a bot.",
            "tier": "sim",
            "scope": {"kind": "role", "role": "assistant"},
        },
        {
            "id": "S2",
            "text": "No turn mentions a competitor.",
            "tier": "sim",
            "scope": {"kind": "each_turn"},
        },
        {
            "id": "U1",
            "text": "The assistant's tone is polite.",
            "tier": "sub",
            "scope": {"kind": "role", "role": "assistant"},
        },
        {
            "id": "U2",
            "text": "The dialogue as a whole is natural.",
            "tier": "sub",
            "scope": {"kind": "record"},
        },
    ],
}


def ruleset(rules: list[dict] | None = None) -> RuleSet:
    """The test rule set (or a subset / variant)."""
    return RuleSet.model_validate({"name": RULES["name"], "rules": rules or RULES["rules"]})


def record(*turns: tuple[str, str], record_id: str = "d1") -> Record:
    """A record from (role, text) pairs."""
    return Record(id=record_id, turns=[Turn(role=r, text=t) for r, t in turns])


def asked_rule(request: Request) -> str:
    """The id of the rule a per-rule prompt asks about."""
    match = re.search(r"Rule to check: \[([^\]]+)\]", request.prompt_text)
    assert match, "not a per-rule prompt"
    return match.group(1)


SLOW: dict[str, FakeProvider] = {}
register_provider("slowtest", lambda rest: SLOW[rest])


def slow_model(name: str, delay: float, reply: str, cached_tokens: int = 0) -> Model:
    """A model answering ``reply`` after ``delay`` seconds, through the provider registry."""
    answer = Completion(reply, prompt_tokens=100, completion_tokens=3,
                        cached_prompt_tokens=cached_tokens)  # fmt: skip
    SLOW[name] = slow_fake(answer, delay, name=f"slowtest:{name}", max_concurrency=16,
                           supports_logprobs=False)  # fmt: skip
    return Model(f"slowtest:{name}", retry=NO_RETRY)
