"""The embedded model: llama.cpp in-process, named ``local``, ``local:<short name>`` or
``local:<path.gguf>``.

``local`` is the embedded default instruct model (``local:qwen-0.5b``, Qwen2.5-Coder-0.5B-
Instruct from PyPI parts); ``local:qwen-1.5b`` is the larger one; ``$DOCKET_LOCAL_MODEL``
names a file that replaces the default. Prompts are rendered with the GGUF's own chat
template, so the embedded model takes the same chat protocol as a served one. The model is
loaded once per process and shared; calls run one at a time in a worker thread so the
event loop stays free.

Settings: ``DOCKET_LOCAL_N_CTX`` (context tokens, default 8192) and ``DOCKET_LOCAL_THREADS``
(default: every core this process may use).
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docket.errors import ConfigError
from docket.llm.gguf import (
    DEFAULT_EMBEDDED,
    EMBEDDED_MODELS,
    MODEL_ENV,
    check_model_file,
    embedded_model,
    ensure_embedded_model,
)
from docket.llm.llama_engine import LlamaEngine, default_threads, get_engine, import_llama_cpp
from docket.llm.provider import ProviderDefaults
from docket.llm.types import Completion, Message, Request

DEFAULT_N_CTX = 8192
N_CTX_ENV = "DOCKET_LOCAL_N_CTX"
THREADS_ENV = "DOCKET_LOCAL_THREADS"


def render_prompt(engine: LlamaEngine, messages: Sequence[Message]) -> str:
    """Render a chat with the GGUF's own chat template (every instruct GGUF carries one).

    Raises:
        ConfigError: the file has no chat template, so it is a base model and cannot take
            docket's chat protocol.
    """
    template = engine.chat_template
    if not template:
        raise ConfigError(
            f"'{engine.path.name}' has no chat template: it is not an instruct model",
            hint="use an instruction-tuned GGUF, or the embedded default --model local",
        )
    chat = [{"role": m.role, "content": m.content} for m in messages]
    return _formatter(engine, template)(messages=chat).prompt


@functools.cache
def _formatter(engine: LlamaEngine, template: str) -> Any:
    """The engine's chat formatter, compiled once: compiling the Jinja template took 0.2 s,
    which a plan paid on every prompt it counted."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    llm = engine.llm
    return Jinja2ChatFormatter(
        template=template,
        eos_token=llm.detokenize([llm.token_eos()], special=True).decode(errors="ignore"),
        bos_token=llm.detokenize([llm.token_bos()], special=True).decode(errors="ignore"),
    )


@dataclass
class LocalProvider(ProviderDefaults):
    """Provider for a GGUF model run in-process by llama.cpp.

    Args:
        name: canonical model name (``local`` for the embedded model).
        model_path: the GGUF file.
        n_ctx: context window in tokens.
        n_threads: CPU threads.
    """

    name: str
    model_path: Path
    n_ctx: int = DEFAULT_N_CTX
    n_threads: int = field(default_factory=default_threads)
    max_concurrency: int = 1
    # No grammar-constrained sampling in-process: replies are parsed tolerantly instead.
    supports_json_schema: bool = False
    supports_logprobs: bool = True
    has_tokenizer = True

    def engine(self) -> LlamaEngine:
        """The shared loaded model (loads it on first use)."""
        return get_engine(self.model_path, self.n_ctx, self.n_threads)

    def count_prompt_tokens(self, messages: Sequence[Message]) -> int:
        """Tokens of ``messages`` as :meth:`generate_blocking` sends them (no generation)."""
        engine = self.engine()
        with engine.lock:
            return len(engine.tokenize(render_prompt(engine, messages)))

    async def generate(self, request: Request) -> Completion:
        """Answer ``request`` in a worker thread."""
        return await asyncio.to_thread(self.generate_blocking, request)

    def generate_blocking(self, request: Request) -> Completion:
        """Answer ``request`` on the calling thread (waits for the model's lock)."""
        engine = self.engine()
        with engine.lock:
            started = time.perf_counter()
            tokens = engine.tokenize(render_prompt(engine, request.messages))
            result = engine.complete(
                tokens,
                max_tokens=request.max_tokens,
                temperature=request.temperature,
                seed=request.seed,
                stop=request.stop,
                top_logprobs=request.top_logprobs,
            )
            latency = time.perf_counter() - started
        return Completion(
            text=result.text,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
            cached_prompt_tokens=result.cached_prompt_tokens,
            logprobs=result.logprobs,
            finish_reason=result.finish_reason,
            latency_s=latency,
        )


def _int_env(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ConfigError(
            f"{name}={raw!r} is not a positive integer", hint=f"e.g. {name}={default}"
        )
    return value


def resolve_local_model(rest: str) -> tuple[Path, str]:
    """The GGUF file and canonical model name for ``local[:rest]``.

    The canonical name differs for every file, so the response cache never serves one
    model's answers for another.
    """
    if not rest and os.environ.get(MODEL_ENV):
        path = check_model_file(os.environ[MODEL_ENV])
        return path, f"local:{path}"
    if not rest or rest in EMBEDDED_MODELS:
        model = embedded_model(rest or DEFAULT_EMBEDDED)
        return ensure_embedded_model(model), f"local:{model.short_name}"
    if not rest.endswith(".gguf") and "/" not in rest:
        embedded_model(rest)  # raises, listing the short names
    path = check_model_file(rest)
    return path, f"local:{path}"


def create_local(rest: str) -> LocalProvider:
    """The provider of ``local`` or ``local:<name or path>`` (entry point ``local``)."""
    import_llama_cpp()  # fail at construction, with the install command, not at the first call
    path, name = resolve_local_model(rest)
    return LocalProvider(
        name=name,
        model_path=path,
        n_ctx=_int_env(N_CTX_ENV, DEFAULT_N_CTX),
        n_threads=_int_env(THREADS_ENV, default_threads()),
    )
