"""OpenAI and OpenAI-compatible servers (vLLM, Ollama, llama.cpp server) over HTTP.

Names: ``openai:<model>`` and ``openai-compatible:<base_url>#<model>`` (both may end in
``?max_in_flight=N&timeout=S``, see :mod:`docket.llm.provider`).

The chat-completions wire format is small, so this provider speaks it with one shared
``aiohttp.ClientSession`` per event loop rather than through the openai SDK (about 2 ms of
CPU per call in request building and response models) or plain httpx (whose connection
pool scans every connection for each request: over 3 ms per call at 256 in flight; both
measured with py-spy, see benchmarks/judge_throughput.py). Failures map onto docket
errors as the SDK's did; retries and the limit on calls in flight live once, in ``Model``:

* timeouts, lost connections, 408, 409, 429 and 5xx: :class:`TransientModelError` (429,
  503 and timeouts as :class:`ServerBusyError`, which also lowers the calls in flight);
* a 200 reply that is not a chat completion (invalid JSON, an HTML proxy page, no
  ``choices``): :class:`MalformedReplyError`, transient too, since proxies produce them
  in passing; if every retry gets one, the call counts as unparsed;
* 400, 413 and 422 (this request is refused, e.g. the context is too long):
  :class:`RequestRefusedError`; the job records the pair as failed and goes on;
* any other status (401, 403, 404: wrong key, URL or model): :class:`ModelUnavailableError`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlparse

from docket.errors import (
    ConfigError,
    MalformedReplyError,
    ModelUnavailableError,
    RequestRefusedError,
    ServerBusyError,
    TransientModelError,
)
from docket.llm.json_form import JsonForm
from docket.llm.provider import ProviderDefaults
from docket.llm.server_info import ask_server
from docket.llm.types import Completion, Request, TokenLogprob

log = logging.getLogger(__name__)

LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1"}
BLOCK_REMOTE_ENV = "DOCKET_BLOCK_REMOTE"
OPENAI_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MAX_IN_FLIGHT = 64
DEFAULT_TIMEOUT_S = 120.0
TRANSIENT_STATUS = {408, 409, 429}
BUSY_STATUS = {429, 503}
REFUSED_STATUS = {400, 413, 422}


def _check_reachable_allowed(base_url: str | None) -> None:
    # Tests set DOCKET_BLOCK_REMOTE=1 so that no test can reach a real endpoint by accident.
    if os.environ.get(BLOCK_REMOTE_ENV) != "1":
        return
    host = urlparse(base_url or OPENAI_BASE_URL).hostname or ""
    if host not in LOOPBACK_HOSTS and not host.startswith("127."):
        raise ConfigError(f"remote endpoint '{host}' blocked because {BLOCK_REMOTE_ENV}=1")


@dataclass
class OpenAICompatibleProvider(ProviderDefaults):
    """Chat completions over HTTP against an OpenAI-compatible base URL."""

    name: str
    model: str
    base_url: str | None = None
    api_key: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_concurrency: int = DEFAULT_MAX_IN_FLIGHT
    supports_json_schema: bool = True
    supports_logprobs: bool = True
    can_probe = True
    ask_server: bool = False
    """Ask the server at start (:meth:`probe`): served models, not OpenAI's own API."""
    json_form: JsonForm = field(init=False, repr=False)
    """How a JSON schema is sent: ``json_schema`` (OpenAI, vLLM, Ollama, llama.cpp's C++
    server) or ``json_object`` with a ``schema`` member (llama-cpp-python's server); the
    provider switches once, by itself, when a server refuses the first form."""
    _client: Any = field(default=None, repr=False)
    _client_loop: Any = field(default=None, repr=False)
    _closer: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.json_form = JsonForm(self.name)

    async def _get_client(self) -> Any:
        # A connection pool belongs to the event loop that created it; a pooled connection
        # used from a later loop (each generate_sync is a new asyncio.run) fails with
        # "Event loop is closed". So the session is remade for a new loop.
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            import aiohttp

            _check_reachable_allowed(self.base_url)
            # No cap on connections: Model's limit on calls in flight is the one bound.
            session = aiohttp.ClientSession(
                base_url=(self.base_url or OPENAI_BASE_URL).rstrip("/") + "/",
                headers={
                    "Authorization": f"Bearer {self.api_key or 'not-needed'}",
                    "Content-Type": "application/json",
                },
                timeout=aiohttp.ClientTimeout(total=self.timeout_s),
                connector=aiohttp.TCPConnector(limit=0),
            )
            self._client, self._client_loop = session, loop
            # An async generator's cleanup runs when asyncio.run shuts the loop down, so the
            # session is closed there (and no "unclosed session" error is logged).
            self._closer = _close_at_loop_end(session)  # kept: collecting it would close now
            await anext(self._closer)
        return self._client

    async def probe(self) -> int | None:
        """Ask the server once what it serves: its slots, or None when it does not say.

        Raises ModelUnavailableError when it lists its models and this one is not there.
        """
        if not self.ask_server:
            return None
        client = await self._get_client()
        return await ask_server(client, self.name, self.model, self.base_url or "")

    async def generate(self, request: Request) -> Completion:
        """Send one chat completion request and map failures onto docket errors."""
        if request.json_schema is not None and self.supports_json_schema:
            return await self._generate_json(request)
        started = time.perf_counter()
        return self._completion(*(await self._post(self._params(request, None))), started)

    async def _generate_json(self, request: Request) -> Completion:
        # While the form is not known, the first call may hold the others a moment (the
        # hold is not part of any call's latency); see docket.llm.json_form.
        form = self.json_form
        first = await form.hold()
        started = time.perf_counter()
        mode = form.mode
        try:
            status, data = await self._post(self._params(request, mode))
        finally:
            if first:
                form.answered()
        retried = status != 200 and _names_json_form(data) and form.refused(mode)
        if retried:
            # Sent again in the form the server takes; the refused request counts as a retry.
            mode = form.mode
            status, data = await self._post(self._params(request, mode))
        completion = self._completion(status, data, started)
        form.accepted(mode)
        return replace(completion, retries=completion.retries + 1) if retried else completion

    def _completion(self, status: int, data: bytes, started: float) -> Completion:
        if status != 200:
            raise self._status_error(status, _error_text(data))
        return _to_completion(_body(data), time.perf_counter() - started)

    async def _post(self, params: dict[str, Any]) -> tuple[int, bytes]:
        import aiohttp

        body = json.dumps(params)
        client = await self._get_client()
        try:
            async with client.post("chat/completions", data=body) as response:
                return response.status, await response.read()
        except TimeoutError as exc:
            raise ServerBusyError(f"no answer within {self.timeout_s:g} s") from exc
        except aiohttp.ClientError as exc:
            raise TransientModelError(f"{type(exc).__name__}: {exc}") from exc

    def _status_error(self, status: int, text: str) -> Exception:
        if status in BUSY_STATUS:
            return ServerBusyError(f"HTTP {status}: {text}")
        if status in TRANSIENT_STATUS or status >= 500:
            return TransientModelError(f"HTTP {status}: {text}")
        if status in REFUSED_STATUS:
            return RequestRefusedError(
                f"model '{self.name}' refused the request ({status}): {text}"
            )
        return ModelUnavailableError(
            f"model '{self.name}' refused the request ({status}): {text}",
            hint="check the URL, the model name and the API key",
        )

    def _params(self, request: Request, json_mode: str | None) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }
        if request.stop:
            params["stop"] = list(request.stop)
        if request.seed is not None:
            params["seed"] = request.seed
        if request.top_logprobs:
            params["logprobs"] = True
            params["top_logprobs"] = request.top_logprobs
        if request.json_schema is not None and json_mode is not None:
            params["response_format"] = self.json_form.response_format(
                request.json_schema, json_mode
            )
        return params


async def _close_at_loop_end(session: Any) -> Any:
    try:
        yield
    finally:
        await session.close()


def _names_json_form(data: bytes) -> bool:
    # llama-cpp-python's server answers an unknown response_format type with a 500 (a
    # validation error) that names the field; any server that names it refuses the form.
    text = data.decode("utf-8", "replace")
    return "response_format" in text or "json_schema" in text


def _text_of(data: bytes, limit: int) -> str:
    return " ".join(data.decode("utf-8", "replace").split())[:limit]


def _error_text(data: bytes) -> str:
    """The server's error message, or the start of its body."""
    try:
        error = json.loads(data).get("error")
        message = error.get("message") if isinstance(error, dict) else error
        if message:
            return str(message)[:300]
    except (ValueError, AttributeError):
        pass
    return _text_of(data, 200) or "(empty body)"


def _body(data: bytes) -> dict[str, Any]:
    """The JSON of a 200 reply; anything that is not a chat completion is transient."""
    try:
        body = json.loads(data)
    except ValueError as exc:
        start = _text_of(data, 80)
        raise MalformedReplyError(f"reply is not JSON: {start!r}") from exc
    choices = body.get("choices") if isinstance(body, dict) else None
    if not choices or not isinstance(choices[0], dict) or "message" not in choices[0]:
        raise MalformedReplyError(f"reply has no choices: {str(body)[:80]!r}")
    return body


def _to_completion(body: dict[str, Any], latency_s: float) -> Completion:
    choice = body["choices"][0]
    usage = body.get("usage") or {}
    details = usage.get("prompt_tokens_details") or {}
    return Completion(
        text=(choice.get("message") or {}).get("content") or "",
        prompt_tokens=usage.get("prompt_tokens") or 0,
        completion_tokens=usage.get("completion_tokens") or 0,
        cached_prompt_tokens=details.get("cached_tokens") or 0,
        logprobs=_logprobs(choice),
        finish_reason=choice.get("finish_reason") or "stop",
        latency_s=latency_s,
    )


def _logprobs(choice: dict[str, Any]) -> tuple[TokenLogprob, ...]:
    content = (choice.get("logprobs") or {}).get("content") or []
    return tuple(
        TokenLogprob(
            token=item["token"],
            logprob=item["logprob"],
            top={alt["token"]: alt["logprob"] for alt in (item.get("top_logprobs") or [])},
        )
        for item in content
    )


def create_openai(model: str) -> OpenAICompatibleProvider:
    """The provider of ``openai:<model>`` (entry point ``openai``)."""
    if not model:
        raise ConfigError(
            "model name missing", hint="write it as openai:<model>, e.g. openai:gpt-4o-mini"
        )
    key = os.environ.get("OPENAI_API_KEY")
    if not key:
        raise ConfigError(
            "OPENAI_API_KEY is not set", hint="export OPENAI_API_KEY=... or use --model local"
        )
    base = os.environ.get("OPENAI_BASE_URL")
    return OpenAICompatibleProvider(name=f"openai:{model}", model=model, base_url=base, api_key=key)


def create_compatible(rest: str) -> OpenAICompatibleProvider:
    """The provider of ``openai-compatible:<base_url>#<model>`` (entry point of that name)."""
    base_url, sep, model = rest.partition("#")
    if not sep or not model or not base_url.startswith(("http://", "https://")):
        raise ConfigError(
            f"cannot read model name 'openai-compatible:{rest}'",
            hint="write it as openai-compatible:http://host:8000/v1#model-name",
        )
    return OpenAICompatibleProvider(
        name=f"openai-compatible:{base_url}#{model}",
        model=model,
        base_url=base_url,
        api_key=os.environ.get("DOCKET_API_KEY") or os.environ.get("OPENAI_API_KEY"),
        ask_server=True,
    )
