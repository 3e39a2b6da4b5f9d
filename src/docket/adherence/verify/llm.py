"""The ``sim`` and ``sub`` tiers: one LLM call per rule (or one for all rules, holistic).

Every way a call can go wrong (timeout, model error, unparseable reply after the re-ask,
an unexpected exception) ends as a ``needs_review`` result with the reason recorded; it is
never a pass and never an exception escaping to the caller.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from docket.adherence.record import Record
from docket.adherence.rules import Rule
from docket.adherence.verify.prompts import CHARS_PER_TOKEN, prompt_chars
from docket.adherence.verify.replies import Judgement, parse_holistic
from docket.adherence.verify.verdict import CallStats, Cause, RuleResult, Span, needs_review
from docket.errors import DocketError, ModelTimeoutError, ModelUnavailableError
from docket.llm import Completion, Message, Model, Parsed, Request

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Call:
    """One prepared LLM call of a submission.

    Attributes:
        messages: system prompt (rules), then the data and the question.
        shared_prefix_chars: characters shared with the previous call to the same model
            in this submission (what a prefix-caching engine can reuse).
        truncated: older turns were cut to fit the model's budget.
        turn: the turn being checked (None for whole-record checks).
    """

    messages: tuple[Message, ...]
    shared_prefix_chars: int
    truncated: bool
    turn: int | None

    @property
    def text(self) -> str:
        """The prompt as the serving engine sees it."""
        return prompt_chars(self.messages)


def _stats(model: Model, call: Call, parsed: Parsed[Any] | None, started: float) -> CallStats:
    completions: tuple[Completion, ...] = parsed.completions if parsed else ()
    first = completions[0] if completions else None
    chars = len(call.text)
    ratio = (
        first.prompt_tokens / chars
        if first and first.prompt_tokens and chars
        else 1 / CHARS_PER_TOKEN
    )
    return CallStats(
        model=model.name,
        latency_ms=(time.perf_counter() - started) * 1000,
        prompt_chars=chars,
        prompt_tokens=sum(c.prompt_tokens for c in completions),
        completion_tokens=sum(c.completion_tokens for c in completions),
        shared_prefix_chars=call.shared_prefix_chars,
        shared_prefix_tokens=round(call.shared_prefix_chars * ratio),
        cached_prompt_tokens=sum(c.cached_prompt_tokens for c in completions),
        prompt_hash=hashlib.sha256(call.text.encode()).hexdigest()[:16],
        raw=list(parsed.raw) if parsed else [],
    )


async def _generate(
    model: Model, call: Call, parse: Callable[[str], Any], max_tokens: int, timeout_s: float
) -> tuple[Parsed[Any] | None, str, Cause]:
    """Run the call; return the parsed reply, or None with the reason it failed and its kind."""
    request = Request(messages=call.messages, max_tokens=max_tokens, temperature=0.0)
    try:
        # The deadline counts from when the call gets a model slot, not from when it
        # queued: with one embedded-model slot, 12 rule checks run one after another.
        return await model.generate_parsed(request, parse, timeout_s=timeout_s), "", ""
    except ModelTimeoutError:
        return None, f"the model did not answer within {timeout_s:g} s", "timeout"
    except ModelUnavailableError as exc:
        return None, f"the model could not be reached: {exc.one_line()}", "model_unavailable"
    except DocketError as exc:
        return None, f"the model call failed: {exc.one_line()}", "model_error"
    except Exception as exc:  # a check that raises is a recorded result, not a crash
        log.exception("unexpected error in an LLM check")
        return None, f"the check raised {type(exc).__name__}: {exc}", "checker"


def _fail_text(rule: Rule, judgement: Judgement) -> tuple[str, str]:
    explanation = judgement.reason or f"The text breaks the rule: {rule.text}"
    fix = judgement.fix or f"Revise the text so that it follows the rule: {rule.text}"
    return explanation, fix


def judged(
    rule: Rule, judgement: Judgement, call: Call, stats: CallStats, span: Span | None
) -> RuleResult:
    """The result of a parsed judgement (pass or fail)."""
    explanation, fix = (
        _fail_text(rule, judgement) if not judgement.passed else (judgement.reason, "")
    )
    return RuleResult(
        rule_id=rule.id,
        rule_version=rule.version,
        tier=rule.tier,
        status="pass" if judgement.passed else "fail",
        explanation=explanation,
        span=None if judgement.passed else span,
        fix=fix,
        turn=call.turn,
        truncated=call.truncated,
        call=stats,
    )


async def check_rule(
    model: Model,
    rule: Rule,
    call: Call,
    record: Record,
    *,
    parse: Callable[[str], Judgement],
    max_tokens: int,
    timeout_s: float,
) -> RuleResult:
    """Check one rule with one call, reading the reply with ``parse``; any failure needs review."""
    started = time.perf_counter()
    parsed, failure, cause = await _generate(model, call, parse, max_tokens, timeout_s)
    stats = _stats(model, call, parsed, started)
    common = {
        "rule_version": rule.version,
        "turn": call.turn,
        "truncated": call.truncated,
        "call": stats,
    }
    if parsed is None:
        return needs_review(rule.id, rule.tier, failure, cause, **common)
    if not parsed.ok:
        reason = f"the model's reply could not be read, even after one re-ask: {parsed.error}"
        return needs_review(rule.id, rule.tier, reason, "unparsed", **common)
    span = locate(parsed.value.quote, record, rule, call.turn)
    return judged(rule, parsed.value, call, stats, span)


async def check_holistic(
    model: Model,
    rules: Sequence[Rule],
    call: Call,
    record: Record,
    *,
    max_tokens: int,
    timeout_s: float,
) -> list[RuleResult]:
    """Check all ``rules`` with one call (the ablation); rules missing from the reply need review."""
    started = time.perf_counter()
    ids = [rule.id for rule in rules]
    parsed, failure, cause = await _generate(
        model, call, lambda text: parse_holistic(text, ids), max_tokens, timeout_s
    )
    stats = _stats(model, call, parsed, started)
    if parsed is not None and not parsed.ok:
        failure = f"the model's reply could not be read, even after one re-ask: {parsed.error}"
        cause = "unparsed"
    verdicts: dict[str, Judgement] = parsed.value if parsed is not None and parsed.ok else {}
    results = []
    for rule in rules:
        common = {
            "rule_version": rule.version,
            "turn": call.turn,
            "truncated": call.truncated,
            "call": stats,
        }
        if rule.id in verdicts:
            results.append(judged(rule, verdicts[rule.id], call, stats, None))
        else:
            reason = failure or "the holistic reply gave no clear verdict for this rule"
            results.append(needs_review(rule.id, rule.tier, reason, cause or "unparsed", **common))
    return results


def locate(quote: str, record: Record, rule: Rule, turn: int | None) -> Span | None:
    """Find a model's quote in the checked text; keep the quote even when it is not found."""
    if not quote:
        return None
    if rule.scope.kind == "field":
        value = record.fields.get(rule.scope.field or "", "")
        start = value.find(quote)
        return (
            Span(start=start, end=start + len(quote), text=quote)
            if start >= 0
            else Span(text=quote)
        )
    candidates = [turn] if turn is not None else range(len(record.turns))
    for index in candidates:
        start = record.turns[index].text.find(quote)
        if start >= 0:
            return Span(turn=index, start=start, end=start + len(quote), text=quote)
    return Span(turn=turn, text=quote)
