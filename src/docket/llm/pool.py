"""One shared :class:`Model` per name for a run, with one cache and one retry policy."""

from __future__ import annotations

import asyncio

from docket.config import Settings
from docket.llm.cache import ResponseCache
from docket.llm.model import CallGate, Model, RetryPolicy
from docket.llm.usage import Usage


class ModelPool:
    """``pool(name)``: one shared Model per name, all with the same cache and retry policy.

    ``pool(None)`` is the main model. :meth:`usage` adds up what this process's calls
    cost, so a run can report what it did apart from what the store already held.
    Each Model keeps at most ``settings.max_in_flight`` calls in flight (a
    ``?max_in_flight=N`` in a model's name wins for that model; neither given: the
    provider's default) and gives each HTTP request ``settings.timeout`` seconds.
    """

    def __init__(self, settings: Settings, gate: CallGate | None = None) -> None:
        self.settings = settings
        self.gate = gate
        self.cache = None if settings.cache == "off" else ResponseCache(settings.cache)
        self.retry = RetryPolicy(max_retries=settings.max_retries)
        self.models: dict[str, Model] = {}

    def __call__(self, name: str | None = None) -> Model:
        key = name or self.settings.model
        if key not in self.models:
            self.models[key] = Model(
                key,
                cache=self.cache,
                retry=self.retry,
                max_concurrency=self.settings.max_in_flight,
                request_timeout_s=self.settings.timeout,
                gate=self.gate,
            )
        return self.models[key]

    def check(self) -> None:
        """Ask each model's server once, now, what it serves (see :meth:`Model.check_server`).

        A job does this before it opens its store, so a wrong model id is refused without
        leaving an empty store behind; the answer is kept for the run's calls.

        Raises:
            ModelUnavailableError: a server lists its models and the named one is not there.
        """

        async def ask_all() -> None:
            for model in list(self.models.values()):
                await model.check_server()

        asyncio.run(ask_all())

    def usage(self) -> Usage:
        """Calls, cache hits, tokens, retries and parse failures of this process so far."""
        total = Usage()
        for model in self.models.values():
            total.merge(model.usage)
        return total

    def pairs_at_once(self) -> int:
        """``settings.concurrency`` if it was set, else the main model's calls in flight.

        So a served model (64 calls in flight) is kept busy without tuning, and the
        embedded model (1) judges one pair at a time, finishing pairs in order.
        """
        if "concurrency" in self.settings.model_fields_set:
            return self.settings.concurrency
        return self(None).max_concurrency
