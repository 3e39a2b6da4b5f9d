"""The LLM checks: one call per rule (``sim``, ``sub``) or one call for all rules (holistic).

Both share one data block per submission, fitted to the model's prompt budget; a
submission over budget is refused (needs_review) rather than judged on a part of it.
Atomic results are cached by (rule id, rule version, model, prompt version, hash of what
the rule looks at), so unchanged content costs no call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from docket.adherence.rules import Rule
from docket.adherence.verify.check import Pending, Started
from docket.adherence.verify.llm import Call, check_holistic, check_rule
from docket.adherence.verify.prompts import (
    CHARS_PER_TOKEN,
    PROMPT_VERSION,
    SIM_FORMAT,
    SUB_FORMAT,
    DataBlock,
    common_prefix_len,
    fit_data_block,
    holistic_question,
    messages,
    prompt_chars,
    rule_question,
)
from docket.adherence.verify.replies import Judgement, parse_sim, parse_sub
from docket.adherence.verify.submission import ResultCache, Submission, view_hash
from docket.adherence.verify.verdict import RuleResult, needs_review
from docket.llm import Model


@dataclass(frozen=True)
class Budget:
    """Per-call limits of one model.

    Attributes:
        max_tokens: reply length cap.
        max_prompt_tokens: prompt budget (estimated at four characters per token).
        timeout_s: seconds one call may take before its rules become needs_review.
        review_truncated: mark results needs_review instead of dropping the oldest turns.
    """

    max_tokens: int
    max_prompt_tokens: int
    timeout_s: float
    review_truncated: bool = False


@dataclass(frozen=True)
class Style:
    """How one tier asks and reads: the answer format and its parser."""

    answer: str
    parse: Callable[[str], Judgement]


STYLES = {"sim": Style(SIM_FORMAT, parse_sim), "sub": Style(SUB_FORMAT, parse_sub)}
"""The atomic LLM tiers: ``sim`` answers in one line, ``sub`` reasons first."""


def fit(
    system: str, submission: Submission, budget: Budget, questions: list[str]
) -> DataBlock | str:
    """The submission's data block within ``budget``, or the reason it is refused."""
    overhead = len(system) + max((len(q) for q in questions), default=0) + 64
    chars = budget.max_prompt_tokens * CHARS_PER_TOKEN - overhead
    block = fit_data_block(submission.record, submission.new_turn, chars)
    if block is None:
        return "the submission is longer than the model's budget, even without earlier turns"
    if block.truncated and budget.review_truncated:
        return "the submission is longer than the model's budget (overflow=review)"
    return block


def refuse_all(rules: Sequence[Rule], reason: str, turn: int | None) -> list[RuleResult]:
    """``needs_review`` for every rule, with ``reason``."""
    return [
        needs_review(r.id, r.tier, reason, "over_budget", rule_version=r.version, turn=turn)
        for r in rules
    ]


class AtomicCheck:
    """One call per rule of one tier (``sim`` or ``sub``), to that tier's model."""

    def __init__(
        self, tier: str, model: Model | None, budget: Budget, system: str, cache: ResultCache
    ) -> None:
        self.group, self.model, self.budget = tier, model, budget
        self.style, self.system, self.cache = STYLES[tier], system, cache

    def claims(self, rule: Rule) -> bool:
        """True for the rules of this tier."""
        return rule.tier == self.group

    def required_model(self) -> str | None:
        """This tier's name when its model is missing."""
        return self.group if self.model is None else None

    def start(self, rules: Sequence[Rule], submission: Submission) -> Started:
        """Cache hits at once; one pending call per other rule, sharing the data block."""
        ready, todo = [], []
        for rule in rules:
            key = self._key(rule, submission)
            hit = self.cache.get(key)
            if hit is not None:
                ready.append(hit)
            else:
                todo.append((rule, key))
        if not todo:
            return ready, []
        questions = [rule_question(r, submission.new_turn, self.style.answer) for r, _ in todo]
        block = fit(self.system, submission, self.budget, questions)
        if isinstance(block, str):
            return ready + refuse_all([r for r, _ in todo], block, submission.new_turn), []
        pending: list[Pending] = []
        previous = ""
        for (rule, key), question in zip(todo, questions, strict=True):
            msgs = messages(self.system, block.text, question)
            text = prompt_chars(msgs)
            call = Call(
                msgs, common_prefix_len(previous, text), block.truncated, _turn(rule, submission)
            )
            pending.append(self._run(rule, key, call, submission))
            previous = text
        return ready, pending

    def _key(self, rule: Rule, submission: Submission) -> tuple[str, ...]:
        name = self.model.name if self.model is not None else ""
        return (rule.id, str(rule.version), name, PROMPT_VERSION, view_hash(rule, submission))

    async def _run(
        self, rule: Rule, key: tuple[str, ...], call: Call, submission: Submission
    ) -> list[RuleResult]:
        assert self.model is not None  # required_model() was checked by the verifier
        result = await check_rule(
            self.model,
            rule,
            call,
            submission.record,
            parse=self.style.parse,
            max_tokens=self.budget.max_tokens,
            timeout_s=self.budget.timeout_s,
        )
        self.cache.put(key, result)
        return [result]


class HolisticCheck:
    """All rules in one call to the ``sub`` model (the ablation of atomic checking)."""

    group = "holistic"

    def __init__(self, model: Model | None, budget: Budget, system: str) -> None:
        self.model, self.budget, self.system = model, budget, system

    def claims(self, rule: Rule) -> bool:
        """Every rule, deterministic ones included."""
        return True

    def required_model(self) -> str | None:
        """``sub`` when the model is missing."""
        return "sub" if self.model is None else None

    def start(self, rules: Sequence[Rule], submission: Submission) -> Started:
        """One pending call for all ``rules``, or all refused when over budget."""
        assert self.model is not None  # required_model() was checked by the verifier
        question = holistic_question(submission.new_turn)
        block = fit(self.system, submission, self.budget, [question])
        if isinstance(block, str):
            return refuse_all(rules, block, None), []
        msgs = messages(self.system, block.text, question)
        call = Call(msgs, 0, block.truncated, submission.new_turn)
        job = check_holistic(
            self.model,
            rules,
            call,
            submission.record,
            max_tokens=max(self.budget.max_tokens, 40 * len(rules)),
            timeout_s=self.budget.timeout_s,
        )
        return [], [job]


def _turn(rule: Rule, submission: Submission) -> int | None:
    """The turn a rule's result refers to (None when it is about several turns or none)."""
    if not rule.scope.per_turn:
        return None
    if submission.new_turn is not None:
        return submission.new_turn
    if rule.scope.kind == "last_turn":
        return len(submission.record.turns) - 1
    return None
