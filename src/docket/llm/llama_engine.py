"""A loaded llama.cpp model with its KV cache, driven token by token with native sampling.

Why not ``Llama.create_completion``: it samples in Python and ran at about 5 tokens/s on
2 cores, against 20-70 tokens/s for this loop, which decodes with ``Llama.eval`` and picks
tokens with a llama.cpp sampler chain. The KV cache of the previous call is kept, so a
prompt that shares a token prefix with it only decodes the new suffix.

Log-probabilities come from the logits of the position being sampled only; the model is
never loaded with ``logits_all=True`` (vocabularies have 150k+ tokens).
"""

from __future__ import annotations

import atexit
import os
import random
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from docket.errors import ConfigError, MissingDependencyError, ModelUnavailableError
from docket.llm.types import TokenLogprob

_ENGINES: dict[tuple[str, int, int], LlamaEngine] = {}
_LOAD_LOCK = threading.Lock()


@dataclass(frozen=True)
class Generation:
    """What one :meth:`LlamaEngine.complete` call produced."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    cached_prompt_tokens: int
    finish_reason: str
    logprobs: tuple[TokenLogprob, ...] = ()


def import_llama_cpp() -> Any:
    """Import llama_cpp or raise the error that names the install command."""
    try:
        import llama_cpp
    except ImportError as exc:
        raise MissingDependencyError("llama-cpp-python", "local") from exc
    return llama_cpp


def default_threads() -> int:
    """Cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@atexit.register
def _close_engines() -> None:
    # Free the models while the interpreter is whole: left to garbage collection at exit,
    # llama-cpp-python's finalizer can run after its module globals are gone, and then
    # prints a TypeError traceback (as at the end of a CI run of the suite).
    with _LOAD_LOCK:
        engines = list(_ENGINES.values())
        _ENGINES.clear()
    for engine in engines:
        engine.llm.close()


def get_engine(path: Path, n_ctx: int, n_threads: int) -> LlamaEngine:
    """The process-wide engine for this model file and context size, loaded once."""
    key = (str(Path(path).resolve()), n_ctx, n_threads)
    with _LOAD_LOCK:
        if key not in _ENGINES:
            _ENGINES[key] = LlamaEngine(Path(key[0]), n_ctx, n_threads)
        return _ENGINES[key]


class LlamaEngine:
    """One model in memory. Callers hold :attr:`lock` around :meth:`complete`.

    Args:
        path: GGUF file.
        n_ctx: context window in tokens (prompt plus generated).
        n_threads: CPU threads for prefill and decoding.
    """

    def __init__(self, path: Path, n_ctx: int, n_threads: int) -> None:
        self.llama_cpp = import_llama_cpp()
        self.path, self.n_ctx = path, n_ctx
        from llama_cpp._utils import suppress_stdout_stderr

        # llama.cpp prints a context warning straight to stderr even with verbose=False;
        # users of the CLI should see docket's output, not the engine's start-up notes.
        with suppress_stdout_stderr(disable=False):
            self.llm = self.llama_cpp.Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                logits_all=False,
                verbose=False,
            )
        self.n_vocab = self.llm.n_vocab()
        self.lock = threading.Lock()

    @property
    def chat_template(self) -> str | None:
        """The Jinja chat template stored in the GGUF, if any."""
        return self.llm.metadata.get("tokenizer.chat_template")

    def tokenize(self, prompt: str) -> list[int]:
        """Tokens of a rendered prompt; special tokens such as ``<|im_start|>`` are parsed."""
        bos = self.llm.detokenize([self.llm.token_bos()], special=True).decode(errors="ignore")
        add_bos = not (bos and prompt.startswith(bos))
        return self.llm.tokenize(prompt.encode(), add_bos=add_bos, special=True)

    def complete(
        self,
        tokens: list[int],
        *,
        max_tokens: int,
        temperature: float = 0.0,
        seed: int | None = None,
        stop: tuple[str, ...] = (),
        top_logprobs: int = 0,
    ) -> Generation:
        """Decode ``tokens`` (reusing the cached prefix) and generate up to ``max_tokens``."""
        if len(tokens) >= self.n_ctx:
            raise ConfigError(
                f"prompt of {len(tokens)} tokens does not fit the context of {self.n_ctx}",
                hint="shorten the input or raise the context (DOCKET_LOCAL_N_CTX)",
            )
        sampler = self._sampler(temperature, seed)
        try:
            cached = self._prefill(tokens)
            budget = min(max_tokens, self.n_ctx - len(tokens))
            return self._decode(tokens, cached, budget, sampler, stop, top_logprobs)
        except BaseException as exc:
            self.llm.reset()  # the KV cache may hold a half-decoded prompt: start clean
            if isinstance(exc, RuntimeError):  # llama_decode failed
                raise ModelUnavailableError(f"llama.cpp failed on {self.path.name}: {exc}") from exc
            raise
        finally:
            sampler.close()

    def _prefill(self, tokens: list[int]) -> int:
        # Keep the longest common prefix with what the KV cache holds. At least one token
        # is decoded again so that the logits belong to this prompt's last position.
        reuse = min(
            _common_prefix(self.llm.input_ids[: self.llm.n_tokens], tokens), len(tokens) - 1
        )
        if reuse <= 0 or not self.llm._ctx.kv_cache_seq_rm(-1, reuse, -1):
            self.llm.reset()
            reuse = 0
        self.llm.n_tokens = reuse
        self.llm.eval(tokens[reuse:])
        return reuse

    def _sampler(self, temperature: float, seed: int | None) -> Any:
        sampler = self.llama_cpp._internals.LlamaSampler()
        if temperature <= 0:
            sampler.add_greedy()
        else:
            sampler.add_temp(temperature)
            sampler.add_dist(seed if seed is not None else random.getrandbits(31))
        return sampler

    def _decode(
        self,
        tokens: list[int],
        cached: int,
        budget: int,
        sampler: Any,
        stop: tuple[str, ...],
        top_logprobs: int,
    ) -> Generation:
        out = bytearray()
        logprobs: list[TokenLogprob] = []
        finish, generated = "length", 0
        while generated < budget:
            token = sampler.sample(self.llm._ctx, -1)
            if self.llama_cpp.llama_vocab_is_eog(self.llm._model.vocab, token):
                finish = "stop"
                break
            generated += 1
            if top_logprobs:
                logprobs.append(self._logprob(token, top_logprobs))
            out += self._piece(token)
            if stop and _cut_at_stop(out.decode("utf-8", errors="ignore"), stop)[1]:
                finish = "stop"
                break
            if generated < budget:
                self.llm.eval([token])  # the last token is never decoded: nobody needs it
        text = _cut_at_stop(out.decode("utf-8", errors="replace"), stop)[0]
        return Generation(text, len(tokens), generated, cached, finish, tuple(logprobs))

    def _piece(self, token: int) -> bytes:
        return self.llm.detokenize([token])

    def _logprob(self, token: int, k: int) -> TokenLogprob:
        # A view on llama.cpp's buffer for the last decoded position; read before next eval.
        pointer = self.llm._ctx.get_logits_ith(-1)
        logits = np.ctypeslib.as_array(pointer, shape=(self.n_vocab,)).astype(np.float64)
        peak = logits.max()
        log_z = peak + np.log(np.exp(logits - peak).sum())
        top = np.argpartition(-logits, k)[:k]
        top = top[np.argsort(-logits[top])]
        alternatives = {self._token_text(int(t)): float(logits[t] - log_z) for t in top}
        return TokenLogprob(self._token_text(token), float(logits[token] - log_z), alternatives)

    def _token_text(self, token: int) -> str:
        return self._piece(token).decode("utf-8", errors="replace")


def _common_prefix(cached: np.ndarray, tokens: list[int]) -> int:
    n = min(len(cached), len(tokens))
    differs = np.flatnonzero(np.asarray(cached[:n]) != np.asarray(tokens[:n], dtype=cached.dtype))
    return int(differs[0]) if differs.size else n


def _cut_at_stop(text: str, stop: tuple[str, ...]) -> tuple[str, bool]:
    """Cut ``text`` before the earliest stop string; report whether one occurred."""
    cuts = [i for i in (text.find(s) for s in stop if s) if i >= 0]
    return (text[: min(cuts)], True) if cuts else (text, False)
