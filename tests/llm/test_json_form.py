"""The form of a JSON schema is found without costing the other calls a round trip."""

from __future__ import annotations

import asyncio
import json
import logging
import threading

import pytest

from docket.llm import Message, Model, Request
from docket.llm import json_form as json_form_module
from docket.llm.limit_memory import recall_json_form
from tests.scripted_server import Reply, serve

SCHEMA = {"type": "object", "properties": {"label": {"type": "string"}}}
REPLY = json.dumps({"label": "relevant"})


def ask(text: str) -> Request:
    return Request(messages=(Message("user", text),), json_schema=SCHEMA)


async def _burst(model: Model, n: int) -> list:  # type: ignore[no-untyped-def]
    return await asyncio.gather(*(model.generate(ask(f"q{i}")) for i in range(n)))


def _first_held_until_another_arrives() -> tuple:  # type: ignore[type-arg]
    """A script whose first reply waits (up to 5 s) for a second request to arrive."""
    second = threading.Event()
    seen: list[str] = []
    lock = threading.Lock()

    def script(body: dict) -> str:
        with lock:
            seen.append(body["response_format"]["type"])
            first = len(seen) == 1
        if first:
            seen.append("second came first" if second.wait(5) else "second waited")
        else:
            second.set()
        return REPLY

    return script, seen


async def test_the_second_call_goes_before_the_first_reply() -> None:
    # Before: the first call with a schema went alone, so every other call waited for its
    # reply (a whole round trip); the script would hold the first reply 5 s for nothing.
    script, seen = _first_held_until_another_arrives()
    with serve(script) as server:
        model = Model(server.model())
        completions = await _burst(model, 4)
    assert "second came first" in seen and len(server.requests) == 4
    assert [c.text for c in completions] == [REPLY] * 4
    assert recall_json_form(model.name) == "json_schema"  # kept for the next process


async def test_a_later_process_sends_a_kept_form_with_no_hold(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    script, seen = _first_held_until_another_arrives()
    with serve(script) as server:
        await _burst(Model(server.model()), 2)  # the second releases the first in the grace
        seen.clear()
        monkeypatch.setattr(json_form_module, "GRACE_S", 30.0)  # only the kept form helps
        await _burst(Model(server.model()), 3)
    assert "second came first" in seen


async def test_concurrent_refusals_all_switch_with_one_warning(caplog) -> None:  # type: ignore[no-untyped-def]
    # A refusal slower than the grace: all 16 calls go as json_schema and are refused.
    # Each is sent again as json_object; one warning; no call lost, none a failure.
    def script(body: dict) -> Reply | str:
        if body["response_format"]["type"] == "json_schema":
            threading.Event().wait(0.6)
            message = "response_format: Input should be 'text' or 'json_object'"
            return Reply(500, {"error": {"message": message}})
        return REPLY

    with serve(script) as server, caplog.at_level(logging.WARNING, "docket.llm.json_form"):
        model = Model(server.model(params="max_in_flight=16"))
        completions = await _burst(model, 16)
        later = await model.generate(ask("later"))
    forms = [r["response_format"]["type"] for r in server.requests]
    assert forms.count("json_schema") == 16 and forms.count("json_object") == 17
    assert [c.text for c in completions] == [REPLY] * 16 and later.retries == 0
    assert [c.retries for c in completions] == [1] * 16
    assert model.usage.retries == 16 and model.usage.failures == 0
    [line] = [r.getMessage() for r in caplog.records if r.name == "docket.llm.json_form"]
    assert "json_object" in line
    assert recall_json_form(model.name) == "json_object"


@pytest.mark.parametrize("form", ["json_schema", "json_object"])
async def test_a_kept_form_is_sent_from_the_first_call(form: str) -> None:
    with serve(lambda _body: REPLY) as server:
        model = Model(server.model())
        json_form_module.keep_json_form(model.name, form)
        await _burst(model, 2)
    assert [r["response_format"]["type"] for r in server.requests] == [form, form]


def test_the_form_and_the_limit_share_a_model_entry_without_losing_either() -> None:
    from docket.llm.limit_memory import Known, keep_limit, recall_limit

    keep_limit("openai-compatible:http://127.0.0.1:1/v1#m", Known(40, True))
    json_form_module.keep_json_form("openai-compatible:http://127.0.0.1:1/v1#m", "json_object")
    keep_limit("openai-compatible:http://127.0.0.1:1/v1#m", Known(48, False))
    assert recall_limit("openai-compatible:http://127.0.0.1:1/v1#m") == Known(48, False)
    assert recall_json_form("openai-compatible:http://127.0.0.1:1/v1#m") == "json_object"
