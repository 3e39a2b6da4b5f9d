"""Results of verifying one submission: one :class:`RuleResult` per rule and a :class:`Verdict`.

These are serialised (HTTP responses, SSE events, the store, batch output), hence pydantic.
A rule's status is ``pass``, ``fail``, ``needs_review`` or ``not_yet``. Anything the
verifier could not decide honestly (an unparseable or failed model reply, a timeout, a
check that raised, a pattern that timed out, a submission over the model's budget) is
``needs_review`` with its reason in ``error``, never ``pass`` and never ``fail``. In live
checking (a submission with a new turn), a rule that later turns can still satisfy (a
dialogue of at least four turns, at turn two) is ``not_yet``: not violated, not done.
"""

from __future__ import annotations

import uuid
from typing import Literal

from pydantic import BaseModel, Field

Status = Literal["pass", "fail", "needs_review", "not_yet"]
TierName = Literal["fmt", "sim", "sub"]
Mode = Literal["atomic", "holistic"]
FLAG_STATUSES: tuple[Status, ...] = ("fail", "needs_review")
"""The statuses an annotator is shown as flags (a ``not_yet`` is not violated, not a flag)."""
Cause = Literal[
    "", "checker", "timeout", "model_unavailable", "model_error", "unparsed", "over_budget"
]
"""Why a rule is undecided (``needs_review``); empty for decided results."""


def new_result_id() -> str:
    """A fresh id linking a result to annotator feedback."""
    return uuid.uuid4().hex


class Span(BaseModel):
    """The offending text: which turn, where in it (when found), and the text itself."""

    turn: int | None = None
    start: int | None = None
    end: int | None = None
    text: str = ""


class CallStats(BaseModel):
    """Accounting of the LLM call(s) behind one result; empty for ``fmt`` rules."""

    model: str = ""
    latency_ms: float = 0.0
    prompt_chars: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    shared_prefix_chars: int = 0
    shared_prefix_tokens: int = 0
    cached_prompt_tokens: int = 0
    prompt_hash: str = ""
    raw: list[str] = Field(default_factory=list)


class RuleResult(BaseModel):
    """The outcome of one rule on one submission.

    Attributes:
        id: unique id of this result (annotator feedback refers to it).
        rule_id: the rule's id; rule_version its content version.
        tier: fmt, sim or sub.
        status: pass, fail, needs_review (undecided: ``error`` says why) or not_yet.
        explanation: why (checker message, model reason, or what went wrong).
        span: the offending text, where there is one.
        fix: a suggested fix ("" on pass).
        turn: the turn that was checked, or None for whole-record checks.
        cached: the result came from the incremental cache, no check ran.
        truncated: the conversation was shortened to fit the model's budget.
        error: set when the check failed to run (exception, timeout, parse failure).
        cause: the kind of that failure (:data:`Cause`), for tools: ``docket verify``
            exits non-zero when a model could not be reached.
        call: accounting of the model call, for LLM tiers.
    """

    id: str = Field(default_factory=new_result_id)
    rule_id: str
    rule_version: str = ""
    tier: TierName
    status: Status
    explanation: str = ""
    span: Span | None = None
    fix: str = ""
    turn: int | None = None
    cached: bool = False
    truncated: bool = False
    error: str = ""
    cause: Cause = ""
    call: CallStats | None = None


class TierTiming(BaseModel):
    """Wall time and accounting of one tier within one submission."""

    rules: int = 0
    calls: int = 0
    cached: int = 0
    wall_ms: float = 0.0
    prompt_tokens: int = 0
    shared_prefix_tokens: int = 0
    cached_prompt_tokens: int = 0


class Verdict(BaseModel):
    """All rule results for one submission, the aggregate status and timing per tier."""

    record_id: str
    turn: int | None = None
    mode: Mode = "atomic"
    ruleset: str = ""
    ruleset_version: str = ""
    status: Status
    results: list[RuleResult]
    skipped: list[str] = Field(default_factory=list)
    tiers: dict[str, TierTiming] = Field(default_factory=dict)
    total_ms: float = 0.0

    def by_rule(self) -> dict[str, RuleResult]:
        """Results keyed by rule id."""
        return {result.rule_id: result for result in self.results}


def aggregate_status(results: list[RuleResult]) -> Status:
    """The first of ``fail``, ``needs_review``, ``not_yet`` any rule has, else ``pass``."""
    statuses = {result.status for result in results}
    for status in ("fail", "needs_review", "not_yet"):
        if status in statuses:
            return status  # type: ignore[return-value]
    return "pass"


def tier_timings(
    results: list[RuleResult], wall_ms: dict[str, float], *, holistic: bool = False
) -> dict[str, TierTiming]:
    """Sum per-tier accounting; ``wall_ms`` is measured by the verifier per tier.

    In holistic mode all rules share one call and are grouped under ``holistic``. Calls are
    counted once per distinct prompt, so a shared call is not counted per rule.
    """
    timings: dict[str, TierTiming] = {}
    seen: set[str] = set()
    for result in results:
        group = "holistic" if holistic else result.tier
        timing = timings.setdefault(group, TierTiming(wall_ms=wall_ms.get(group, 0.0)))
        timing.rules += 1
        timing.cached += int(result.cached)
        call = result.call
        if call is None or result.cached or call.prompt_hash in seen:
            continue
        seen.add(call.prompt_hash)
        timing.calls += 1
        timing.prompt_tokens += call.prompt_tokens
        timing.shared_prefix_tokens += call.shared_prefix_tokens
        timing.cached_prompt_tokens += call.cached_prompt_tokens
    return timings


def needs_review(
    rule_id: str, tier: TierName, reason: str, cause: Cause = "checker", **fields: object
) -> RuleResult:
    """A result for a rule that could not be decided; ``reason`` goes to explanation and error."""
    return RuleResult(
        rule_id=rule_id,
        tier=tier,
        status="needs_review",
        explanation=reason,
        error=reason,
        cause=cause,
        fix="Check this rule by hand.",
        **fields,  # type: ignore[arg-type]
    )
