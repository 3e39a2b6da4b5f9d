"""The thick Model wrapper: retries, cache, concurrency limit, accounting, parsing.

Engines only ever talk to :class:`Model`; providers stay thin.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Generic, Protocol, TypeVar

from docket.errors import (
    MalformedReplyError,
    ModelTimeoutError,
    ModelUnavailableError,
    ParseError,
    RequestRefusedError,
    ServerBusyError,
    TransientModelError,
    UnreadableReplyError,
)
from docket.llm.cache import Recall, ResponseCache, pair_calls
from docket.llm.limit import AdaptiveLimit
from docket.llm.provider import Provider, complete_provider, create_provider, parse_model_name
from docket.llm.retry_log import RetryLog
from docket.llm.types import Completion, Message, Request, RequestKey
from docket.llm.usage import Usage

T = TypeVar("T")

REASK_TEMPLATE = (
    "Your previous reply could not be read: {error}. "
    "Answer again, following the required output format exactly."
)


@dataclass(frozen=True)
class Parsed(Generic[T]):
    """Outcome of a structured call: a value, or the raw text that failed to parse.

    ``value`` is None exactly when parsing failed twice (first answer and one re-ask).
    """

    value: T | None
    raw: tuple[str, ...]
    completions: tuple[Completion, ...]
    error: str = ""
    failed_attempts: tuple[int, ...] = ()
    """HTTP requests of each call that got no usable answer (every retry malformed): the
    server saw them, so a judgment's usage counts them (one failure plus retries each)."""

    @property
    def ok(self) -> bool:
        """True when the reply parsed."""
        return self.value is not None


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter for transient failures."""

    max_retries: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0

    def delay(self, attempt: int) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based)."""
        return min(self.max_delay_s, self.base_delay_s * 2**attempt) * (0.5 + random.random())


class CallGate(Protocol):
    """Sees every provider call (each retry too): may refuse it, and learns what it cost.

    ``before`` raises to refuse the call (a budget cap), or waits for room; ``after`` gets
    the completion, or None when the attempt failed (a provider bills failed attempts too).
    """

    async def before(self, request: Request) -> Any:
        """Admit one call of ``request``; returns a ticket for :meth:`after`."""

    def after(self, ticket: Any, completion: Completion | None) -> None:
        """Account for the admitted call."""


class Model:
    """A named model with retries, a response cache, a concurrency limit and usage counters.

    Args:
        provider: the backend, or a model name understood by the registry (it may end in
            ``?max_in_flight=N&timeout=S``, which win over the two arguments below).
        cache: a response cache; None disables caching.
        retry: retry policy for transient failures.
        max_concurrency: the most calls in flight to this model (the user's
            ``max_in_flight``); None keeps the provider's default (64 for served models, 1
            for ``local``). Within it, :class:`~docket.llm.limit.AdaptiveLimit` follows
            what the server shows (slots it reports, latency, 429/503, timeouts); it
            starts at this bound when one is given, else at the limit an earlier process
            reached against this model, else it ramps up.
        request_timeout_s: seconds one HTTP request may take before it counts as a
            transient failure (providers with a client timeout only).
        gate: sees each provider call, retries included (budget caps); None: no gate.
    """

    def __init__(
        self,
        provider: Provider | str,
        *,
        cache: ResponseCache | None = None,
        retry: RetryPolicy | None = None,
        max_concurrency: int | None = None,
        request_timeout_s: float | None = None,
        gate: CallGate | None = None,
    ) -> None:
        if isinstance(provider, str):
            spec = parse_model_name(provider)
            provider = create_provider(spec.name)
            max_concurrency = spec.max_in_flight or max_concurrency
            request_timeout_s = spec.timeout_s or request_timeout_s
        provider = complete_provider(provider)
        self.provider = provider
        if request_timeout_s is not None and provider.timeout_s is not None:
            provider.timeout_s = request_timeout_s
        self.cache = cache
        self.retry = retry or RetryPolicy()
        self.max_concurrency = max_concurrency or self.provider.max_concurrency
        self.usage = Usage()
        self.gate = gate
        self.limit = AdaptiveLimit(
            self.max_concurrency, self.name, provider.timeout_s,
            # Remembered for served models (those that can be asked what they serve).
            user_bound=max_concurrency is not None, remember=provider.can_probe,
        )  # fmt: skip
        self.retry_log = RetryLog(self.name)
        self._probed = False
        self._probe_task: asyncio.Task[None] | None = None
        self._probe_loop: asyncio.AbstractEventLoop | None = None

    @property
    def name(self) -> str:
        """Canonical model name (stored with every judgment)."""
        return self.provider.name

    async def check_server(self) -> None:
        """Ask the server what it serves now (once per Model), as the first call would.

        Raises:
            ModelUnavailableError: the server lists its models and this one is not there.
        """
        await self._ask_server_once()

    async def _ask_server_once(self) -> None:
        # Before the first call, once per Model: what the server reports about itself (its
        # slots, its model ids). Every first call of a loop awaits the same task, so a wrong
        # model id is refused once, before anything is sent.
        if self._probed:
            return
        if not self.provider.can_probe:
            self._probed = True
            return
        loop = asyncio.get_running_loop()
        if self._probe_task is None or self._probe_loop is not loop:
            probe = self.provider.probe
            self._probe_task, self._probe_loop = loop.create_task(self._run_probe(probe)), loop
        await asyncio.shield(self._probe_task)

    async def _run_probe(self, probe: Callable[[], Awaitable[int | None]]) -> None:
        slots = await probe()
        if slots:
            self.limit.set_capacity(slots)
        self._probed = True

    async def generate(self, request: Request, *, timeout_s: float | None = None) -> Completion:
        """Answer ``request`` from the cache or the provider, retrying transient failures.

        ``timeout_s`` bounds each provider call once it holds a concurrency slot, so time
        spent queueing behind other calls (one slot for the embedded model) does not count;
        a call past it raises :class:`ModelTimeoutError` and is not retried.
        """
        journal = pair_calls.get()
        keepers = [k for k in (journal, self.cache) if k is not None]
        key = RequestKey(request, self.name)
        if (hit := self._recall(key, journal, keepers)) is not None:
            if hit.replayed:  # paid before this run, and counted by the run that paid it
                self.usage.replayed += 1
            else:
                self.usage.add_completion(self.name, hit)
            return hit
        await self._ask_server_once()
        completion = await self._call_with_retries(request, timeout_s)
        for keeper in keepers:
            keeper.put(key, self.name, completion)
        self.usage.add_completion(self.name, completion)
        return completion

    def _recall(
        self, key: RequestKey, journal: Recall | None, keepers: list[Recall]
    ) -> Completion | None:
        # The pair's journal first (kept with the job), then the user's cache. A journal
        # answer the job paid for is a replay; one it had from the cache stays a cache
        # hit. A cache hit goes into the journal too (as a hit), so a resume elsewhere
        # (another cache) replays it without counting it as paid.
        for index, keeper in enumerate(keepers):
            if (hit := keeper.get(key)) is None:
                continue
            if keeper is journal and not hit.cached:
                return replace(hit, replayed=True, retries=0)
            hit = replace(hit, cached=True, retries=0)  # nothing kept is ever a replay
            for earlier in keepers[:index]:
                earlier.put(key, self.name, hit)
            return hit
        return None

    async def _call_with_retries(self, request: Request, timeout_s: float | None) -> Completion:
        # Retries are counted on the completion (so each judgment's usage records them) and
        # reach ``self.usage`` through add_completion; a call that finally fails adds its
        # retries and one failure here, since no completion carries them, and its error
        # carries its attempts (so the judgment that records it counts them too).
        for attempt in range(self.retry.max_retries + 1):
            started = time.perf_counter()
            try:
                completion = await self._call_in_slot(request, timeout_s)
            except (ModelTimeoutError, RequestRefusedError, ModelUnavailableError):
                # Not retried: the server still saw this call's requests.
                self.usage.failures += 1
                self.usage.retries += attempt
                raise
            except TransientModelError as exc:
                if attempt == self.retry.max_retries:
                    self.usage.failures += 1
                    self.usage.retries += attempt
                    error = (
                        UnreadableReplyError
                        if isinstance(exc, MalformedReplyError)
                        else ModelUnavailableError
                    )
                    failed = error(
                        f"model '{self.name}' failed after {attempt + 1} attempts: {exc}",
                        hint="check that the server is running and reachable, or retry later",
                    )
                    failed.attempts = attempt + 1
                    raise failed from exc
                delay = self.retry.delay(attempt)
                self.retry_log.failed(exc, delay)
                await asyncio.sleep(delay)
                continue
            if not completion.latency_s:
                completion = replace(completion, latency_s=time.perf_counter() - started)
            return (
                replace(completion, retries=completion.retries + attempt) if attempt else completion
            )
        raise AssertionError("unreachable")  # pragma: no cover

    async def _call_in_slot(self, request: Request, timeout_s: float | None) -> Completion:
        # A slot per attempt: a call waiting out its backoff holds none.
        ticket = await self.limit.acquire()
        latency: float | None = None
        overloaded = False
        try:
            completion = await self._gated_call(request, timeout_s)
            # The provider's own measure when it has one: its internal waits excluded.
            latency = completion.latency_s or time.perf_counter() - ticket.started
            return completion
        except (ServerBusyError, ModelTimeoutError):
            overloaded = True
            raise
        finally:
            self.limit.release(ticket, latency=latency, overloaded=overloaded)

    async def _gated_call(self, request: Request, timeout_s: float | None) -> Completion:
        if self.gate is None:
            return await self._call_once(request, timeout_s)
        admitted = await self.gate.before(request)  # may refuse (a budget cap), or wait
        completion = None
        try:
            completion = await self._call_once(request, timeout_s)
        finally:
            self.gate.after(admitted, completion)
        return completion

    async def _call_once(self, request: Request, timeout_s: float | None) -> Completion:
        if timeout_s is None:
            return await self.provider.generate(request)
        try:
            return await asyncio.wait_for(self.provider.generate(request), timeout_s)
        except TimeoutError as exc:
            raise ModelTimeoutError(
                f"model '{self.name}' did not answer within {timeout_s:g} s"
            ) from exc

    async def generate_parsed(
        self, request: Request, parse: Callable[[str], T], *, timeout_s: float | None = None
    ) -> Parsed[T]:
        """Generate and parse; on a parse failure ask once more, then give up honestly.

        ``parse`` raises :class:`ParseError` (or ValueError) for unusable text. A reply that
        fails twice comes back with ``value=None`` and its raw texts; it is never a label.
        A call whose every retry got a malformed HTTP reply comes back the same way (its
        raw text says so), without a re-ask: the retries already asked again.
        """
        try:
            first = await self.generate(request, timeout_s=timeout_s)
        except UnreadableReplyError as exc:
            self.usage.parse_failures += 1
            raw = (f"(unreadable reply: {exc.message})",)
            return Parsed(None, raw, (), error=exc.message, failed_attempts=(exc.attempts,))
        try:
            return Parsed(parse(first.text), (first.text,), (first,))
        except (ParseError, ValueError) as exc:
            error = str(exc)
        self.usage.parse_failures += 1
        reask = replace(
            request,
            messages=request.messages
            + (
                Message("assistant", first.text),
                Message("user", REASK_TEMPLATE.format(error=error)),
            ),
        )
        try:
            second = await self.generate(reask, timeout_s=timeout_s)
        except UnreadableReplyError as exc:
            self.usage.parse_failures += 1
            raw = (first.text, f"(unreadable reply: {exc.message})")
            return Parsed(None, raw, (first,), error=exc.message, failed_attempts=(exc.attempts,))
        try:
            return Parsed(parse(second.text), (first.text, second.text), (first, second))
        except (ParseError, ValueError) as exc:
            self.usage.parse_failures += 1
            return Parsed(None, (first.text, second.text), (first, second), error=str(exc))

    def generate_sync(self, request: Request) -> Completion:
        """Blocking wrapper around :meth:`generate` for scripts and notebooks."""
        return asyncio.run(self.generate(request))
