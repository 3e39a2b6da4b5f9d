"""OpenAI and OpenAI-compatible servers (vLLM, Ollama, llama.cpp server) via the openai SDK.

Names: ``openai:<model>`` and ``openai-compatible:<base_url>#<model>``.
The SDK's own retries are off: retries live once, in ``Model``.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from docket.errors import ConfigError, ModelUnavailableError, TransientModelError
from docket.llm.provider import register_provider
from docket.llm.types import Completion, Request, TokenLogprob

LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1"}
BLOCK_REMOTE_ENV = "DOCKET_BLOCK_REMOTE"


def _check_reachable_allowed(base_url: str | None) -> None:
    # Tests set DOCKET_BLOCK_REMOTE=1 so that no test can reach a real endpoint by accident.
    if os.environ.get(BLOCK_REMOTE_ENV) != "1":
        return
    host = urlparse(base_url or "https://api.openai.com").hostname or ""
    if host not in LOOPBACK_HOSTS and not host.startswith("127."):
        raise ConfigError(f"remote endpoint '{host}' blocked because {BLOCK_REMOTE_ENV}=1")


@dataclass
class OpenAICompatibleProvider:
    """Chat completions through ``openai.AsyncOpenAI`` with a configurable base URL."""

    name: str
    model: str
    base_url: str | None = None
    api_key: str | None = None
    timeout_s: float = 120.0
    max_concurrency: int = 8
    supports_json_schema: bool = True
    supports_logprobs: bool = True
    json_mode: str = "json_schema"
    """How a JSON schema is sent: ``json_schema`` (OpenAI, vLLM, Ollama, llama.cpp's C++
    server) or ``json_object`` with a ``schema`` member (llama-cpp-python's server). The
    provider switches once, by itself, when a server refuses the first form."""
    _client: Any = field(default=None, repr=False)
    _client_loop: Any = field(default=None, repr=False)

    def _get_client(self) -> Any:
        # The SDK's connection pool belongs to the event loop that created it; a pooled
        # connection used from a later loop (each generate_sync is a new asyncio.run) fails
        # with "Event loop is closed". So a client we made is remade for a new loop.
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop not in (None, loop):
            from openai import AsyncOpenAI

            _check_reachable_allowed(self.base_url)
            self._client = AsyncOpenAI(
                base_url=self.base_url,
                api_key=self.api_key or "not-needed",
                timeout=self.timeout_s,
                max_retries=0,
            )
            self._client_loop = loop
        return self._client

    async def generate(self, request: Request) -> Completion:
        """Send one chat completion request and map failures onto docket errors."""
        import openai

        started = time.perf_counter()
        try:
            response = await self._create(request)
        except (openai.RateLimitError, openai.APITimeoutError, openai.APIConnectionError) as exc:
            raise TransientModelError(f"{type(exc).__name__}: {exc}") from exc
        except openai.InternalServerError as exc:
            raise TransientModelError(f"server error: {exc}") from exc
        except openai.APIStatusError as exc:
            raise ModelUnavailableError(
                f"model '{self.name}' refused the request ({exc.status_code}): {exc.message}"
            ) from exc
        return _to_completion(response, time.perf_counter() - started)

    async def _create(self, request: Request) -> Any:
        import openai

        try:
            return await self._get_client().chat.completions.create(**self._params(request))
        except openai.APIStatusError as exc:
            if not self._refused_json_schema(request, exc):
                raise
        self.json_mode = "json_object"
        return await self._get_client().chat.completions.create(**self._params(request))

    def _refused_json_schema(self, request: Request, exc: Exception) -> bool:
        # llama-cpp-python's server answers an unknown response_format type with a 500
        # (a validation error) that names the field; any server that names it is refusing
        # the form, not failing.
        refused = "response_format" in str(exc) or "json_schema" in str(exc)
        return refused and request.json_schema is not None and self.json_mode == "json_schema"

    def _params(self, request: Request) -> dict[str, Any]:
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
        if request.json_schema is not None and self.supports_json_schema:
            params["response_format"] = (
                {"type": "json_object", "schema": request.json_schema}
                if self.json_mode == "json_object"
                else {
                    "type": "json_schema",
                    "json_schema": {"name": "reply", "schema": request.json_schema},
                }
            )
        return params


def _to_completion(response: Any, latency_s: float) -> Completion:
    choice = response.choices[0]
    usage = response.usage
    details = getattr(usage, "prompt_tokens_details", None) if usage else None
    return Completion(
        text=choice.message.content or "",
        prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
        completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
        cached_prompt_tokens=(getattr(details, "cached_tokens", 0) or 0) if details else 0,
        logprobs=_logprobs(choice),
        finish_reason=choice.finish_reason or "stop",
        latency_s=latency_s,
    )


def _logprobs(choice: Any) -> tuple[TokenLogprob, ...]:
    content = getattr(getattr(choice, "logprobs", None), "content", None) or []
    return tuple(
        TokenLogprob(
            token=item.token,
            logprob=item.logprob,
            top={alt.token: alt.logprob for alt in (item.top_logprobs or [])},
        )
        for item in content
    )


def _create_openai(model: str) -> OpenAICompatibleProvider:
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


def _create_compatible(rest: str) -> OpenAICompatibleProvider:
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
    )


register_provider("openai", _create_openai)
register_provider("openai-compatible", _create_compatible)
