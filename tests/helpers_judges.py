"""Small Judge implementations for tests of the runner and store (no LLM involved)."""

from __future__ import annotations

from dataclasses import dataclass, field

from docket.errors import ModelUnavailableError
from docket.relevance.types import Judgment, Pair


@dataclass
class KeywordJudge:
    """Labels a pair relevant when the query's first word occurs in the text.

    Pairs whose docid is in ``escalate`` are escalated; ``fail_on`` raises
    ModelUnavailableError to simulate a dead server.
    """

    method: str = "keyword"
    batch_step = False
    escalate: set[str] = field(default_factory=set)
    fail_on: set[str] = field(default_factory=set)
    calls: list[str] = field(default_factory=list)

    async def judge(self, pair: Pair) -> Judgment:
        self.calls.append(pair.docid)
        if pair.docid in self.fail_on:
            raise ModelUnavailableError("server gone")
        if pair.docid in self.escalate:
            return Judgment(
                pair.qid,
                pair.docid,
                self.method,
                None,
                "escalated",
                rounds=2,
                transcript=({"round": 1, "agent": "A", "label": 1},),
            )
        word = pair.query.split()[0].lower()
        label = int(word in pair.text.lower())
        return Judgment(
            pair.qid,
            pair.docid,
            self.method,
            label,
            "judge",
            usage={"calls": 1, "prompt_tokens": 10, "completion_tokens": 2},
        )

    def finalize(self, judgments: list[Judgment]) -> list[Judgment]:
        return judgments
