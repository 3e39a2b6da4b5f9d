"""Verification runs saved while their feedback streams: the background writer and SSE events.

Saving never delays feedback: results are yielded first and written to the store by one
background writer per run, in batches, off the event loop. A store failure is logged and
does not fail the request.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from docket.adherence.verify.history import finish_run, save_results, start_run
from docket.adherence.verify.prompts import PROMPT_VERSION
from docket.adherence.verify.verdict import RuleResult, Verdict, new_result_id
from docket.adherence.verify.verifier import Submission, Verifier
from docket.store.base import Store

log = logging.getLogger(__name__)


class RunWriter:
    """Writes one run and its results to the store in the background, in arrival order."""

    def __init__(self, store: Store | None, **meta: Any) -> None:
        self.store, self.meta, self.run_id = store, meta, new_result_id()
        self._pending: list[RuleResult] = []
        self._task: asyncio.Task[None] | None = None
        self._started = False

    async def start(self, verifier: Verifier, submission: Submission) -> None:
        """Insert the run row (before any result, so results can refer to it)."""
        if self.store is None:
            return
        head = {
            "record_id": submission.record.id,
            "turn": submission.new_turn,
            "mode": verifier.config.mode,
            "ruleset": str(verifier.ruleset.name),
            "ruleset_version": str(verifier.ruleset.version),
        }
        models = {tier: model.name for tier, model in verifier.models.items() if model is not None}
        self._started = await self._guard(
            start_run,
            self.store,
            self.run_id,
            head,
            models=models,
            prompt_version=PROMPT_VERSION,
            **self.meta,
        )

    def add(self, result: RuleResult) -> None:
        """Queue a result for writing."""
        if not self._started:
            return
        self._pending.append(result)
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._drain())

    async def _drain(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            await self._guard(save_results, self.store, self.run_id, batch)

    async def finish(self, verdict: Verdict) -> None:
        """Wait for queued results, then store the verdict's status and timing."""
        if not self._started:
            return
        if self._task is not None:
            await self._task
        await self._guard(finish_run, self.store, self.run_id, verdict)

    async def _guard(self, fn: Any, *args: Any, **kwargs: Any) -> bool:
        try:
            await asyncio.to_thread(fn, *args, **kwargs)
            return True
        except Exception:  # the annotator's feedback matters more than our bookkeeping
            log.exception("could not save verification run %s", self.run_id)
            return False


async def verify_and_save(verifier: Verifier, submission: Submission, writer: RunWriter) -> Verdict:
    """Verify a submission and save it; the whole verdict at once."""
    verdict: Verdict | None = None
    async for item in run_saved(verifier, submission, writer):
        verdict = item if isinstance(item, Verdict) else verdict
    assert verdict is not None  # iter_verify always ends with the verdict
    return verdict


async def run_saved(
    verifier: Verifier, submission: Submission, writer: RunWriter
) -> AsyncIterator[RuleResult | Verdict]:
    """:meth:`Verifier.iter_verify`, with every item also saved through ``writer``."""
    await writer.start(verifier, submission)
    async for item in verifier.iter_verify(submission):
        if isinstance(item, Verdict):
            await writer.finish(item)
        else:
            writer.add(item)
        yield item


async def sse_events(
    verifier: Verifier, submission: Submission, writer: RunWriter
) -> AsyncIterator[dict[str, str]]:
    """Server-Sent Events: one ``result`` per rule as soon as known, then ``verdict``.

    An unexpected failure ends the stream with an ``error`` event instead of a broken
    connection.
    """
    try:
        async for item in run_saved(verifier, submission, writer):
            event = "verdict" if isinstance(item, Verdict) else "result"
            yield {"event": event, "data": item.model_dump_json()}
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        log.exception("verification stream failed")
        yield {"event": "error", "data": json.dumps({"message": f"{type(exc).__name__}: {exc}"})}
