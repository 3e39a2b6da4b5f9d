"""Agreement of label sets with gold labels, joined on (qid, docid): ``docket eval labels``.

For each label set: how many pairs join with gold and the coverage both ways; Cohen's
kappa over the grades (unweighted, linear, quadratic); kappa after binarising both sides
at every threshold of the scale (a label is relevant when it is at least the threshold);
Krippendorff's alpha (nominal, ordinal, interval); balanced accuracy and per-class recall
at the headline threshold ``rel_level``; the grade confusion matrix (rows gold, columns
the label set); per-query kappa on request. With runs, systems are also ranked under gold
and under each label set (:mod:`docket.ir.label_rankings`).

All statistics come from one confusion matrix per label set, so a file of any size costs
one pass to join and microseconds to score. The definitions are the ones of
:mod:`docket.agreement`; with ``--clip 0:3`` they are those of the LLMJudge overview
(Rahmani et al. 2025, Tables 3-4).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from docket.agreement import (
    alpha_from_confusion,
    confusion_matrix,
    kappa_from_confusion,
    mean_recall,
    recalls_from_confusion,
)
from docket.errors import ConfigError, UserError
from docket.frames import flat, frame
from docket.ir.evaluate import parse_measures
from docket.ir.formats import Run, read_runs
from docket.ir.label_files import DEFAULT_SCALE, Key, LabelSet, Scale, read_label_set
from docket.ir.label_rankings import SystemRanking, rank_systems


class QueryAgreement(BaseModel):
    """Agreement on the joined pairs of one query (None where kappa is undefined)."""

    qid: str
    pairs: int
    kappa: float | None
    headline_kappa: float | None


class LabelAgreement(BaseModel):
    """Agreement of one label set with gold (None where a statistic is undefined)."""

    name: str
    source: str
    gold_pairs: int
    label_pairs: int
    joined: int
    gold_coverage: float
    label_coverage: float
    clipped: int
    undecided: int
    kappa: float | None
    kappa_linear: float | None
    kappa_quadratic: float | None
    binary_kappa: dict[int, float | None]
    alpha_nominal: float | None
    alpha_ordinal: float | None
    alpha_interval: float | None
    rel_level: int
    balanced_accuracy: float | None
    recall_irrelevant: float | None
    recall_relevant: float | None
    confusion: list[list[int]]
    per_query: list[QueryAgreement] | None = None

    @property
    def headline(self) -> float | None:
        """Kappa after binarising at ``rel_level``: the figure tables are sorted by."""
        return self.binary_kappa[self.rel_level]


class LabelsReport(BaseModel):
    """Every label set against one gold, best headline first; rankings when runs were given."""

    gold: str
    gold_clipped: int
    scale: tuple[int, int]
    rel_level: int
    measure: str | None
    results: list[LabelAgreement]
    rankings: list[SystemRanking] | None = None

    def to_pandas(self) -> Any:
        """One row per label set with its agreement figures (per-query values and the
        confusion matrix left out; ``binary_kappa`` as ``binary_kappa.<level>`` columns).

        Raises:
            MissingDependencyError: pandas is not installed.
        """
        rows = [
            flat(result.model_dump(exclude={"per_query", "confusion"})) for result in self.results
        ]
        columns = [*dict.fromkeys(key for row in rows for key in row)] or ["name"]
        return frame(rows, columns)


def _none(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def binarise(table: np.ndarray, position: int) -> np.ndarray:
    """Collapse a grade confusion matrix to 2 x 2: grades below vs from ``position`` on."""
    groups = (slice(0, position), slice(position, None))
    return np.array([[table[r, c].sum() for c in groups] for r in groups])


def _recalls(binary: np.ndarray) -> tuple[float | None, float | None, float | None]:
    """Recall of gold-irrelevant and gold-relevant pairs, and balanced accuracy (None when a
    class has no gold pair: :func:`docket.agreement.mean_recall`)."""
    recalls = recalls_from_confusion(binary)
    return _none(recalls[0]), _none(recalls[1]), _none(mean_recall(recalls))


def table_statistics(table: np.ndarray, scale: Scale, rel_level: int) -> dict[str, Any]:
    """Every kappa, alpha and recall of :class:`LabelAgreement` from a grade confusion matrix."""
    grades = scale.grades
    values = [float(g) for g in grades]
    irrelevant, relevant, balanced = _recalls(binarise(table, grades.index(rel_level)))
    return {
        "kappa": _none(kappa_from_confusion(table)),
        "kappa_linear": _none(kappa_from_confusion(table, "linear")),
        "kappa_quadratic": _none(kappa_from_confusion(table, "quadratic")),
        "binary_kappa": {
            t: _none(kappa_from_confusion(binarise(table, grades.index(t))))
            for t in scale.thresholds
        },
        "alpha_nominal": _none(alpha_from_confusion(table, "nominal")),
        "alpha_ordinal": _none(alpha_from_confusion(table, "ordinal")),
        "alpha_interval": _none(alpha_from_confusion(table, "interval", values)),
        "balanced_accuracy": balanced,
        "recall_irrelevant": irrelevant,
        "recall_relevant": relevant,
    }


def label_agreement(
    gold: LabelSet,
    labels: LabelSet,
    scale: Scale = DEFAULT_SCALE,
    rel_level: int = 1,
    per_query: bool = False,
) -> LabelAgreement:
    """Agreement of ``labels`` with ``gold`` on the pairs both label.

    Raises:
        UserError: the two have no pair in common (the message gives both sizes).
    """
    keys = [key for key in gold.labels if key in labels.labels]
    if not keys:
        raise UserError(
            f"{labels.source}: no (qid, docid) pair in common with the gold labels "
            f"({len(labels.labels)} pairs over {_queries(labels.labels)} queries; gold "
            f"{len(gold.labels)} pairs over {_queries(gold.labels)} queries)",
            hint="check that both files use the same query and document ids",
        )
    table = _table(gold, labels, keys, scale)
    return LabelAgreement(
        name=labels.name,
        source=labels.source,
        gold_pairs=len(gold.labels),
        label_pairs=len(labels.labels),
        joined=len(keys),
        gold_coverage=len(keys) / len(gold.labels),
        label_coverage=len(keys) / len(labels.labels),
        clipped=labels.clipped,
        undecided=labels.undecided,
        rel_level=rel_level,
        confusion=table.astype(int).tolist(),
        per_query=_per_query(gold, labels, keys, scale, rel_level) if per_query else None,
        **table_statistics(table, scale, rel_level),
    )


def _queries(labels: dict[Key, int]) -> int:
    return len({qid for qid, _ in labels})


def _table(gold: LabelSet, labels: LabelSet, keys: Sequence[Key], scale: Scale) -> np.ndarray:
    return confusion_matrix(
        [gold.labels[k] for k in keys], [labels.labels[k] for k in keys], scale.grades
    )


def _per_query(
    gold: LabelSet, labels: LabelSet, keys: Sequence[Key], scale: Scale, rel_level: int
) -> list[QueryAgreement]:
    by_query: dict[str, list[Key]] = {}
    for key in keys:
        by_query.setdefault(key[0], []).append(key)
    rows = []
    for qid in sorted(by_query):
        table = _table(gold, labels, by_query[qid], scale)
        headline = kappa_from_confusion(binarise(table, scale.grades.index(rel_level)))
        kappa = _none(kappa_from_confusion(table))
        pairs = len(by_query[qid])
        rows.append(
            QueryAgreement(qid=qid, pairs=pairs, kappa=kappa, headline_kappa=_none(headline))
        )
    return rows


def sort_key(result: LabelAgreement) -> tuple[float, str]:
    """Best headline first; undefined headlines last; ties by name."""
    headline = result.headline
    return (-headline if headline is not None else math.inf, result.name)


def compare_labels(
    gold: LabelSet,
    label_sets: Sequence[LabelSet],
    scale: Scale = DEFAULT_SCALE,
    rel_level: int = 1,
    per_query: bool = False,
    runs: Sequence[Run] = (),
    measure: str = "nDCG@10",
) -> LabelsReport:
    """Agreement of every label set with gold, best headline first; rankings with ``runs``.

    Raises:
        ConfigError: ``rel_level`` is not a threshold of the scale.
        UserError: a label set shares no pair with gold, an unknown measure, or a run
            that answers none of the gold queries.
    """
    if rel_level not in scale.thresholds:
        raise ConfigError(
            f"--rel-level {rel_level} is not a threshold of the scale {scale.low}..{scale.high}",
            hint=f"use one of {scale.thresholds}",
        )
    results = [label_agreement(gold, s, scale, rel_level, per_query) for s in label_sets]
    rankings = rank_systems(gold, label_sets, runs, measure) if runs else None
    return LabelsReport(
        gold=gold.source,
        gold_clipped=gold.clipped,
        scale=(scale.low, scale.high),
        rel_level=rel_level,
        measure=rankings[0].measure if rankings else None,
        results=sorted(results, key=sort_key),
        rankings=rankings,
    )


def evaluate_labels(
    gold: str | Path,
    labels: Sequence[str | Path],
    scale: Scale = DEFAULT_SCALE,
    rel_level: int = 1,
    per_query: bool = False,
    runs: Sequence[str | Path] = (),
    measure: str = "nDCG@10",
    db: str | None = None,
) -> LabelsReport:
    """Read gold, the label sets and the runs, and compare (see :func:`compare_labels`).

    Args:
        gold: the reference labels (qrels file, JSONL, ``job:NAME`` or ``irds:ID``).
        labels: the label sets to compare with it (same kinds).
        scale: the label scale, and whether out-of-scale labels are clipped.
        rel_level: the headline binarisation threshold.
        per_query: also compute kappa per query.
        runs: TREC run files; the systems are then ranked under every label set.
        measure: the ``ir_measures`` name that ranks systems.
        db: store path or URL for ``job:`` sources.
    """
    if not labels:
        raise ConfigError("no label files given", hint="docket eval labels GOLD LABELS...")
    parse_measures([measure])  # an unknown name fails before any file is read
    gold_set = read_label_set(gold, scale, rel_level, db)
    sets = _unique([read_label_set(s, scale, rel_level, db) for s in labels])
    return compare_labels(
        gold_set, sets, scale, rel_level, per_query, read_runs(runs) if runs else (), measure
    )


def _unique(sets: list[LabelSet]) -> list[LabelSet]:
    """Label sets whose names clash are named by their full source instead."""
    names = [s.name for s in sets]
    return [
        LabelSet(s.source, s.source, s.labels, s.clipped, s.undecided)
        if names.count(s.name) > 1
        else s
        for s in sets
    ]
