"""The verifier: one check interface for all tiers, run in parallel per submission.

For a submission (the record so far plus the new turn) every applicable rule is checked:
``fmt`` rules at once by deterministic code, ``sim`` and ``sub`` rules as concurrent calls
to each tier's own model. Results stream out as soon as each is known
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
from collections.abc import AsyncIterator, Awaitable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from docket.adherence.fmt_tier import check_fmt
from docket.adherence.llm_checks import Call, check_holistic, check_rule
from docket.adherence.prompts_adherence import (
    CHARS_PER_TOKEN,
    PROMPT_VERSION,
    common_prefix_len,
    fit_data_block,
    holistic_question,
    messages,
    prompt_chars,
    rule_question,
    system_prompt,
)
from docket.adherence.submission import ResultCache, Submission, view_hash
from docket.adherence.verdict import (
    Mode,
    RuleResult,
    Verdict,
    aggregate_status,
    needs_review,
    tier_timings,
)
from docket.errors import ConfigError
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


def _as_model(model: Model | str | None) -> Model | None:
    return Model(model) if isinstance(model, str) else model


class Verifier:
    """Checks submissions against a rule set; safe to share between concurrent requests.

    Args:
        ruleset: the rules (``RuleSet`` with ``name``, ``version`` and ``rules``).
        sim_model: model (or model name) for the ``sim`` tier: small and fast.
        sub_model: model (or model name) for the ``sub`` tier and for holistic mode.
        config: verifier settings.

    Raises:
        ConfigError: the rule set has LLM rules for a tier without a model.
    """

    def __init__(
        self,
        ruleset: Any,
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
        self._check_models()
        self.system = system_prompt(ruleset.rules)
        self.cache = ResultCache(self.config.cache_size)

    def _check_models(self) -> None:
        tiers = {rule.tier for rule in self.ruleset.rules}
        needed = (
            ({"sub"} if tiers else set()) if self.config.mode == "holistic" else tiers - {"fmt"}
        )
        for tier in sorted(needed):
            if self.models[tier] is None:
                raise ConfigError(
                    f"the rule set has {tier} rules but no {tier} model is configured",
                    hint=f"pass --{tier}-model (e.g. openai-compatible:http://127.0.0.1:8000/v1#name)",
                )

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
        """Yield each rule's result as soon as it is known, then the :class:`Verdict`."""
        started = time.perf_counter()
        applicable, skipped = self._plan(submission)
        results: list[RuleResult] = []
        wall: dict[str, float] = {}
        ready, pending = self._launch(applicable, submission)
        try:
            for result in [*ready, *self._run_fmt(applicable, submission)]:
                wall[result.tier] = (time.perf_counter() - started) * 1000
                results.append(result)
                yield result
            for next_done in asyncio.as_completed(pending):
                for result in await next_done:
                    wall[self._group(result)] = (time.perf_counter() - started) * 1000
                    results.append(result)
                    yield result
        finally:
            for task in pending:
                task.cancel()
        yield self._verdict(submission, results, skipped, wall, started)

    def _plan(self, submission: Submission) -> tuple[list[Any], list[str]]:
        applicable, skipped = [], []
        for rule in self.ruleset.rules:
            turn = submission.new_turn if rule.scope.per_turn else None
            (applicable if rule.scope.targets(submission.record, turn) else skipped).append(rule)
        return applicable, [rule.id for rule in skipped]

    def _group(self, result: RuleResult) -> str:
        return "holistic" if self.config.mode == "holistic" else result.tier

    def _run_fmt(self, rules: Iterable[Any], submission: Submission) -> list[RuleResult]:
        if self.config.mode == "holistic":
            return []
        return [check_fmt(rule, submission) for rule in rules if rule.tier == "fmt"]

    def _launch(
        self, rules: list[Any], submission: Submission
    ) -> tuple[list[RuleResult], list[asyncio.Task[list[RuleResult]]]]:
        """Start the LLM calls; return results known at once (cache hits, over budget)."""
        if self.config.mode == "holistic":
            return self._launch_holistic(rules, submission)
        ready: list[RuleResult] = []
        jobs: list[Awaitable[list[RuleResult]]] = []
        for tier in ("sub", "sim"):  # the slowest tier's requests go out first
            todo = []
            for rule in (r for r in rules if r.tier == tier):
                key = self._cache_key(rule, tier, submission)
                hit = self.cache.get(key)
                if hit is not None:
                    ready.append(hit)
                else:
                    todo.append((rule, key))
            calls, refused = self._prepare(tier, [rule for rule, _ in todo], submission)
            ready += refused
            # ``calls`` is empty when the tier was refused (over budget), else one per rule.
            jobs += [
                self._checked(tier, rule, key, call, submission)
                for (rule, key), call in zip(todo, calls, strict=False)
            ]
        return ready, [asyncio.ensure_future(job) for job in jobs]

    def _cache_key(self, rule: Any, tier: str, submission: Submission) -> tuple[str, ...]:
        model = self.models[tier]
        name = model.name if model is not None else ""
        return (rule.id, str(rule.version), name, PROMPT_VERSION, view_hash(rule, submission))

    async def _checked(
        self, tier: str, rule: Any, key: tuple[str, ...], call: Call, submission: Submission
    ) -> list[RuleResult]:
        model = self.models[tier]
        assert model is not None  # guaranteed by _check_models
        max_tokens = self.config.sub_max_tokens if tier == "sub" else self.config.sim_max_tokens
        result = await check_rule(
            model,
            rule,
            call,
            submission.record,
            max_tokens=max_tokens,
            timeout_s=self.config.timeout_s,
        )
        self.cache.put(key, result)
        return [result]

    def _budget_chars(self, tier: str, questions: list[str]) -> int:
        tokens = (
            self.config.sub_max_prompt_tokens
            if tier == "sub"
            else self.config.sim_max_prompt_tokens
        )
        overhead = len(self.system) + max((len(q) for q in questions), default=0) + 64
        return tokens * CHARS_PER_TOKEN - overhead

    def _prepare(
        self, tier: str, rules: list[Any], submission: Submission
    ) -> tuple[list[Call], list[RuleResult]]:
        """Build the calls of one tier sharing one data block; refuse them when over budget."""
        if not rules:
            return [], []
        questions = [rule_question(rule, submission.new_turn) for rule in rules]
        block = fit_data_block(
            submission.record, submission.new_turn, self._budget_chars(tier, questions)
        )
        refusal = self._refusal(block is None, block is not None and block.truncated)
        if refusal:
            turn = submission.new_turn
            return [], [
                needs_review(r.id, r.tier, refusal, rule_version=r.version, turn=turn)
                for r in rules
            ]
        calls, previous = [], ""
        for rule, question in zip(rules, questions, strict=True):
            msgs = messages(self.system, block.text, question)  # type: ignore[union-attr]
            text = prompt_chars(msgs)
            turn = _result_turn(rule, submission)
            calls.append(Call(msgs, common_prefix_len(previous, text), block.truncated, turn))  # type: ignore[union-attr]
            previous = text
        return calls, []

    def _refusal(self, too_long: bool, truncated: bool) -> str:
        if too_long:
            return "the submission is longer than the model's budget, even without earlier turns"
        if truncated and self.config.overflow == "review":
            return "the submission is longer than the model's budget (overflow=review)"
        return ""

    def _launch_holistic(
        self, rules: list[Any], submission: Submission
    ) -> tuple[list[RuleResult], list[asyncio.Task[list[RuleResult]]]]:
        model = self.models["sub"]
        if not rules or model is None:
            return [], []
        question = holistic_question(submission.new_turn)
        block = fit_data_block(
            submission.record, submission.new_turn, self._budget_chars("sub", [question])
        )
        refusal = self._refusal(block is None, block is not None and block.truncated)
        if refusal:
            return [needs_review(r.id, r.tier, refusal, rule_version=r.version) for r in rules], []
        call = Call(
            messages(self.system, block.text, question), 0, block.truncated, submission.new_turn
        )  # type: ignore[union-attr]
        max_tokens = max(self.config.sub_max_tokens, 40 * len(rules))
        job = check_holistic(
            model,
            rules,
            call,
            submission.record,
            max_tokens=max_tokens,
            timeout_s=self.config.timeout_s,
        )
        return [], [asyncio.ensure_future(job)]

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
            ruleset=str(getattr(self.ruleset, "name", "")),
            ruleset_version=str(getattr(self.ruleset, "version", "")),
            status=aggregate_status(results),
            results=results,
            skipped=skipped,
            tiers=tier_timings(results, wall, holistic=holistic),
            total_ms=(time.perf_counter() - started) * 1000,
        )


def _result_turn(rule: Any, submission: Submission) -> int | None:
    """The turn a rule's result refers to (None when it is about several turns or none)."""
    if not rule.scope.per_turn:
        return None
    if submission.new_turn is not None:
        return submission.new_turn
    if rule.scope.kind == "last_turn":
        return len(submission.record.turns) - 1
    return None
