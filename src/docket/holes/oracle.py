"""The oracle judge of hole simulations: the gold label of a dropped pair, no LLM.

It measures an *order* (which pairs a budget reaches) apart from any judge's errors. It
is deliberately not a relevance method of :func:`docket.relevance.build_judge`: only
``holes simulate --oracle`` and :func:`docket.holes.simulate_orders` use it, because
real holes have no gold label; a pair without one is refused, never labelled.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping

from docket.errors import ConfigError
from docket.ir.documents import Document
from docket.jobs.spec import JobSpec
from docket.relevance.types import Judgment, Pair


class BlankCorpus:
    """Every document, with empty text: the oracle reads gold labels, not text."""

    def get_many(self, docids: Iterable[str]) -> dict[str, Document]:
        """An empty document for each id."""
        return {docid: Document(docid, "") for docid in docids}


class BlankQueries(Mapping[str, str]):
    """Every query, with empty text (for the oracle, like :class:`BlankCorpus`)."""

    def __getitem__(self, qid: str) -> str:
        return ""

    def __contains__(self, qid: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


ORACLE_PAIRS_AT_ONCE = 1024
"""Pairs the oracle judges at once: it calls no model, so one pair at a time (the embedded
model's pace) would only mean a store commit and a claim per pair."""


def oracle_spec(spec: JobSpec) -> JobSpec:
    """``spec`` for the oracle: many pairs at once unless the caller set ``concurrency``."""
    if "concurrency" in spec.settings.model_fields_set:
        return spec
    settings = spec.settings.model_copy(update={"concurrency": ORACLE_PAIRS_AT_ONCE})
    return dataclasses.replace(spec, settings=settings)


class OracleJudge:
    """Judges a pair with its own gold label (``pair.label``, ``pair.grade``)."""

    method = "oracle"
    batch_step = False  # finalize is the identity: the runner skips it

    async def judge(self, pair: Pair) -> Judgment:
        """The gold label as the judgment.

        Raises:
            ConfigError: the pair has no gold label (a real hole, not a dropped pair).
        """
        if pair.label is None:
            raise ConfigError(
                f"the oracle judge needs a gold label; pair {pair.qid}/{pair.docid} has none",
                hint="the oracle is for holes simulate only; fill real holes with a method",
            )
        return Judgment(
            pair.qid, pair.docid, self.method, int(pair.label), "judge", grade=pair.grade,
            confidence=1.0, model="oracle",
        )  # fmt: skip

    def finalize(
        self, judgments: list[Judgment], most_escalations: int | None = None
    ) -> list[Judgment]:
        """Identity."""
        return judgments
