"""Scripted provider for tests: a function or a table of regex patterns to replies.

Scripts are registered by name and reached through the normal registry as ``fake:<name>``,
so tests exercise exactly the code path users run.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from docket.errors import ConfigError
from docket.llm.provider import ProviderDefaults
from docket.llm.types import Completion, Request

Script = Callable[[Request], str | Completion]
_SCRIPTS: dict[str, Script] = {}


def register_fake(name: str, script: Script | Sequence[tuple[str, str]]) -> str:
    """Register a script under ``name`` and return the model name ``fake:<name>``.

    ``script`` is either a function of the request returning text (or a Completion, or
    raising to simulate failures), or a list of ``(regex, reply)`` pairs matched in order
    against the whole prompt; the first match wins.
    """
    _SCRIPTS[name] = script if callable(script) else _table_script(name, list(script))
    return f"fake:{name}"


def _table_script(name: str, table: list[tuple[str, str]]) -> Script:
    compiled = [(re.compile(pattern, re.S), reply) for pattern, reply in table]

    def script(request: Request) -> str:
        prompt = request.prompt_text
        for pattern, reply in compiled:
            if pattern.search(prompt):
                return reply
        raise ConfigError(f"fake model '{name}' has no reply for this prompt")

    return script


def _token_count(text: str) -> int:
    return max(1, len(text.split())) if text else 0


@dataclass
class FakeProvider(ProviderDefaults):
    """Answers with a script, after ``delay_s`` seconds (``asyncio.sleep``: never blocks
    the loop); counts calls and how many overlapped, so tests can assert on them."""

    name: str
    script: Script
    max_concurrency: int = 8
    supports_json_schema: bool = False
    supports_logprobs: bool = True
    delay_s: float = 0.0
    calls: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0

    async def generate(self, request: Request) -> Completion:
        """Wait ``delay_s``, then run the script for ``request``."""
        self.calls += 1
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            reply = self.script(request)
        finally:
            self.in_flight -= 1
        if isinstance(reply, Completion):
            return reply
        return Completion(
            text=reply,
            prompt_tokens=_token_count(request.prompt_text),
            completion_tokens=_token_count(reply),
        )


def slow_fake(
    reply: str | Completion, delay_s: float, *, name: str = "fake:slow", **fields: Any
) -> FakeProvider:
    """A provider that answers ``reply`` to every request after ``delay_s`` seconds.

    ``fields`` set the other :class:`FakeProvider` fields (``max_concurrency``,
    ``supports_logprobs``, ...). Pass it to :class:`~docket.llm.Model` directly.
    """
    return FakeProvider(name, lambda _request: reply, delay_s=delay_s, **fields)


def create_fake(rest: str) -> FakeProvider:
    """The provider of ``fake:<rest>`` (entry point ``fake``); ``rest`` must be registered."""
    if rest not in _SCRIPTS:
        raise ConfigError(
            f"unknown fake model 'fake:{rest}'",
            hint="register it first with docket.llm.fake.register_fake",
        )
    return FakeProvider(name=f"fake:{rest}", script=_SCRIPTS[rest])


register_fake("echo", lambda request: request.messages[-1].content)


ChatDecision = Callable[[Request], dict]
"""Returns the reply fields (e.g. label, evidence, reasoning) for a request."""

CHAT_STYLES = ("json", "fenced", "prose", "no_evidence")
"""How a chat fake wraps its JSON reply, used in turn: bare, in a ```json fence, after a
sentence of prose, and without the evidence member."""


def render_chat_reply(fields: dict, style: str) -> str:
    """Write ``fields`` as a chat model would in ``style`` (see :data:`CHAT_STYLES`).

    ``"unlabelled"`` answers in prose with no JSON and no label, as chat models do when a
    protocol expects them to continue an open assistant turn.
    """
    if style == "unlabelled":
        return "REASONING: " + str(fields.get("reasoning") or "the chunk is on the topic.")
    if style == "no_evidence":
        fields = {k: v for k, v in fields.items() if k != "evidence"}
    body = json.dumps(fields)
    if style == "fenced":
        return f"```json\n{body}\n```"
    if style == "prose":
        return f"Here is my assessment of the pair.\n{body}\nI hope this helps."
    return body


def register_chat_fake(name: str, decide: ChatDecision, styles: Sequence[str] = CHAT_STYLES) -> str:
    """Register a fake that behaves like a chat server; return ``fake:<name>``.

    Like a chat API, it ignores a trailing assistant message (no prefill is continued)
    and answers in a new message; its replies cycle through ``styles``. A re-ask (a chat
    whose last message is docket's user follow-up after an assistant reply) is answered
    with plain JSON, so tests can prove that one re-ask recovers an unreadable reply.
    """
    counter = iter(range(1 << 62))

    def script(request: Request) -> str:
        messages = list(request.messages)
        while messages and messages[-1].role == "assistant":
            messages.pop()  # a chat server closes an open assistant turn
        fields = decide(replace(request, messages=tuple(messages)))
        if any(m.role == "assistant" for m in messages):
            return render_chat_reply(fields, "json")
        return render_chat_reply(fields, styles[next(counter) % len(styles)])

    return register_fake(name, script)
