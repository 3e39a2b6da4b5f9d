"""Retrieval measures as linear functions of a pool's labels, for pair-level estimates.

A measure averaged over queries whose per-query value is a weighted sum of the gains of
the ranked documents is ``sum_i c_i g_i`` over the pool pairs ``i``: P@k
(``c = 1 / (k Q)`` on the top k), DCG@k (``c = 1 / (log2(rank + 1) Q)``), and the
prevalence of relevant pairs in the pool (``c = 1 / N``). Documents outside the pool
count as non-relevant, as in ``ir_measures``; queries a run does not answer count 0.

Names: ``P@k`` and ``P(rel=r)@k`` (gain 1 when grade >= r, default 1), ``DCG@k`` (gain =
grade, as trec_eval), ``DCG(rel=r)@k`` (binary gain), ``prevalence`` and
``prevalence(rel=r)``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from docket.ir.formats import Qrels, Run

_NAME = re.compile(r"^(P|DCG|prevalence)(?:\(rel=(-?\d+)\))?(?:@(\d+))?$")


@dataclass(frozen=True)
class LinearMeasure:
    """A measure linear in the labels.

    Attributes:
        kind: ``P``, ``DCG`` or ``prevalence``.
        cutoff: rank cutoff k (None for prevalence).
        rel: grade from which a pair counts as relevant; None: graded gains (DCG@k).
    """

    kind: str
    cutoff: int | None
    rel: int | None

    def __str__(self) -> str:
        name = self.kind if self.rel is None else f"{self.kind}(rel={self.rel})"
        if self.kind == "P" and self.rel == 1:
            name = "P"
        return name if self.cutoff is None else f"{name}@{self.cutoff}"

    def gain(self, grades: np.ndarray) -> np.ndarray:
        """The gain of each grade: binary (grade >= rel) or the grade itself (min 0)."""
        grades = np.asarray(grades, dtype=float)
        if self.rel is None:
            return np.maximum(grades, 0.0)
        return (grades >= self.rel).astype(float)


def parse_linear(name: str) -> LinearMeasure | None:
    """The linear measure ``name`` names, or None when it is not one (nDCG, AP, R@k...)."""
    match = _NAME.match(name.strip())
    if match is None:
        return None
    kind, rel, cutoff = match.group(1), match.group(2), match.group(3)
    if (kind == "prevalence") != (cutoff is None):
        return None
    default_rel = None if kind == "DCG" else 1
    return LinearMeasure(kind, int(cutoff) if cutoff else None, int(rel) if rel else default_rel)


@dataclass(frozen=True)
class Pool:
    """The labelled pairs of a pool, in a fixed order.

    Attributes:
        pairs: ``(qid, docid)`` of every pair.
        queries: the queries the measures average over.
    """

    pairs: tuple[tuple[str, str], ...]
    queries: tuple[str, ...]

    @classmethod
    def of(cls, qrels: Qrels) -> Pool:
        """Every judged pair of ``qrels``; measures average over its queries."""
        pairs = tuple((q, d) for q in sorted(qrels) for d in sorted(qrels[q]))
        return cls(pairs, tuple(sorted(qrels)))

    def index(self) -> dict[tuple[str, str], int]:
        """Position of each pair."""
        return {pair: i for i, pair in enumerate(self.pairs)}

    def grades(self, qrels: Qrels) -> np.ndarray:
        """Grades of the pool pairs in ``qrels`` (a pair it lacks has grade 0)."""
        return np.array([qrels.get(q, {}).get(d, 0) for q, d in self.pairs], dtype=float)


def coefficients(measure: LinearMeasure, runs: Sequence[Run], pool: Pool) -> np.ndarray:
    """``(len(runs), N)`` coefficients: ``coef @ gains`` is each run's score."""
    size = len(pool.pairs)
    if measure.kind == "prevalence":
        return np.full((len(runs), size), 1.0 / size)
    index, k = pool.index(), measure.cutoff or 0
    coef = np.zeros((len(runs), size))
    queries = len(pool.queries)
    for row, run in enumerate(runs):
        for qid in pool.queries:
            for rank, docid in enumerate(run.top(qid, k), start=1):
                i = index.get((qid, docid))
                if i is not None:
                    coef[row, i] = _weight(measure, rank) / queries
    return coef


def _weight(measure: LinearMeasure, rank: int) -> float:
    if measure.kind == "P":
        return 1.0 / (measure.cutoff or 1)
    return 1.0 / math.log2(rank + 1)


def docket_only(name: str) -> bool:
    """True for the linear measures ``ir_measures`` does not know (DCG@k, prevalence)."""
    parsed = parse_linear(name)
    return parsed is not None and parsed.kind != "P"


def linear_measures(names: Iterable[str]) -> tuple[list[LinearMeasure], list[str]]:
    """Split measure names into linear measures and the others (kept as given)."""
    linear, other = [], []
    for name in names:
        parsed = parse_linear(name)
        if parsed is None:
            other.append(name)
        else:
            linear.append(parsed)
    return linear, other
