"""docket matches a served model's capacity: what the server reports, then what it shows."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from docket.errors import ModelUnavailableError
from docket.llm import Message, Model, Request, RetryPolicy
from docket.llm.limit import AdaptiveLimit
from tests.scripted_server import Reply, serve

SCHEMA = {"type": "object", "properties": {"label": {"type": "string"}}}


def ask(text: str, **kwargs) -> Request:  # type: ignore[no-untyped-def]
    return Request(messages=(Message("user", text),), **kwargs)


async def _burst(model: Model, n: int, **kwargs) -> list:  # type: ignore[no-untyped-def]
    return await asyncio.gather(*(model.generate(ask(f"q{i}", **kwargs)) for i in range(n)))


async def test_the_slots_llama_cpp_reports_bound_the_calls_in_flight() -> None:
    gets = {"/props": Reply(200, {"total_slots": 2, "n_ctx": 4096})}
    with serve(lambda _body: "ok", delay_s=0.05, gets=gets) as server:
        model = Model(server.model())
        await _burst(model, 12)
    assert server.peak_in_flight == 2 and len(server.requests) == 12
    assert model.limit.bound == 2 and server.get_paths.count("/props") == 1


async def test_a_server_without_props_or_models_is_asked_once_quietly(caplog) -> None:  # type: ignore[no-untyped-def]
    with serve(lambda _body: "ok") as server, caplog.at_level(logging.INFO):
        model = Model(server.model())
        await _burst(model, 5)
        await _burst(model, 5)
    assert sorted(server.get_paths) == ["/props", "/v1/models"]  # both 404, once
    assert len(server.requests) == 10 and not caplog.records


async def test_a_one_slot_server_is_not_flooded_past_its_timeout(caplog) -> None:  # type: ignore[no-untyped-def]
    # 24 calls of 0.2 s at one slot with a 3 s client timeout: the limit comes down
    # before any call waits that long, and nothing is sent twice.
    with serve(lambda _body: "ok", delay_s=0.2, slots=1) as server:
        model = Model(server.model(params="timeout=3"), retry=RetryPolicy(base_delay_s=0.01))
        with caplog.at_level(logging.WARNING, logger="docket.llm.limit"):
            await _burst(model, 24)
    assert len(server.requests) == 24 and model.usage.retries == 0
    assert model.limit.current < 8
    [line] = [r.getMessage() for r in caplog.records]  # one line, however often it lowers
    assert "calls in flight lowered from" in line and "the fastest" in line


async def test_a_429_lowers_the_limit_and_is_retried_once() -> None:
    seen = {"n": 0}

    def script(_body: dict) -> Reply | str:
        seen["n"] += 1
        return Reply(429, {"error": {"message": "slow down"}}) if seen["n"] == 3 else "ok"

    with serve(script, delay_s=0.02) as server:
        model = Model(server.model(params="max_in_flight=16"), retry=RetryPolicy(base_delay_s=0))
        completions = await _burst(model, 40)
    assert [c.text for c in completions] == ["ok"] * 40
    assert len(server.requests) == 41 and model.usage.retries == 1
    assert model.limit.decreases >= 1 and 1 <= model.limit.current <= 16


async def _fill(limit: AdaptiveLimit, tickets: list) -> None:
    """Take every free slot, as a busy run does."""
    while limit._gate().in_flight < limit.current:
        tickets.append(await limit.acquire())


async def _answer(limit: AdaptiveLimit, tickets: list, n: int) -> None:
    """``n`` fast answers, each slot taken again at once."""
    for _ in range(n):
        limit.release(tickets.pop(0), latency=0.1)
        await _fill(limit, tickets)


def test_aimd_arithmetic() -> None:
    async def run() -> AdaptiveLimit:
        limit, tickets = AdaptiveLimit(64, "m"), []
        assert (limit.current, limit.slow_start) == (8, True)
        await _fill(limit, tickets)
        await _answer(limit, tickets, 8)  # slow start: +1 an answer
        assert limit.current == 16
        old = tickets.pop(0)
        limit.release(tickets.pop(0), latency=None, overloaded=True)
        assert (limit.current, limit.slow_start) == (8, False)
        limit.release(old, latency=None, overloaded=True)  # sent before the decrease
        assert limit.current == 8
        for ticket in tickets:  # the old window drains
            limit.release(ticket, latency=0.1)
        tickets.clear()
        await _fill(limit, tickets)
        await _answer(limit, tickets, 8 + 9 + 10)  # additive: +1 a window
        return limit

    limit = asyncio.run(run())
    assert limit.current == 11 and limit.bound == 64


def test_the_limit_never_passes_its_bound_or_drops_below_one() -> None:
    async def run() -> AdaptiveLimit:
        limit = AdaptiveLimit(3, "m")
        for _ in range(20):
            limit.release(await limit.acquire(), latency=0.1)
        assert limit.current == 3
        for _ in range(10):
            limit.release(await limit.acquire(), latency=None, overloaded=True)
        return limit

    assert asyncio.run(run()).current == 1


async def test_a_model_id_the_server_does_not_list_is_refused_with_the_list() -> None:
    listed = {"object": "list", "data": [{"id": "qwen", "object": "model", "owned_by": "me"}]}
    with serve(lambda _body: "ok", gets={"/v1/models": Reply(200, listed)}) as server:
        with pytest.raises(ModelUnavailableError, match="serves qwen, not 'qwn'") as info:
            await _burst(Model(server.model("qwn")), 4)
        assert "#qwen" in info.value.hint and server.requests == []  # refused before a call
        assert (await Model(server.model("qwen")).generate(ask("x"))).text == "ok"


@pytest.mark.parametrize(
    ("listed", "name"),
    [("/models/qwen2.5-0.5b.gguf", "qwen2.5-0.5b"), ("llama3:latest", "llama3")],
    ids=["gguf-path", "ollama-tag"],
)
async def test_a_model_listed_by_its_file_or_default_tag_passes(listed: str, name: str) -> None:
    models = {"data": [{"id": listed}]}
    with serve(lambda _body: "ok", gets={"/v1/models": Reply(200, models)}) as server:
        assert (await Model(server.model(name)).generate(ask("x"))).text == "ok"


async def test_a_refused_json_schema_form_is_switched_once_with_one_line(caplog) -> None:  # type: ignore[no-untyped-def]
    # llama-cpp-python's server: a 500 naming response_format for the json_schema form.
    def script(body: dict) -> Reply | str:
        if body.get("response_format", {}).get("type") == "json_schema":
            message = "Traceback ... response_format: Input should be 'text' or 'json_object'"
            return Reply(500, {"error": {"message": message}})
        return json.dumps({"label": "relevant"})

    with serve(script, delay_s=0.02) as server, caplog.at_level(logging.WARNING):
        model = Model(server.model())
        completions = await _burst(model, 16, json_schema=SCHEMA)
    forms = [r["response_format"]["type"] for r in server.requests]
    assert forms.count("json_schema") == 1 and forms.count("json_object") == 16
    [line] = [r.getMessage() for r in caplog.records]
    assert "json_object" in line and "\n" not in line
    assert sum(c.retries for c in completions) == model.usage.retries == 1  # 17 requests


async def test_retry_warnings_against_a_dead_server_are_one_line_per_interval(caplog) -> None:  # type: ignore[no-untyped-def]
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = Model(
        f"openai-compatible:http://127.0.0.1:{port}/v1#m",
        retry=RetryPolicy(max_retries=3, base_delay_s=0.01, max_delay_s=0.02),
    )
    with caplog.at_level(logging.WARNING, logger="docket.llm.model"):
        results = await asyncio.gather(*(model.generate(ask(f"q{i}")) for i in range(20)),
                                       return_exceptions=True)  # fmt: skip
    assert all(isinstance(r, ModelUnavailableError) for r in results)
    assert model.usage.retries == 60 and model.usage.failures == 20
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "transient failure (ClientConnectorError" in lines[0]


def test_retry_log_counts_failures_by_kind_between_lines(caplog) -> None:  # type: ignore[no-untyped-def]
    from docket.errors import ServerBusyError, TransientModelError
    from docket.llm.retry_log import RetryLog

    retry_log = RetryLog("m", interval_s=0.0)
    with caplog.at_level(logging.WARNING, logger="docket.llm.model"):
        retry_log.failed(ServerBusyError("HTTP 503: loading"), 0.5)
        retry_log.interval_s = 3600
        for _ in range(4):
            retry_log.failed(ServerBusyError("HTTP 503: loading"), 0.5)
        retry_log.failed(TransientModelError("ClientOSError: reset"), 0.5)
        retry_log.interval_s = 0.0
        retry_log.failed(ServerBusyError("HTTP 429: slow down"), 0.5)
    first, second = (r.getMessage() for r in caplog.records)
    assert first == "m: transient failure (HTTP 503: loading); retry in 0.5s"
    assert second.startswith("m: 6 transient failures in ")
    assert second.endswith("(HTTP 503 x4, ClientOSError x1, HTTP 429 x1); retrying")


def test_judge_refuses_a_model_id_the_server_does_not_list_in_one_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import subprocess
    import sys

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"qid": "q", "query": "egg", "docid": "d", "text": "Egg."}) + "\n")
    listed = {"data": [{"id": "qwen"}]}
    with serve(lambda _body: "ok", gets={"/v1/models": Reply(200, listed)}) as server:
        args = ["judge", str(pairs), "--method", "single", "--model", server.model("qwn")]
        args += ["--db", str(tmp_path / "d.db"), "--cache", "off"]
        done = subprocess.run(
            [sys.executable, "-m", "docket", *args], capture_output=True, text=True, timeout=120
        )
    assert done.returncode == 2 and server.requests == []
    [line] = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert "serves qwen, not 'qwn'" in line and "#qwen" in line
    assert "Traceback" not in done.stderr and "WARNING" not in done.stderr


def test_a_limit_of_one_is_never_said_to_be_lowered(caplog) -> None:  # type: ignore[no-untyped-def]
    async def run() -> AdaptiveLimit:
        limit = AdaptiveLimit(1, "local")  # the embedded model: one call at a time
        for _ in range(3):
            limit.release(await limit.acquire(), latency=None, overloaded=True)
        return limit

    with caplog.at_level(logging.INFO, logger="docket.llm.limit"):
        limit = asyncio.run(run())
    assert (limit.current, limit.decreases) == (1, 0) and not caplog.records
