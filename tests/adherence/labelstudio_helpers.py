"""Shared pieces of the Label Studio tests: recorded payloads, rules, a backend app."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

from docket.adherence.labelstudio import Mapping
from docket.adherence.rules import RuleSet
from docket.adherence.verify import Verifier, VerifierConfig
from docket.adherence.web.labelstudio import create_labelstudio_app
from docket.llm.fake import register_fake
from docket.store.base import Store
from docket.web import WebSettings

RECORDED = Path(__file__).parent / "data" / "labelstudio"
TOKEN = "ls-backend-token-0123456789"
BASIC = {"Authorization": "Basic " + base64.b64encode(f"ls:{TOKEN}".encode()).decode()}
BEARER = {"Authorization": f"Bearer {TOKEN}"}

RULES = {
    "name": "ls-dialogue",
    "rules": [
        {
            "id": "URL",
            "text": "No turn contains a URL.",
            "tier": "fmt",
            "scope": {"kind": "each_turn"},
            "check": {"checker": "urls", "params": {"present": False}},
        },
        {
            "id": "WORDS",
            "text": "Each turn has at most 12 words.",
            "tier": "fmt",
            "scope": {"kind": "each_turn"},
            "check": {"checker": "word_count", "params": {"max": 12}},
        },
        {
            "id": "LEN",
            "text": "A dialogue has 4 to 12 turns.",
            "tier": "fmt",
            "scope": {"kind": "record"},
            "check": {"checker": "turn_count", "params": {"min": 4, "max": 12}},
        },
        {
            "id": "BOT",
            "text": "The assistant does not call itself a bot.",
            "tier": "sim",
            "scope": {"kind": "role", "role": "assistant"},
        },
    ],
}


def bot_reply(request: Any) -> str:
    """The sim model: FAIL when the checked text calls itself a bot."""
    data = request.messages[-1].content.split("Rule to check:")[0]
    return "FAIL: calls itself a bot\nQUOTE: I am a bot" if "I am a bot" in data else "PASS"


SIM = register_fake("ls-sim", bot_reply)


def recorded(name: str) -> dict[str, Any]:
    """A request body Label Studio 1.23.2 sent (a fresh copy)."""
    return copy.deepcopy(json.loads((RECORDED / f"{name}.json").read_text(encoding="utf-8")))


def verifier(rules: dict | None = None) -> Verifier:
    """A verifier of :data:`RULES` with the scripted sim model."""
    ruleset = RuleSet.model_validate(rules or RULES)
    return Verifier(ruleset, sim_model=SIM, config=VerifierConfig(timeout_s=5))


def backend(store: Store | None, mapping: Mapping | None = None, **settings: Any):  # type: ignore[no-untyped-def]
    """The Label Studio backend app with :data:`TOKEN`."""
    web = WebSettings(max_body_bytes=settings.pop("max_body_bytes", 1_000_000))
    return create_labelstudio_app(
        verifier(), store=store, tokens={TOKEN: "labelstudio"}, mapping=mapping, settings=web
    )
