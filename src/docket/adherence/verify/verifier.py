"""The verifier: one check interface for all tiers, run in parallel per submission.

For a submission (the record so far plus the new turn) every applicable rule is checked:
each rule is routed to one :class:`~docket.adherence.verify.check.Check`: ``fmt`` rules
to deterministic code, ``sim`` and ``sub`` rules to concurrent calls to each tier's own
model (or all rules to one holistic call). Results stream out as soon as each is known
(:meth:`Verifier.iter_verify`), ending with the aggregate :class:`Verdict`.

Incremental checking: rules scoped to single turns only look at the new turn, and LLM
results are cached by (rule id, rule version, model, prompt version, hash of what the rule
looks at), so re-submitting unchanged content costs no call.

Example::

    verifier = Verifier(load_rules("rules.yaml"), sim_model="fake:sim", sub_model="fake:sub")
    verdict = await verifier.verify(Submission.append(record, Turn(role="user", text="Hi")))
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Literal

from docket.adherence.rules import Rule, RuleSet
from docket.adherence.verify.check import Check, Pending, require_models, route
from docket.adherence.verify.fmt import FmtCheck
from docket.adherence.verify.prompts import system_prompt
from docket.adherence.verify.submission import ResultCache, Submission
from docket.adherence.verify.tiers import AtomicCheck, Budget, HolisticCheck
from docket.adherence.verify.verdict import (
    Mode,
    RuleResult,
    Verdict,
    aggregate_status,
    tier_timings,
)
from docket.llm import Model

Overflow = Literal["truncate", "review"]


@dataclass(frozen=True)
class VerifierConfig:
    """Settings of a verifier (one field = one CLI flag).

    Attributes:
        mode: ``atomic`` (one call per rule, the default) or ``holistic`` (all rules in one
            call to the ``sub`` model, the ablation).
        timeout_s: seconds one LLM check may take before it becomes needs_review.
        overflow: what to do when a submission exceeds a model's prompt budget:
            ``truncate`` drops the oldest turns and flags the results; ``review`` marks them
            needs_review.
        sim_max_tokens / sub_max_tokens: reply length caps per tier.
        sim_max_prompt_tokens / sub_max_prompt_tokens: prompt budgets per tier (estimated
            at four characters per token).
        cache_size: incremental-cache entries kept (least recently used are dropped).
    """

    mode: Mode = "atomic"
    timeout_s: float = 60.0
    overflow: Overflow = "truncate"
    sim_max_tokens: int = 96
    sub_max_tokens: int = 768
    sim_max_prompt_tokens: int = 8192
    sub_max_prompt_tokens: int = 32768
    cache_size: int = 10_000

    def budget(self, tier: str) -> Budget:
        """The per-call limits of ``tier`` (``sim`` or ``sub``)."""
        sub = tier == "sub"
        return Budget(
            max_tokens=self.sub_max_tokens if sub else self.sim_max_tokens,
            max_prompt_tokens=self.sub_max_prompt_tokens if sub else self.sim_max_prompt_tokens,
            timeout_s=self.timeout_s,
            review_truncated=self.overflow == "review",
        )


def _field_missing(rule: Rule, submission: Submission) -> bool:
    return rule.scope.kind == "field" and rule.scope.field not in submission.record.fields


def _not_sent(rule: Rule) -> RuleResult:
    """Live checking of a rule about a field the submission does not carry (yet)."""
    return RuleResult(
        rule_id=rule.id,
        rule_version=rule.version,
        tier=rule.tier,
        status="not_yet",
        explanation=f"field '{rule.scope.field}' was not sent; it is checked once it is",
    )


def _as_model(model: Model | str | None) -> Model | None:
    return Model(model) if isinstance(model, str) else model


class Verifier:
    """Checks submissions against a rule set; safe to share between concurrent requests.

    Args:
        ruleset: the rules.
        sim_model: model (or model name) for the ``sim`` tier: small and fast.
        sub_model: model (or model name) for the ``sub`` tier and for holistic mode.
        config: verifier settings.

    Raises:
        ConfigError: the rule set has LLM rules for a tier without a model.
    """

    def __init__(
        self,
        ruleset: RuleSet,
        *,
        sim_model: Model | str | None = None,
        sub_model: Model | str | None = None,
        config: VerifierConfig | None = None,
    ) -> None:
        self.ruleset = ruleset
        self.config = config or VerifierConfig()
        self.models: dict[str, Model | None] = {
            "sim": _as_model(sim_model),
            "sub": _as_model(sub_model),
        }
        self.system = system_prompt(ruleset.rules)
        self.cache = ResultCache(self.config.cache_size)
        require_models(self.checks, ruleset.rules)

    @property
    def cache(self) -> ResultCache:
        """The incremental cache of LLM results (assignable, e.g. to share one)."""
        return self._cache

    @cache.setter
    def cache(self, cache: ResultCache) -> None:
        self._cache = cache
        self.checks = self._build_checks()

    def _build_checks(self) -> list[Check]:
        if self.config.mode == "holistic":
            return [HolisticCheck(self.models["sub"], self.config.budget("sub"), self.system)]
        atomic: list[Check] = [
            # The slowest tier's requests go out first.
            AtomicCheck(tier, self.models[tier], self.config.budget(tier), self.system, self.cache)
            for tier in ("sub", "sim")
        ]
        return [FmtCheck(), *atomic]

    async def verify(self, submission: Submission) -> Verdict:
        """Check every applicable rule and return the verdict."""
        verdict = None
        async for item in self.iter_verify(submission):
            verdict = item
        assert isinstance(verdict, Verdict)  # iter_verify always ends with the verdict
        return verdict

    def verify_sync(self, submission: Submission) -> Verdict:
        """Blocking wrapper around :meth:`verify`."""
        return asyncio.run(self.verify(submission))

    async def iter_verify(self, submission: Submission) -> AsyncIterator[RuleResult | Verdict]:
        """Yield each rule's result as soon as it is known, then the :class:`Verdict`.

        Planning, fmt checks and prompt building are CPU work that grows with the record,
        so they run in a worker thread: one large submission never stalls the event loop
        (and with it every other request of the server).
        """
        started = time.perf_counter()
        ready, calls, skipped = await asyncio.to_thread(self._start, submission)
        tasks = [asyncio.ensure_future(call) for call in calls]
        results: list[RuleResult] = []
        wall: dict[str, float] = {}
        try:
            for group, result in ready:
                wall[group] = (time.perf_counter() - started) * 1000
                results.append(result)
                yield result
            for next_done in asyncio.as_completed(tasks):
                for result in await next_done:
                    wall[self._group(result)] = (time.perf_counter() - started) * 1000
                    results.append(result)
                    yield result
        finally:
            for task in tasks:
                task.cancel()
        yield self._verdict(submission, results, skipped, wall, started)

    def _start(
        self, submission: Submission
    ) -> tuple[list[tuple[str, RuleResult]], list[Pending], list[str]]:
        """Route the applicable rules and start every check: (ready, pending, skipped)."""
        applicable, skipped = self._plan(submission)
        ready: list[tuple[str, RuleResult]] = []
        pending: list[Pending] = []
        live = submission.new_turn is not None
        unsent = {r.id for r in applicable if live and _field_missing(r, submission)}
        ready += [(r.tier, _not_sent(r)) for r in applicable if r.id in unsent]
        for check, rules in route(self.checks, [r for r in applicable if r.id not in unsent]):
            now, later = check.start(rules, submission)
            ready += [(check.group, result) for result in now]
            pending += later
        return ready, pending, skipped

    def _plan(self, submission: Submission) -> tuple[list[Rule], list[str]]:
        applicable, skipped = [], []
        for rule in self.ruleset.rules:
            turn = submission.new_turn if rule.scope.per_turn else None
            (applicable if rule.scope.targets(submission.record, turn) else skipped).append(rule)
        return applicable, [rule.id for rule in skipped]

    def _group(self, result: RuleResult) -> str:
        return "holistic" if self.config.mode == "holistic" else result.tier

    def _verdict(
        self,
        submission: Submission,
        results: list[RuleResult],
        skipped: list[str],
        wall: dict[str, float],
        started: float,
    ) -> Verdict:
        holistic = self.config.mode == "holistic"
        return Verdict(
            record_id=submission.record.id,
            turn=submission.new_turn,
            mode=self.config.mode,
            ruleset=str(self.ruleset.name),
            ruleset_version=str(self.ruleset.version),
            status=aggregate_status(results),
            results=results,
            skipped=skipped,
            tiers=tier_timings(results, wall, holistic=holistic),
            total_ms=(time.perf_counter() - started) * 1000,
        )
