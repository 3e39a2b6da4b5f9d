"""Budgeted hole filling: the order in which pooled pairs are judged.

Three orders over the same candidates (the holes, or the dropped pairs of a simulation):

- ``depth``: by rank, interleaved across runs (rank 1 of every run, then rank 2, ...),
  blind to what is found: classic depth-k pooling cut at the budget.
- ``mtf``: move-to-front pooling (Cormack, Palmer and Clarke, "Efficient construction of
  large test collections", SIGIR 1998). The runs of a query wait in a queue; the next
  document comes from the run at its head for as long as that run yields relevant
  documents; a non-relevant one sends the run to the back of the queue.
- ``bandit``: MaxMean bandit pooling, non-stationary variant (Losada, Parapar and Barreiro,
  "Feeling lucky? Multi-armed bandits for ordering judgements in pooling-based
  evaluation", SAC 2016; "Multi-armed bandits for adjudicating documents in pooling-based
  evaluation of information retrieval systems", IP&M 53(5), 2017). Runs are arms and a
  relevant document is a reward of 1. The next document comes from the run with the
  highest posterior mean relevance ``(rel + 1) / (n + 2)`` (a Beta(1, 1) prior); before an
  outcome is added, the run's earlier outcomes are discounted by ``gamma`` because a
  run's precision falls as one goes down its ranking (the non-stationarity).
- ``fusion``: a document prior from rank fusion across runs: a query's candidates by
  their reciprocal-rank-fusion score (the sum of ``1 / (60 + rank)`` over the runs that
  retrieve it), so a document many runs rank high comes first. Blind to what is found.
- ``hedge``: Hedge run weights (:mod:`docket.holes.hedge`): runs that have contributed
  relevant documents gain weight, and a query's candidates go by weighted rank loss.

Any order may end in ``+yield`` (e.g. ``bandit+yield``): the queries then take turns by
the yield so far instead of strictly in turn (:class:`docket.holes.hedge.YieldCredit`).

Every order works per query and the queries take turns (round robin in qid order), so a
budget is spread over the queries as depth pooling spreads it; the orders differ only in
which document of a query comes next. ``mtf`` and ``bandit`` walk each run's ranking: a
document already in the qrels that a run passes on its way is used as a free outcome of
that run (this is how existing judgments steer the order), a candidate is drawn and
judged, a candidate already drawn through another run is skipped. Candidates that no run
retrieves come last, in a seeded shuffle.

The order is a pure function of the candidates, the runs, the qrels, the seed and the
labels of the pairs drawn so far: a rerun with the same inputs and a larger budget replays
the same draws from the stored labels and continues from there. Feedback arrives per batch
(:meth:`HoleOrder.update`), and a batch holds at most one draw per query, so a query always
has its earlier outcomes when it draws again: the batch size changes how many pairs are
judged at once, not the order. A pair without a label (escalated or failed) counts as
non-relevant.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence

from docket.errors import UserError
from docket.holes.hedge import HedgeWeights, YieldCredit
from docket.ir.formats import Qrels, Run

Key = tuple[str, str]
ORDERS = ("depth", "mtf", "bandit", "fusion", "hedge")
ALLOCATIONS = ("yield",)
"""What may follow ``+`` in an order's name: how the budget is spread over the queries."""
MEASURED_ORDERS = ("depth", "mtf", "bandit")
"""The orders ``holes simulate --budget`` measures unless ``--order`` names others."""
RRF_K = 60
"""The constant of reciprocal rank fusion (Cormack, Clarke and Buettcher, SIGIR 2009)."""
GAMMA = 0.9
"""Discount of a run's earlier outcomes in ``bandit`` (1.0 would be stationary MaxMean)."""


def parse_hole_count(text: str | int, pool_size: int) -> int:
    """A budget given as ``N`` pairs or ``P%`` of the ``pool_size`` candidates, as a count.

    Raises:
        UserError: not a number, 0, or more than the pool holds (the counts in the message).
    """
    raw = str(text).strip()
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(%?)", raw)
    if match is None:
        raise UserError(f"budget {raw!r} is not N or P%", hint="e.g. --budget 200 or 20%")
    value = float(match.group(1))
    count = round(value * pool_size / 100) if match.group(2) else int(value)
    if match.group(2) == "" and value != int(value):
        raise UserError(f"budget {raw!r} is not a whole number of pairs", hint="e.g. 200 or 20%")
    if count < 1:
        raise UserError(f"budget {raw} is 0 pairs of the {pool_size} in the pool")
    if count > pool_size:
        raise UserError(f"budget {raw} is {count} pairs, over the {pool_size} in the pool")
    return count


class _Query:
    """The drawing state of one query: its runs' rankings, positions, queue and statistics."""

    def __init__(
        self, qid: str, rankings: dict[str, list[str]], candidates: set[str],
        known: Mapping[str, int], order: str, seed: int, rel_level: int, gamma: float,
    ) -> None:  # fmt: skip
        self.qid, self.order, self.gamma = qid, order, gamma
        self.rankings, self.candidates = rankings, candidates
        self.known = {d: int(g >= rel_level) for d, g in known.items()}
        self.credit = YieldCredit(self.known)
        self.taken: set[str] = set()
        self.position = dict.fromkeys(rankings, 0)
        rng = random.Random(f"{seed}:{qid}")  # str seeds are stable across processes
        names = list(rankings)
        rng.shuffle(names)
        self.queue = names  # mtf: head first; bandit: tie order
        self.stats = {name: [0.0, 0.0] for name in rankings}  # discounted (rel, n)
        reached = {d for docs in rankings.values() for d in docs}
        self.leftover = sorted(candidates - reached)
        rng.shuffle(self.leftover)
        ranked = _fused(rankings) if order == "fusion" else _interleave(rankings)
        self.by_depth = [d for d in ranked if d in candidates] + self.leftover
        self.depth_at = 0
        self.hedge = HedgeWeights(rankings, self.known) if order == "hedge" else None

    def pick(self) -> tuple[str, str | None] | None:
        """The next candidate and the run it was drawn from (None: nothing left)."""
        if self.hedge is not None:
            best = self.hedge.best(self.by_depth, self.taken)
            found = None if best is None else (best, None)
        elif self.order in ("depth", "fusion"):
            while self.depth_at < len(self.by_depth) and self.by_depth[self.depth_at] in self.taken:
                self.depth_at += 1
            at = self.depth_at
            found = (self.by_depth[at], None) if at < len(self.by_depth) else None
        else:
            found = self._walk()
        if found is None:
            choice = next((d for d in self.leftover if d not in self.taken), None)
            found = None if choice is None else (choice, None)
        if found is not None:
            self.taken.add(found[0])
        return found

    def feedback(self, run: str | None, relevant: bool, docid: str | None = None) -> None:
        """Add the outcome of a document (``docid``) drawn from ``run``."""
        if self.hedge is not None and docid is not None:
            self.hedge.feedback(docid, relevant)
        if run is None:
            return
        if self.order == "mtf":
            if not relevant and self.queue and self.queue[0] == run:
                self.queue.append(self.queue.pop(0))
        else:
            stats = self.stats[run]
            stats[0] = self.gamma * stats[0] + relevant
            stats[1] = self.gamma * stats[1] + 1

    def _walk(self) -> tuple[str, str] | None:
        """Advance the chosen run past known documents (free outcomes) to a fresh candidate."""
        while True:
            run = self._choose()
            if run is None:
                return None
            docs, at = self.rankings[run], self.position[run]
            self.position[run] = at + 1
            docid = docs[at]
            if docid in self.known:
                self.feedback(run, bool(self.known[docid]))
            elif docid in self.candidates and docid not in self.taken:
                return docid, run

    def _choose(self) -> str | None:
        live = [n for n in self.queue if self.position[n] < len(self.rankings[n])]
        if not live:
            return None
        if self.order == "mtf":
            self.queue = live + [n for n in self.queue if n not in live]
            return live[0]
        mean = {n: (self.stats[n][0] + 1) / (self.stats[n][1] + 2) for n in live}
        return max(live, key=lambda n: mean[n])  # max keeps the first of equals: seeded ties


def _fused(rankings: Mapping[str, list[str]]) -> list[str]:
    """Documents by reciprocal-rank-fusion score, highest first (ties by first rank seen)."""
    score: dict[str, float] = {}
    for docs in rankings.values():
        for rank, docid in enumerate(docs, start=1):
            score[docid] = score.get(docid, 0.0) + 1.0 / (RRF_K + rank)
    first = {d: i for i, d in enumerate(_interleave(rankings))}
    return sorted(score, key=lambda d: (-score[d], first[d]))


def _interleave(rankings: Mapping[str, list[str]]) -> list[str]:
    """Documents by rank, runs interleaved at each rank, first occurrence kept."""
    seen: dict[str, None] = {}
    for rank in range(max((len(d) for d in rankings.values()), default=0)):
        for docs in rankings.values():
            if rank < len(docs):
                seen.setdefault(docs[rank], None)
    return list(seen)


class HoleOrder:
    """Which candidates to judge next, by ``depth``, ``mtf`` or ``bandit`` (module docstring).

    Use: ``keys = order.next_batch(n)``, judge them, ``order.update(labels)``, repeat.

    Args:
        candidates: the (qid, docid) pairs that may be judged.
        runs: the systems whose rankings are walked (the order of the list breaks
            ``depth`` ties at equal rank).
        known: judgments that exist already (never drawn; free outcomes for the runs).
        order: ``depth``, ``mtf``, ``bandit``, ``fusion`` or ``hedge``, optionally with
            ``+yield`` (queries take turns by their yield so far).
        seed: breaks ties between runs, and shuffles candidates no run retrieves.
        rel_level: grade from which a known judgment counts as relevant.
        gamma: discount of earlier outcomes in ``bandit``.
    """

    def __init__(
        self, candidates: Iterable[Key], runs: Sequence[Run], known: Qrels, *,
        order: str = "depth", seed: int = 0, rel_level: int = 1, gamma: float = GAMMA,
    ) -> None:  # fmt: skip
        order, _, allocate = order.partition("+")
        if order not in ORDERS or (allocate and allocate not in ALLOCATIONS):
            raise UserError(
                f"unknown order {order + ('+' + allocate if allocate else '')!r}",
                hint=f"use one of {', '.join(ORDERS)}, optionally +yield (e.g. bandit+yield)",
            )
        self._by_yield = allocate == "yield"
        per_query: dict[str, set[str]] = {}
        for qid, docid in candidates:
            per_query.setdefault(qid, set()).add(docid)
        self.size = sum(len(docs) for docs in per_query.values())
        self._queries = [
            _Query(
                qid,
                _rankings(runs, qid, docs),
                docs,
                known.get(qid, {}),
                order,
                seed,
                rel_level,
                gamma,
            )  # fmt: skip
            for qid, docs in sorted(per_query.items())
        ]
        self._turn = 0  # index of the query whose turn it is
        self._pending: list[tuple[Key, _Query, str | None]] = []
        self.drawn: list[Key] = []

    def next_batch(self, size: int) -> list[Key]:
        """Draw up to ``size`` candidates, queries taking turns, one per query at most.

        A batch ends before a query's second draw, so every query has the outcomes of its
        earlier draws when it draws again: the order is the same for any ``size`` (it is
        the order of ``size`` 1), and a larger batch only means fewer rounds of judging.
        """
        batch: list[Key] = []
        drawing: set[int] = set()  # ids of the queries drawn from in this batch
        while len(batch) < size and self._queries:
            query = self._queries[self._turn]
            if id(query) in drawing:
                break
            if self._by_yield and not query.credit.turn():
                self._turn = (self._turn + 1) % len(self._queries)  # not its turn to draw yet
                continue
            drawing.add(id(query))
            found = query.pick()
            if found is None:
                del self._queries[self._turn]  # the index now points at the next query
                self._turn = self._turn if self._turn < len(self._queries) else 0
                continue
            self._turn = (self._turn + 1) % len(self._queries)
            key = (query.qid, found[0])
            batch.append(key)
            self._pending.append((key, query, found[1]))
        self.drawn.extend(batch)
        return batch

    def update(self, labels: Mapping[Key, int | None]) -> None:
        """Feed back the labels of the drawn pairs (missing or None: non-relevant)."""
        for key, query, run in self._pending:
            relevant = labels.get(key) == 1
            query.feedback(run, relevant, key[1])
            query.credit.outcome(relevant)
        self._pending = []


def _rankings(runs: Sequence[Run], qid: str, candidates: set[str]) -> dict[str, list[str]]:
    """Each run's ranking of the query down to its deepest candidate (runs without one left out)."""
    out: dict[str, list[str]] = {}
    for run in runs:
        docs = run.ranking.get(qid, ())
        last = max((i for i, d in enumerate(docs) if d in candidates), default=-1)
        if last >= 0:
            out[run.name] = list(docs[: last + 1])
    return out
