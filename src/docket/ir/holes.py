"""Pooling and holes: unjudged documents in the top-k of retrieval systems.

Hole@k of a system on a query is the share of its top-k documents that have no judgment
in the qrels (the cutoff shrinks to the ranking's length when it is shorter). A system's
Hole@k is the mean over the queries of the qrels; a query the system did not answer counts
1.0. With these conventions Hole@k = 1 - Judged@k of ``ir_measures`` exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from docket.ir.formats import Qrels, Run


@dataclass(frozen=True)
class Hole:
    """An unjudged pooled pair, with the systems that retrieved it and its best rank (1-based)."""

    qid: str
    docid: str
    systems: tuple[str, ...]
    best_rank: int


@dataclass(frozen=True)
class HoleReport:
    """Result of :func:`find_holes`.

    Attributes:
        depth: pooling depth k.
        holes: unjudged pooled pairs, sorted by qid, best rank, docid.
        hole_at_k: mean Hole@k per system.
        per_query: Hole@k per system and query.
        pool_size: distinct (qid, docid) pairs in the pool.
        queries: number of queries in the qrels (the queries evaluated).
        queries_without_qrels: queries some run answers but the qrels do not judge
            (they are not pooled).
        missing_queries: per system, qrels queries the run does not answer.
        duplicates: per system, repeated documents dropped while reading the run.
        missing_documents: pooled docids absent from the corpus (when a corpus was given).
    """

    depth: int
    holes: tuple[Hole, ...]
    hole_at_k: dict[str, float]
    per_query: dict[str, dict[str, float]]
    pool_size: int
    queries: int
    queries_without_qrels: tuple[str, ...] = ()
    missing_queries: dict[str, int] = field(default_factory=dict)
    duplicates: dict[str, int] = field(default_factory=dict)
    missing_documents: tuple[tuple[str, str], ...] = ()

    @property
    def hole_keys(self) -> list[tuple[str, str]]:
        """The (qid, docid) of every hole."""
        return [(hole.qid, hole.docid) for hole in self.holes]

    def by_pool_rank(self) -> list[Hole]:
        """The holes best-ranked first, interleaved across queries.

        Every query's holes at best rank 1, then at rank 2, and so on (queries in qrels
        order, docids in order within a rank), so the first N holes spread over the
        queries the way a pool of depth N / queries would, instead of exhausting one query.
        """
        order = {qid: number for number, qid in enumerate(dict.fromkeys(h.qid for h in self.holes))}
        return sorted(self.holes, key=lambda hole: (hole.best_rank, order[hole.qid], hole.docid))

    def holes_per_query(self) -> dict[str, int]:
        """Number of holes per query."""
        counts: dict[str, int] = {}
        for hole in self.holes:
            counts[hole.qid] = counts.get(hole.qid, 0) + 1
        return counts

    def summary(self) -> dict[str, Any]:
        """JSON-ready report without the hole list (per system and per query)."""
        return {
            "depth": self.depth,
            "queries": self.queries,
            "pool_size": self.pool_size,
            "holes": len(self.holes),
            "hole_at_k": self.hole_at_k,
            "per_query": self.per_query,
            "holes_per_query": self.holes_per_query(),
            "queries_without_qrels": list(self.queries_without_qrels),
            "missing_queries": self.missing_queries,
            "duplicates": self.duplicates,
            "missing_documents": len(self.missing_documents),
        }


def pool(runs: Sequence[Run], depth: int, qids: Sequence[str]) -> dict[str, dict[str, list]]:
    """Union of every run's top-``depth`` per query.

    Returns:
        ``{qid: {docid: [systems, best_rank]}}`` for the given queries.
    """
    pooled: dict[str, dict[str, list]] = {qid: {} for qid in qids}
    for run in runs:
        for qid in qids:
            docs = pooled[qid]
            for rank, docid in enumerate(run.top(qid, depth), start=1):
                entry = docs.get(docid)
                if entry is None:
                    docs[docid] = [[run.name], rank]
                else:
                    entry[0].append(run.name)
                    entry[1] = min(entry[1], rank)
    return pooled


def hole_rate(qrels: Qrels, run: Run, depth: int) -> tuple[float, dict[str, float]]:
    """Mean and per-query Hole@``depth`` of one run (see the module docstring)."""
    per_query: dict[str, float] = {}
    for qid, judged in qrels.items():
        top = run.top(qid, depth)
        per_query[qid] = sum(d not in judged for d in top) / len(top) if top else 1.0
    mean = sum(per_query.values()) / len(per_query) if per_query else 0.0
    return mean, per_query


def find_holes(
    qrels: Qrels, runs: Sequence[Run], depth: int = 10, corpus: Any | None = None
) -> HoleReport:
    """Pool the top-``depth`` of every run and list the unjudged pairs.

    Args:
        qrels: original judgments.
        runs: the systems to pool.
        depth: pooling depth k (also the k of Hole@k).
        corpus: a :class:`docket.ir.corpus.Corpus`; when given, holes whose document it
            lacks are listed in ``missing_documents`` (they stay in ``holes``).
    """
    if depth < 1:
        raise ValueError("depth must be at least 1")
    qids = sorted(qrels)
    pooled = pool(runs, depth, qids)
    holes = [
        Hole(qid, docid, tuple(entry[0]), entry[1])
        for qid in qids
        for docid, entry in pooled[qid].items()
        if docid not in qrels[qid]
    ]
    holes.sort(key=lambda h: (h.qid, h.best_rank, h.docid))
    rates = {run.name: hole_rate(qrels, run, depth) for run in runs}
    answered = {qid for run in runs for qid in run.ranking}
    return HoleReport(
        depth=depth,
        holes=tuple(holes),
        hole_at_k={name: rate[0] for name, rate in rates.items()},
        per_query={name: rate[1] for name, rate in rates.items()},
        pool_size=sum(len(docs) for docs in pooled.values()),
        queries=len(qids),
        queries_without_qrels=tuple(sorted(answered - set(qrels))),
        missing_queries={run.name: sum(q not in run.ranking for q in qids) for run in runs},
        duplicates={run.name: run.duplicates for run in runs},
        missing_documents=_missing_documents(holes, corpus) if corpus is not None else (),
    )


def _missing_documents(holes: Sequence[Hole], corpus: Any) -> tuple[tuple[str, str], ...]:
    found = corpus.get_many({hole.docid for hole in holes})
    return tuple((h.qid, h.docid) for h in holes if h.docid not in found)
