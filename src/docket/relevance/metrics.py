"""Accuracy, escalation and cost metrics of a relevance method against gold labels.

Escalated pairs are answered by humans: a supplied mapping of human decisions, or the gold
labels standing in for humans in simulations. Pairs without a gold label count towards
escalation and cost but not towards accuracy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from docket.agreement import cohen_kappa, mean_recall, recalls_from_confusion, weighted_kappa
from docket.relevance.engagement import engagement_share
from docket.relevance.types import Judgment

Key = tuple[str, str]
AUTOMATIC = ("consensus", "judge", "adjudicator")


@dataclass(frozen=True)
class ClassRecalls:
    """Recall per class and their mean (balanced accuracy); None when a class is absent."""

    irrelevant_recall: float | None
    relevant_recall: float | None
    balanced_accuracy: float | None
    accuracy: float | None
    n: int


def class_recalls(predicted: Sequence[int], gold: Sequence[int]) -> ClassRecalls:
    """Recall of the irrelevant (0) and relevant (1) classes, their mean, and accuracy.

    Balanced accuracy follows :func:`docket.agreement.balanced_accuracy`: None when a
    class has no gold pair.
    """
    table = np.zeros((2, 3))
    for p, g in zip(predicted, gold, strict=True):
        table[g, p if p in (0, 1) else 2] += 1
    recalls = recalls_from_confusion(table)
    correct = sum(p == g for p, g in zip(predicted, gold, strict=True))
    accuracy = correct / len(gold) if gold else None
    return ClassRecalls(_none(recalls[0]), _none(recalls[1]), _none(mean_recall(recalls)),
                        accuracy, len(gold))  # fmt: skip


def _none(value: float) -> float | None:
    return None if math.isnan(value) else value


@dataclass(frozen=True)
class MethodMetrics:
    """Everything ``docket eval methods`` reports for one method.

    Attributes:
        irrelevant_recall, relevant_recall, balanced_accuracy: final labels (automatic
            ones plus human answers for escalated pairs) against gold.
        escalation_rate: share of pairs that went to a human.
        automatic_accuracy: accuracy of the automatic labels alone (pairs decided by the
            method, not by a human), over ``automatic_pairs`` pairs with gold.
        unresolved: escalated pairs the supplied human decisions do not cover (left out
            of the accuracy figures).
        kappa: Cohen's kappa of the final labels against gold (UMBRELA's headline number).
        scored_pairs: pairs with a final label and a gold label: the n of the recalls, the
            balanced accuracy and ``kappa``.
        weighted_kappa: linearly weighted kappa of final grades against gold grades, over
            the ``graded_pairs`` that have both (None when the method gives no grades or
            the gold has none: a binary method's only "grades" would be gold's own answers
            to its escalations).
        answered_by: who answered the escalated pairs: ``gold`` (standing in for humans)
            or ``reviewers`` (recorded decisions).
        answered: escalated pairs that got an answer (the rest are ``unresolved``).
        calls_per_pair, tokens_per_pair: LLM requests and prompt+completion tokens per pair,
            answers from the response cache included (the method's cost, not this run's).
        parse_failures: unparsable replies (each re-ask counts again).
        invalid_evidence: cited sentence ids that do not exist in the chunk.
        engagement: share of the parsed debate turns after round 1 that engaged (answered
            or cited another agent, or changed their own turn), over ``later_turns``;
            None without such turns (single judges, debates all decided in round 1).
    """

    method: str
    pairs: int
    gold_pairs: int
    irrelevant_recall: float | None
    relevant_recall: float | None
    balanced_accuracy: float | None
    escalation_rate: float
    escalated: int
    automatic_accuracy: float | None
    automatic_pairs: int
    unresolved: int
    calls_per_pair: float
    tokens_per_pair: float
    parse_failures: int
    invalid_evidence: int
    kappa: float | None = None
    scored_pairs: int = 0
    weighted_kappa: float | None = None
    graded_pairs: int = 0
    answered_by: str = "gold"
    answered: int = 0
    engagement: float | None = None
    later_turns: int = 0

    @property
    def escalations_answered(self) -> str:
        """``9 by gold``, ``7 by reviewers, 3 left out``, or ``none escalated``."""
        if not self.escalated:
            return "none escalated"
        text = f"{self.answered} by {self.answered_by}"
        return text + (f", {self.unresolved} left out" if self.unresolved else "")

    def to_json(self) -> dict:
        """Plain dict for reports; ``figures`` says what each figure is computed over."""
        figures = {
            name: {"value": getattr(self, name), "n": getattr(self, n_field), "over": over}
            for name, (n_field, over) in FIGURES.items()
        }
        return {**asdict(self), "escalations_answered": self.escalations_answered,
                "figures": figures}  # fmt: skip


FIGURES: dict[str, tuple[str, str]] = {
    "irrelevant_recall": ("scored_pairs", "final labels of gold-irrelevant pairs"),
    "relevant_recall": ("scored_pairs", "final labels of gold-relevant pairs"),
    "balanced_accuracy": ("scored_pairs", "final labels vs gold"),
    "kappa": ("scored_pairs", "final labels vs gold"),
    "weighted_kappa": ("graded_pairs", "final grades vs gold grades"),
    "automatic_accuracy": ("automatic_pairs", "automatic labels vs gold"),
}
"""Each agreement figure of :class:`MethodMetrics`: the field holding its n, and what it is
computed over (``final`` labels: the method's, and humans' for escalated pairs)."""


def final_label(
    judgment: Judgment, humans: Mapping[Key, int] | None, gold: Mapping[Key, int]
) -> int | None:
    """The label after review: the method's, else the human's (gold when ``humans`` is None)."""
    if judgment.label is not None:
        return judgment.label
    answers = gold if humans is None else humans
    return answers.get((judgment.qid, judgment.docid))


def final_grade(
    judgment: Judgment, humans: Mapping[Key, int] | None, gold_grades: Mapping[Key, int]
) -> int | None:
    """The grade after review: the method's; gold's for escalations gold answers; else None."""
    if judgment.label is not None and judgment.decided_by != "human":
        return judgment.grade
    return gold_grades.get((judgment.qid, judgment.docid)) if humans is None else None


def _kappas(
    pairs: Sequence[tuple[int, int]], graded: Sequence[tuple[int, int]]
) -> tuple[float | None, float | None]:
    kappa = cohen_kappa([p for p, _ in pairs], [g for _, g in pairs])
    categories = list(range(max([3, *(max(p, g) for p, g in graded)]) + 1))
    weighted = (
        weighted_kappa([p for p, _ in graded], [g for _, g in graded], categories)
        if graded
        else math.nan
    )
    return (None if math.isnan(kappa) else kappa), (None if math.isnan(weighted) else weighted)


def _graded_pairs(
    judgments: Sequence[Judgment], humans: Mapping[Key, int] | None, gold_grades: Mapping[Key, int]
) -> list[tuple[int, int]]:
    """(final grade, gold grade) of every pair that has both."""
    pairs = []
    for j in judgments:
        grade = final_grade(j, humans, gold_grades)
        if grade is not None and (j.qid, j.docid) in gold_grades:
            pairs.append((grade, gold_grades[(j.qid, j.docid)]))
    return pairs


def _scored_pairs(
    judgments: Sequence[Judgment], humans: Mapping[Key, int] | None, gold: Mapping[Key, int]
) -> tuple[list[tuple[int, int]], list[tuple[int, int]], int]:
    """(final label, gold) of every pair with both, the same for the pairs decided
    automatically, and the number of pairs left without a final label."""
    final_pairs, auto_pairs, unresolved = [], [], 0
    for j in judgments:
        key = (j.qid, j.docid)
        label = final_label(j, humans, gold)
        if label is None:
            unresolved += 1
            continue
        if key in gold:
            final_pairs.append((label, gold[key]))
            if j.decided_by in AUTOMATIC:
                auto_pairs.append((label, gold[key]))
    return final_pairs, auto_pairs, unresolved


def compute_metrics(
    method: str,
    judgments: Sequence[Judgment],
    gold: Mapping[Key, int],
    humans: Mapping[Key, int] | None = None,
    gold_grades: Mapping[Key, int] | None = None,
) -> MethodMetrics:
    """Compare ``judgments`` with ``gold``; escalated pairs are answered by ``humans``.

    Args:
        method: the method's name.
        judgments: its judgments.
        gold: gold labels by (qid, docid).
        humans: answers to escalations; None lets gold stand in for humans.
        gold_grades: gold grades, for the weighted kappa of graded methods.
    """
    # Only a method that grades has grades to compare: for a binary one the only "grades"
    # would be gold's answers to its escalations, compared with themselves.
    grades = gold_grades if any(j.grade is not None for j in judgments) else None
    graded = _graded_pairs(judgments, humans, grades or {})
    final_pairs, auto_pairs, unresolved = _scored_pairs(judgments, humans, gold)
    final = class_recalls([p for p, _ in final_pairs], [g for _, g in final_pairs])
    kappa, weighted = _kappas(final_pairs, graded)
    auto = class_recalls([p for p, _ in auto_pairs], [g for _, g in auto_pairs])
    n = len(judgments)
    escalated = sum(j.escalated for j in judgments)
    engaged, later = engagement_share(j.usage for j in judgments)
    return MethodMetrics(
        method=method,
        pairs=n,
        gold_pairs=sum((j.qid, j.docid) in gold for j in judgments),
        irrelevant_recall=final.irrelevant_recall,
        relevant_recall=final.relevant_recall,
        balanced_accuracy=final.balanced_accuracy,
        escalation_rate=escalated / n if n else 0.0,
        escalated=escalated,
        automatic_accuracy=auto.accuracy,
        automatic_pairs=auto.n,
        unresolved=unresolved,
        calls_per_pair=_per_pair(judgments, "calls", "cache_hits"),
        tokens_per_pair=_per_pair(
            judgments, "prompt_tokens", "completion_tokens", "cache_hit_tokens"
        ),
        parse_failures=sum(j.parse_failures for j in judgments),
        invalid_evidence=sum(j.invalid_evidence for j in judgments),
        kappa=kappa,
        scored_pairs=len(final_pairs),
        weighted_kappa=weighted,
        graded_pairs=len(graded),
        answered_by="gold" if humans is None else "reviewers",
        answered=escalated - unresolved,
        engagement=engaged / later if later else None,
        later_turns=later,
    )


def _per_pair(judgments: Sequence[Judgment], *fields: str) -> float:
    if not judgments:
        return 0.0
    return sum(j.usage.get(f, 0) for j in judgments for f in fields) / len(judgments)
