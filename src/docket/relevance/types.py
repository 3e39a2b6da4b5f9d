"""Values shared by all relevance methods: pairs in, judgments out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

DecidedBy = Literal[
    "consensus",  # agents agreed in some round (DREAM), or unanimous majority
    "judge",  # a single LLM judge (single, majority, lara's automatic part)
    "adjudicator",  # an LLM read the transcript and decided
    "human",  # a reviewer (or gold standing in for one in simulations)
    "escalated",  # waiting for a human: label is None
]


@dataclass(frozen=True)
class Pair:
    """A query-chunk pair to judge; ``label`` is the gold label (1 relevant) when known.

    ``guidance`` is the collection's own description of the query (a TREC description and
    narrative, say): it goes in the prompt after the query, as data.
    """

    qid: str
    query: str
    docid: str
    text: str
    label: int | None = None
    grade: int | None = None
    guidance: str = ""

    @property
    def key(self) -> tuple[str, str]:
        """Identity of the pair: (qid, docid)."""
        return (self.qid, self.docid)


@dataclass(frozen=True)
class Judgment:
    """The outcome for one pair, rebuildable from its fields.

    ``label`` is None exactly when the pair is escalated and no human has decided yet.
    """

    qid: str
    docid: str
    method: str
    label: int | None
    decided_by: DecidedBy
    rounds: int = 1
    grade: int | None = None
    confidence: float | None = None
    transcript: tuple[dict[str, Any], ...] = ()
    usage: dict[str, Any] = field(default_factory=dict)
    model: str = ""
    prompt_hash: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    parse_failures: int = 0
    invalid_evidence: int = 0

    @property
    def escalated(self) -> bool:
        """True when the pair went (or goes) to a human."""
        return self.decided_by in ("escalated", "human")


class Judge(Protocol):
    """A relevance method. Batch methods (LARA) post-process with ``finalize``."""

    method: str
    batch_step: bool
    """False when ``finalize`` is the identity: the runner then never loads the whole job
    to call it (DREAM, single, majority). A judge without it is taken as True
    (:func:`complete_judge`)."""

    async def judge(self, pair: Pair) -> Judgment:
        """Judge one pair."""
        ...

    def finalize(
        self, judgments: list[Judgment], most_escalations: int | None = None
    ) -> list[Judgment]:
        """Batch-level step after all pairs were judged (identity for most methods).

        ``most_escalations``: a batch step that escalates (LARA) escalates at most this many
        of ``judgments`` in all (a spend cap's ``escalations``); None: no limit.
        """
        ...


class JudgeAdapter:
    """A judge written without ``batch_step``, with the default (True) filled in.

    Everything else is the judge's own (read through to it).
    """

    batch_step = True

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)


def complete_judge(judge: Any) -> Judge:
    """``judge`` itself if it declares every :class:`Judge` member, else wrapped once in a
    :class:`JudgeAdapter` (judges written before ``batch_step`` was declared)."""
    if hasattr(judge, "batch_step"):
        return judge  # type: ignore[no-any-return]
    return JudgeAdapter(judge)
