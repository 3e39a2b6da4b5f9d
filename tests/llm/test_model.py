"""Unit tests for the Model wrapper, the fake provider and the OpenAI-compatible provider."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from docket.errors import (
    ConfigError,
    ModelTimeoutError,
    ModelUnavailableError,
    ParseError,
    RequestRefusedError,
    TransientModelError,
)
from docket.llm import Completion, Message, Model, Request, RetryPolicy
from docket.llm.cache import ResponseCache
from docket.llm.fake import FakeProvider, register_fake, slow_fake
from docket.llm.openai_compat import OpenAICompatibleProvider, _check_reachable_allowed
from tests.scripted_server import Reply, chat, serve

FAST_RETRY = RetryPolicy(max_retries=2, base_delay_s=0.001, max_delay_s=0.01)


def ask(text: str, **kwargs) -> Request:
    return Request(messages=(Message("user", text),), **kwargs)


# --- cache -----------------------------------------------------------------------------


async def test_cache_hit_makes_no_provider_call() -> None:
    model = Model(register_fake("t-cache", lambda r: "yes"), cache=ResponseCache(":memory:"))
    first = await model.generate(ask("is it relevant?"))
    second = await model.generate(ask("is it relevant?"))
    assert model.provider.calls == 1
    assert (first.cached, second.cached) == (False, True)
    assert second.text == "yes"
    assert (model.usage.calls, model.usage.cache_hits) == (1, 1)


async def test_cache_misses_when_an_output_changing_parameter_differs() -> None:
    model = Model(register_fake("t-cache2", lambda r: "ok"), cache=ResponseCache(":memory:"))
    await model.generate(ask("q", max_tokens=5))
    await model.generate(ask("q", max_tokens=6))
    assert model.provider.calls == 2


def test_cache_round_trips_logprobs(tmp_path) -> None:
    from docket.llm.types import TokenLogprob

    cache = ResponseCache(tmp_path / "c.sqlite")
    completion = Completion("a", 3, 1, logprobs=(TokenLogprob("a", -0.1, {"a": -0.1, "b": -2.5}),))
    cache.put("k", "m", completion)
    assert cache.get("k") == completion
    assert cache.get("other") is None


# --- retries ---------------------------------------------------------------------------


def _flaky(failures: int, reply: str = "done"):
    state = {"n": 0}

    def script(request: Request) -> str:
        state["n"] += 1
        if state["n"] <= failures:
            raise TransientModelError("503 overloaded")
        return reply

    return script


async def test_transient_failure_is_retried_then_succeeds() -> None:
    model = Model(register_fake("t-flaky", _flaky(2)), retry=FAST_RETRY)
    completion = await model.generate(ask("q"))
    assert completion.text == "done"
    assert model.provider.calls == 3
    assert (model.usage.retries, model.usage.failures, model.usage.calls) == (2, 0, 1)


async def test_retries_exhausted_raise_model_unavailable(monkeypatch) -> None:
    delays: list[float] = []
    real_sleep = asyncio.sleep

    async def record_sleep(seconds: float) -> None:
        delays.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr("docket.llm.model.asyncio.sleep", record_sleep)
    monkeypatch.setattr("docket.llm.model.random.random", lambda: 0.5)  # no jitter
    policy = RetryPolicy(max_retries=3, base_delay_s=0.1, max_delay_s=0.3)
    model = Model(register_fake("t-down", _flaky(99)), retry=policy)
    with pytest.raises(ModelUnavailableError, match="after 4 attempts"):
        await model.generate(ask("q"))
    assert model.provider.calls == 4
    assert delays == pytest.approx([0.1, 0.2, 0.3])  # exponential, capped at max_delay_s
    assert (model.usage.retries, model.usage.failures, model.usage.calls) == (3, 1, 0)


async def test_permanent_failure_is_not_retried() -> None:
    def refuse(request: Request) -> str:
        raise ModelUnavailableError("400 bad request")

    model = Model(register_fake("t-refuse", refuse), retry=FAST_RETRY)
    with pytest.raises(ModelUnavailableError):
        await model.generate(ask("q"))
    assert model.provider.calls == 1


def test_retry_delay_jitter_stays_within_half_to_one_and_a_half(monkeypatch) -> None:
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=20.0)
    monkeypatch.setattr("docket.llm.model.random.random", lambda: 0.0)
    assert policy.delay(2) == pytest.approx(2.0)
    monkeypatch.setattr("docket.llm.model.random.random", lambda: 0.999)
    assert policy.delay(2) == pytest.approx(4.0 * 1.499)


# --- parsing ---------------------------------------------------------------------------


def parse_label(text: str) -> int:
    if text.strip() not in {"0", "1", "2", "3"}:
        raise ParseError(f"expected a label 0-3, got {text!r}", raw=text)
    return int(text)


async def test_reask_once_then_parsed_value() -> None:
    replies = iter(["maybe?", "2"])
    model = Model(register_fake("t-reask-ok", lambda r: next(replies)))
    parsed = await model.generate_parsed(ask("grade it"), parse_label)
    assert parsed.ok and parsed.value == 2
    assert parsed.raw == ("maybe?", "2")
    assert model.usage.parse_failures == 1


async def test_reask_sends_the_bad_reply_and_the_error_back() -> None:
    seen: list[Request] = []

    def script(request: Request) -> str:
        seen.append(request)
        return "nonsense"

    model = Model(register_fake("t-reask-bad", script))
    parsed = await model.generate_parsed(ask("grade it"), parse_label)
    assert model.provider.calls == 2  # exactly one re-ask
    assert parsed.value is None and not parsed.ok
    assert parsed.raw == ("nonsense", "nonsense")
    assert "expected a label" in parsed.error
    assert model.usage.parse_failures == 2
    reask = seen[1].messages
    assert [m.role for m in reask] == ["user", "assistant", "user"]
    assert reask[1].content == "nonsense"
    assert "expected a label" in reask[2].content


async def test_value_error_counts_as_a_parse_failure() -> None:
    model = Model(register_fake("t-int", lambda r: "three"))
    parsed = await model.generate_parsed(ask("a number"), int)
    assert parsed.value is None and len(parsed.completions) == 2


# --- concurrency -----------------------------------------------------------------------


def SlowProvider(  # noqa: N802  (reads as the provider it builds)
    name: str = "slow", max_concurrency: int = 3, seconds: float = 0.01
) -> FakeProvider:
    """A provider whose calls take a while, counting how many run at once."""
    reply = Completion(text="ok", prompt_tokens=4, completion_tokens=1)
    return slow_fake(reply, seconds, name=name, max_concurrency=max_concurrency,
                     supports_logprobs=False)  # fmt: skip


@pytest.mark.parametrize("override", [None, 2])
async def test_concurrency_limit_is_respected(override: int | None) -> None:
    provider = SlowProvider()
    model = Model(provider, max_concurrency=override)
    await asyncio.gather(*(model.generate(ask(f"q{i}")) for i in range(12)))
    assert provider.peak_in_flight == (override or provider.max_concurrency)
    assert model.usage.calls == 12


async def test_per_call_timeout_excludes_time_waiting_for_a_slot() -> None:
    # One slot, 15 calls of 0.1 s each: the last one waits 1.4 s for the slot, which must
    # not count against its 1 s deadline (generous, so a loaded machine cannot flake it).
    model = Model(SlowProvider(max_concurrency=1, seconds=0.1))
    calls = (model.generate(ask(f"q{i}"), timeout_s=1.0) for i in range(15))
    completions = await asyncio.gather(*calls)
    assert [c.text for c in completions] == ["ok"] * 15


async def test_call_past_its_deadline_times_out_without_retries() -> None:
    model = Model(SlowProvider(seconds=1.0), retry=RetryPolicy(max_retries=3, base_delay_s=0))
    with pytest.raises(ModelTimeoutError, match="within 0.05 s"):
        await model.generate(ask("slow"), timeout_s=0.05)
    assert (model.usage.retries, model.usage.failures, model.usage.calls) == (0, 1, 0)


def test_generate_sync_works_across_event_loops() -> None:
    provider = SlowProvider(max_concurrency=1)
    model = Model(provider)

    async def burst() -> None:
        await asyncio.gather(*(model.generate(ask(f"q{i}")) for i in range(3)))

    for _ in range(2):  # each asyncio.run is a fresh loop
        asyncio.run(burst())
    assert model.generate_sync(ask("last")).text == "ok"
    assert provider.peak_in_flight == 1


# --- usage -----------------------------------------------------------------------------


async def test_usage_counts_tokens_latency_and_cost() -> None:
    provider = SlowProvider(name="openai:gpt-4o-mini")
    model = Model(provider)
    for i in range(2):
        await model.generate(ask(f"q{i}"))
    usage = model.usage
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens) == (2, 8, 2)
    assert usage.tokens == 10
    assert usage.latency_s > 0  # filled in by Model when the provider leaves it at 0
    assert usage.cost_usd == pytest.approx((8 * 0.15 + 2 * 0.60) / 1e6)


async def test_fake_provider_estimates_tokens_and_passes_completions_through() -> None:
    made = Completion("x", prompt_tokens=11, completion_tokens=7, cached_prompt_tokens=5)
    model = Model(register_fake("t-passthrough", lambda r: made))
    got = await model.generate(ask("a b c"))
    assert (got.text, got.prompt_tokens, got.completion_tokens) == ("x", 11, 7)
    assert model.usage.cached_prompt_tokens == 5
    echo = Model("fake:echo")
    completion = await echo.generate(ask("one two three"))
    assert (completion.text, completion.prompt_tokens, completion.completion_tokens) == (
        "one two three",
        3,
        3,
    )
    assert echo.usage.cost_usd == 0.0


async def test_fake_table_script_matches_in_order_and_refuses_unknown_prompts() -> None:
    name = register_fake("t-table", [(r"relevant\?", "yes"), (r".*", "fallback")])
    model = Model(name)
    assert (await model.generate(ask("is it relevant?"))).text == "yes"
    assert (await model.generate(ask("other"))).text == "fallback"
    strict = Model(register_fake("t-table-strict", [(r"^only$", "x")]))
    with pytest.raises(ConfigError, match="no reply"):
        await strict.generate(ask("something else"))


# --- names and the registry ------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "nope:x",
        "gpt-4o",
        "fake:never-registered",
        "openai-compatible:localhost:8000#m",
        "openai-compatible:http://127.0.0.1:8000/v1",
        "openai:",
    ],
)
def test_bad_model_names_raise_config_error(name: str) -> None:
    with pytest.raises(ConfigError) as info:
        Model(name)
    assert info.value.hint


def test_openai_without_key_is_a_config_error(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        Model("openai:gpt-4o-mini")


def test_openai_compatible_name_is_parsed() -> None:
    model = Model("openai-compatible:http://127.0.0.1:8000/v1#llama-3")
    assert model.name == "openai-compatible:http://127.0.0.1:8000/v1#llama-3"
    assert (model.provider.base_url, model.provider.model) == (
        "http://127.0.0.1:8000/v1",
        "llama-3",
    )


# --- OpenAI-compatible provider --------------------------------------------------------


async def test_block_remote_refuses_a_remote_base_url() -> None:
    model = Model("openai-compatible:https://api.example.com/v1#m", retry=FAST_RETRY)
    with pytest.raises(ConfigError, match="blocked"):
        await model.generate(ask("q"))


@pytest.mark.parametrize(
    "url", ["http://localhost:1/v1", "http://127.0.0.5:1/v1", "http://[::1]:1/v1"]
)
def test_block_remote_allows_loopback(url: str) -> None:
    _check_reachable_allowed(url)


def test_block_remote_off_allows_anything(monkeypatch) -> None:
    monkeypatch.delenv("DOCKET_BLOCK_REMOTE")
    _check_reachable_allowed("https://api.example.com/v1")


async def test_openai_params_and_completion_mapping() -> None:
    top = [{"token": "yes", "logprob": -0.1}, {"token": "no", "logprob": -2.4}]
    body = chat("yes")
    body["choices"][0]["logprobs"] = {
        "content": [{"token": "yes", "logprob": -0.1, "top_logprobs": top}]
    }
    body["usage"]["prompt_tokens_details"] = {"cached_tokens": 16}
    request = Request(
        messages=(Message("system", "be brief"), Message("user", "relevant?")),
        max_tokens=3,
        stop=("\n",),
        top_logprobs=2,
        seed=7,
        json_schema={"type": "object"},
    )
    with serve(lambda _body: Reply(body=body)) as server:
        completion = await Model(server.model()).generate(request)
    params = server.requests[0]
    assert params["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "relevant?"},
    ]
    assert (params["max_tokens"], params["stop"], params["seed"]) == (3, ["\n"], 7)
    assert (params["logprobs"], params["top_logprobs"]) == (True, 2)
    assert params["response_format"]["json_schema"]["schema"] == {"type": "object"}
    assert (completion.prompt_tokens, completion.completion_tokens) == (20, 2)
    assert completion.cached_prompt_tokens == 16
    assert completion.logprobs[0].top == {"yes": -0.1, "no": -2.4}


async def test_openai_plain_request_sends_no_optional_params() -> None:
    body = chat("")
    body["choices"][0]["message"]["content"] = None
    with serve(lambda _body: Reply(body=body)) as server:
        completion = await Model(server.model()).generate(ask("q"))
    assert set(server.requests[0]) == {"model", "messages", "max_tokens", "temperature"}
    assert completion.text == "" and completion.logprobs == ()


def _replay(outcomes: list[Reply | str]):  # type: ignore[no-untyped-def]
    def script(_body: dict) -> Reply | str:
        return outcomes.pop(0)

    return script


async def test_openai_transient_errors_are_retried_and_counted() -> None:
    outcomes = [
        Reply(503, {"error": {"message": "overloaded"}}),
        Reply(429, {"error": {"message": "slow down"}}),
        Reply(408, "timeout", "text/plain"),
        "finally",
    ]
    with serve(_replay(outcomes)) as server:
        model = Model(server.model(), retry=RetryPolicy(max_retries=3, base_delay_s=0.001))
        completion = await model.generate(ask("q"))
    assert completion.text == "finally" and completion.retries == 3
    assert len(server.requests) == 4 and model.usage.retries == 3


@pytest.mark.parametrize(
    "reply",
    [
        Reply(200, "{not json", "application/json"),
        Reply(200, "<html><body>502 Bad Gateway</body></html>", "text/html"),
        Reply(200, {"id": "x", "choices": []}),
        Reply(200, {"id": "x"}),
    ],
    ids=["invalid-json", "html-page", "empty-choices", "no-choices"],
)
async def test_malformed_200_replies_are_transient(reply: Reply) -> None:
    with serve(_replay([reply, "ok"])) as server:
        model = Model(server.model(), retry=RetryPolicy(max_retries=2, base_delay_s=0.001))
        completion = await model.generate(ask("q"))
    assert completion.text == "ok" and completion.retries == 1


async def test_malformed_replies_that_persist_make_the_model_unavailable() -> None:
    with serve(lambda _body: Reply(200, "<html>proxy</html>", "text/html")) as server:
        model = Model(server.model(), retry=RetryPolicy(max_retries=2, base_delay_s=0.001))
        with pytest.raises(ModelUnavailableError, match="not JSON"):
            await model.generate(ask("q"))
    assert len(server.requests) == 3 and model.usage.retries == 2


@pytest.mark.parametrize("status", [400, 413, 422])
async def test_a_refused_request_is_not_retried(status: int) -> None:
    error = {"error": {"message": "context length exceeded"}}
    with serve(lambda _body: Reply(status, error)) as server:
        model = Model(server.model(), retry=FAST_RETRY)
        with pytest.raises(RequestRefusedError, match="context length exceeded"):
            await model.generate(ask("q"))
    assert len(server.requests) == 1


@pytest.mark.parametrize("status", [401, 404])
async def test_a_wrong_key_or_model_stops_with_model_unavailable(status: int) -> None:
    with serve(lambda _body: Reply(status, {"error": "no such model"})) as server:
        model = Model(server.model(), retry=FAST_RETRY)
        with pytest.raises(ModelUnavailableError, match=f"{status}.*no such model"):
            await model.generate(ask("q"))
    assert len(server.requests) == 1


async def test_client_timeout_comes_from_the_model_name() -> None:
    with serve(lambda _body: "late", delay_s=0.5) as server:
        model = Model(server.model(params="timeout=0.05"), retry=FAST_RETRY)
        with pytest.raises(ModelUnavailableError, match="no answer within 0.05 s"):
            await model.generate(ask("q"))
    assert model.provider.timeout_s == 0.05


def test_max_in_flight_comes_from_the_name_then_the_argument_then_the_provider() -> None:
    base = "openai-compatible:http://127.0.0.1:1/v1#m"
    assert Model(base).max_concurrency == 64
    assert Model(base, max_concurrency=5).max_concurrency == 5
    named = Model(f"{base}?max_in_flight=200", max_concurrency=5)
    assert named.max_concurrency == 200 and named.name == base


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("fake:echo?max_in_flight=0", "not a positive number"),
        ("fake:echo?max_in_flight=lots", "not a positive number"),
        ("fake:echo?speed=9", "cannot read parameter 'speed=9'"),
        ("fake:echo?timeout", "cannot read parameter 'timeout'"),
    ],
)
def test_bad_model_parameters_are_config_errors(name: str, error: str) -> None:
    with pytest.raises(ConfigError, match=error):
        Model(name)


async def test_peak_calls_in_flight_at_the_server_follow_max_in_flight() -> None:
    with serve(lambda _body: "ok", delay_s=0.05) as server:
        model = Model(server.model(params="max_in_flight=6"))
        await asyncio.gather(*(model.generate(ask(f"q{i}")) for i in range(24)))
    assert server.peak_in_flight == 6 and len(server.requests) == 24


def test_registry_finds_every_builtin_after_importing_fake_first() -> None:
    # Regression: importing docket.llm.fake first used to hide openai-compatible and local.
    import subprocess
    import sys

    code = (
        "import docket.llm.fake\n"
        "from docket.llm import Model\n"
        "print(Model('openai-compatible:http://127.0.0.1:1/v1#m').name)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "openai-compatible:http://127.0.0.1:1/v1#m"


def test_openai_client_is_remade_for_a_new_event_loop() -> None:
    provider = OpenAICompatibleProvider(name="n", model="m", base_url="http://127.0.0.1:1/v1")

    async def twice() -> tuple:
        return await provider._get_client(), await provider._get_client()

    first_a, first_b = asyncio.run(twice())
    second_a, _ = asyncio.run(twice())
    assert first_a is first_b  # one client per loop
    assert second_a is not first_a  # its pool belonged to a closed loop
    assert first_a.closed  # closed when its loop shut down: no "unclosed session" error


async def test_a_server_refusing_json_schema_gets_json_object_once() -> None:
    # llama-cpp-python's server answers response_format json_schema with a 500 naming it.
    def script(body: dict) -> Reply | str:
        if body["response_format"]["type"] == "json_schema":
            return Reply(
                500, {"error": {"message": "Input should be 'json_object' (response_format)"}}
            )
        return '{"label": "relevant"}'

    request = Request(messages=(Message("user", "q"),), json_schema={"type": "object"})
    with serve(script) as server:
        model = Model(server.model(), retry=FAST_RETRY)
        first = await model.generate(request)
        second = await model.generate(replace(request, max_tokens=9))
    kinds = [body["response_format"]["type"] for body in server.requests]
    assert kinds == ["json_schema", "json_object", "json_object"]
    # The refused form was a request the server saw: counted as the call's one retry.
    assert first.text == second.text == '{"label": "relevant"}' and first.retries == 1
    assert server.requests[1]["response_format"]["schema"] == {"type": "object"}
