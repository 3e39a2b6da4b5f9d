"""Hedge run weights and yield allocation, two pieces of :mod:`docket.holes.order`.

``hedge`` (after Aslam, Pavlu and Savell, "A unified model for metasearch, pooling, and
system evaluation", CIKM 2003): every run of a query holds a weight, 1 at the start. A
document's score is the weighted sum, over the runs that retrieve it, of a rank-based
loss that is large near the top of a ranking and falls with depth; the next document is
the unjudged candidate with the highest score. Once a document's label is known, every
run that retrieves it has its weight multiplied by ``BETA ** -loss`` when it is relevant
(the run gains weight) and by ``BETA ** loss`` when it is not (the run loses weight), so
runs that have contributed relevant documents steer the order. Judgments already in the
qrels are outcomes from the start.

``yield`` allocation: instead of strict round robin, a query at its turn adds its
expected yield ``(rel + 1) / (n + 2)`` (its relevant and judged counts, qrels included)
to a credit and draws only when the credit reaches 1 (paying 1), so a query that keeps
giving relevant documents draws on most turns and a barren one on few. The turns still
go round in qid order and a query's state only changes with its own outcomes, so the
order does not depend on the batch size.
"""

from __future__ import annotations

from collections.abc import Mapping

BETA = 0.5
"""Hedge's learning rate: a loss of 1 halves a run's weight (a gain of 1 doubles it)."""


def rank_loss(rank: int, length: int) -> float:
    """The loss of a document at ``rank`` (1-based) of a ranking of ``length``:
    half the sum of ``1 / i`` for ``i`` from ``rank`` to ``length``."""
    return 0.5 * sum(1.0 / i for i in range(rank, length + 1))


class HedgeWeights:
    """Weights of the runs of one query, and the documents they retrieve with their losses."""

    def __init__(self, rankings: Mapping[str, list[str]], known: Mapping[str, int]) -> None:
        self.weight = dict.fromkeys(rankings, 1.0)
        self.postings: dict[str, list[tuple[str, float]]] = {}
        for run, docs in rankings.items():
            for rank, docid in enumerate(docs, start=1):
                self.postings.setdefault(docid, []).append((run, rank_loss(rank, len(docs))))
        for docid, relevant in sorted(known.items()):
            if docid in self.postings:
                self.feedback(docid, bool(relevant))

    def score(self, docid: str) -> float:
        """The weighted loss of ``docid`` over the runs that retrieve it."""
        return sum(self.weight[run] * loss for run, loss in self.postings.get(docid, ()))

    def feedback(self, docid: str, relevant: bool) -> None:
        """Reward (relevant) or penalise the runs that retrieve ``docid``."""
        sign = -1.0 if relevant else 1.0
        for run, loss in self.postings.get(docid, ()):
            self.weight[run] *= BETA ** (sign * loss)
        total = sum(self.weight.values())
        if total > 0:  # keep the weights near 1 on average: no underflow on long rankings
            scale = len(self.weight) / total
            self.weight = {run: w * scale for run, w in self.weight.items()}

    def best(self, ranked: list[str], taken: set[str]) -> str | None:
        """The highest-scoring document of ``ranked`` not in ``taken`` (ties: the earlier)."""
        best, top = None, -1.0
        for docid in ranked:
            if docid not in taken:
                value = self.score(docid)
                if value > top:
                    best, top = docid, value
        return best


class YieldCredit:
    """The credit of one query under ``yield`` allocation (module docstring)."""

    def __init__(self, known: Mapping[str, int]) -> None:
        self.relevant = sum(known.values())
        self.judged = len(known)
        self.credit = 0.0

    def turn(self) -> bool:
        """Add this turn's expected yield; True when the query draws now (paying 1)."""
        self.credit += (self.relevant + 1) / (self.judged + 2)
        if self.credit >= 1.0:
            self.credit -= 1.0
            return True
        return False

    def outcome(self, relevant: bool) -> None:
        """Count a judged draw of the query."""
        self.relevant += relevant
        self.judged += 1
