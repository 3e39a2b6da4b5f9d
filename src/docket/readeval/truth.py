"""Independent ground-truth checks and the verify-and-repair loop for fmt violations.

A candidate sample is accepted only when the intended rule fails and every other rule
passes: ``fmt`` rules are run by code, ``sim`` and ``sub`` rules by docket's verifier with
the *judge* model(s), which should be a different model family from the generator (and
from the models being benchmarked) to avoid self-preference. Whatever is wrong with a
candidate is described as :class:`Problem` items, which become the feedback of the next
repair round and, when the rounds run out, the reason a sample is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from docket.adherence.record import Record
from docket.adherence.rules import Rule, RuleSet
from docket.adherence.verify.submission import Submission
from docket.adherence.verify.verifier import Verifier
from docket.readeval.mutations import Mutation, fmt_attempts, fmt_failures
from docket.readeval.operators import MutationContext

ProblemKind = Literal["missed", "also_broken", "undecided"]


@dataclass(frozen=True)
class Problem:
    """Something that keeps a candidate from being a clean one-violation sample.

    Attributes:
        kind: ``missed`` (the intended rule still holds), ``also_broken`` (another rule
            fails) or ``undecided`` (the judge could not decide a rule).
        rule_id: the rule concerned.
        tier: that rule's tier.
        detail: the checker's or the judge's explanation.
    """

    kind: ProblemKind
    rule_id: str
    tier: str
    detail: str

    def describe(self) -> str:
        """One line for the generator's repair feedback."""
        detail = f" ({self.detail})" if self.detail else ""
        if self.kind == "missed":
            return f"rule [{self.rule_id}] is not broken according to an independent check{detail}"
        if self.kind == "also_broken":
            return f"rule [{self.rule_id}] is broken too, but it must still hold{detail}"
        return f"rule [{self.rule_id}] could not be decided by an independent check{detail}"

    def short(self) -> str:
        """``[rule] fails: detail`` and the like, for skip and drop listings."""
        what = {"missed": "not broken", "also_broken": "fails", "undecided": "undecided"}
        return f"[{self.rule_id}] {what[self.kind]}" + (f": {self.detail}" if self.detail else "")


def drop_reason(problems: list[Problem]) -> str:
    """The reason a sample is dropped, from the problems of its last round."""
    kinds = {p.kind for p in problems}
    if "missed" in kinds:
        return "intended rule not broken"
    broken = sorted({p.tier for p in problems if p.kind == "also_broken"})
    if broken:
        return f"also broke a {'/'.join(broken)} rule"
    return "judge undecided"


@dataclass(frozen=True)
class Injected:
    """An accepted sample: the mutation and the rounds it took."""

    mutation: Mutation
    iterations: int


@dataclass(frozen=True)
class Dropped:
    """A dropped sample: why, after how many rounds, and the last problems."""

    reason: str
    iterations: int
    detail: str = ""


class GroundTruth:
    """Checks candidates: fmt rules by code, sim/sub rules by the judge's verifier.

    Args:
        ruleset: the rule set of the benchmark.
        judge: a verifier over the rule set's sim and sub rules with the judge model(s),
            or None (only fmt rules are checked; sim/sub cleanliness is then assumed).
    """

    def __init__(self, ruleset: RuleSet, judge: Verifier | None) -> None:
        self.ruleset = ruleset
        self.judge = judge
        self.tiers = {rule.id: rule.tier for rule in ruleset.rules}

    @property
    def judged(self) -> bool:
        """Whether sim/sub rules are checked by a judge."""
        return self.judge is not None

    async def problems(self, record: Record, intended: str | None) -> list[Problem]:
        """What is wrong with ``record`` as a sample whose only violation is ``intended``.

        With ``intended=None`` every rule must pass (a clean seed). The judge is asked only
        when the fmt rules are as they should be, which saves calls on hopeless candidates.
        """
        found = self._compare(self._fmt_statuses(record), intended, "fmt")
        if found or self.judge is None:
            return found
        verdict = await self.judge.verify(Submission(record))
        statuses = {r.rule_id: (r.status, r.explanation) for r in verdict.results}
        return self._compare(statuses, intended, "llm")

    def _fmt_statuses(self, record: Record) -> dict[str, tuple[str, str]]:
        failed = fmt_failures(self.ruleset, record)
        return {
            rule.id: ("fail", failed[rule.id]) if rule.id in failed else ("pass", "")
            for rule in self.ruleset.by_tier("fmt")
        }

    def _compare(
        self, statuses: dict[str, tuple[str, str]], intended: str | None, part: str
    ) -> list[Problem]:
        problems = []
        for rule_id, (status, detail) in statuses.items():
            tier = self.tiers[rule_id]
            if status == "needs_review":
                problems.append(Problem("undecided", rule_id, tier, detail))
            elif rule_id == intended and status == "pass":
                problems.append(Problem("missed", rule_id, tier, detail))
            elif rule_id != intended and status == "fail":
                problems.append(Problem("also_broken", rule_id, tier, detail))
        mine = intended is not None and (self.tiers[intended] == "fmt") == (part == "fmt")
        if mine and intended not in statuses:  # skipped: the rule does not apply at all
            problems.append(Problem("missed", intended, self.tiers[intended], "does not apply"))
        return problems


async def inject_fmt(
    rule: Rule, record: Record, truth: GroundTruth, ctx: MutationContext, max_attempts: int
) -> Injected | Dropped:
    """Break ``rule`` by code; keep the first mutation that breaks it and nothing else.

    Up to ``max_attempts`` mutations (different operators or turns) are tried.
    """
    attempts, last = 0, []
    for mutation in fmt_attempts(rule, record, ctx):
        attempts += 1
        last = await truth.problems(mutation.record, rule.id)
        if not last:
            return Injected(mutation, attempts)
        if attempts >= max_attempts:
            break
    if attempts == 0:
        return Dropped("no operator applies", 0)
    return Dropped(drop_reason(last), attempts, "; ".join(p.short() for p in last))
