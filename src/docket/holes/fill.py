"""Filling holes: judge pooled pairs with any relevance method (a :class:`Judge`).

:func:`build_pairs` looks up query and document texts for (qid, docid) keys, and
:func:`summarize_fill` turns finished judgments into provenance and completed qrels. The
judging itself runs as a job (:func:`docket.holes.fill_holes`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from docket.ir.corpus import Corpus
from docket.ir.formats import Qrels
from docket.ir.provenance import (
    ProvenanceRecord,
    audit_disagreements,
    compose_qrels,
    original_records,
    record_from_judgment,
)
from docket.relevance.types import Judgment, Pair


@dataclass(frozen=True)
class PairSet:
    """Pairs ready to judge, and the keys that could not be built.

    Attributes:
        pairs: pairs with query and document text (gold label set for judged pairs).
        missing_queries: keys whose query text is unknown.
        missing_documents: keys whose document is not in the corpus.
    """

    pairs: tuple[Pair, ...]
    missing_queries: tuple[tuple[str, str], ...] = ()
    missing_documents: tuple[tuple[str, str], ...] = ()


def build_pairs(
    keys: Iterable[tuple[str, str]],
    queries: Mapping[str, str],
    corpus: Corpus,
    qrels: Qrels | None = None,
    rel_level: int = 1,
    guidance: Mapping[str, str] | None = None,
) -> PairSet:
    """Build :class:`Pair` objects for (qid, docid) keys; unknown texts are counted, not fatal.

    Args:
        keys: pairs to judge, in the order to judge them.
        queries: ``{qid: query text}``.
        corpus: document lookup.
        qrels: when given, judged pairs carry their gold grade and binarised label.
        rel_level: grade from which a document counts as relevant.
        guidance: ``{qid: the collection's description of the query}`` for the prompt.
    """
    keys = list(dict.fromkeys(keys))
    documents = corpus.get_many({docid for _, docid in keys})
    pairs, no_query, no_doc = [], [], []
    for qid, docid in keys:
        if qid not in queries:
            no_query.append((qid, docid))
        elif docid not in documents:
            no_doc.append((qid, docid))
        else:
            grade = (qrels or {}).get(qid, {}).get(docid)
            label = None if grade is None else int(grade >= rel_level)
            pairs.append(Pair(qid, queries[qid], docid, documents[docid].passage, label, grade,
                              (guidance or {}).get(qid, "")))  # fmt: skip
    return PairSet(tuple(pairs), tuple(no_query), tuple(no_doc))


@dataclass(frozen=True)
class FillResult:
    """Judgments of a fill run, turned into provenance and completed qrels.

    Attributes:
        judgments: judgments of the holes (and of audited pairs, when auditing).
        records: provenance records: every original pair, then one per judgment.
        completed: original qrels plus the new labels at the requested level.
        disagreements: audit records whose label differs from the original label.
        whole_pool: with ``whole_pool``, the new labels alone for every judged pooled pair,
            the judged ones too (None otherwise): the completion that replaces the
            original labels instead of mixing them with new ones.
    """

    judgments: tuple[Judgment, ...]
    records: tuple[ProvenanceRecord, ...]
    completed: Qrels
    disagreements: tuple[ProvenanceRecord, ...] = ()
    counts: dict[str, int] = field(default_factory=dict)
    whole_pool: Qrels | None = None


def summarize_fill(
    original: Qrels,
    judgments: Sequence[Judgment],
    *,
    level: str = "reviewed",
    rel_level: int = 1,
    whole_pool: bool = False,
) -> FillResult:
    """Provenance, completed qrels and audit disagreements for finished judgments.

    Judgments are taken in (qid, docid) order, not in the order they finished, so the same
    judgments always give the same provenance file. ``whole_pool``: also the qrels of the
    new labels alone (:func:`whole_pool_qrels`).
    """
    judgments = sorted(judgments, key=lambda judgment: (judgment.qid, judgment.docid))
    records = original_records(original, rel_level)
    for judgment in judgments:
        grade = original.get(judgment.qid, {}).get(judgment.docid)
        records.append(record_from_judgment(judgment, rel_level, original=grade))
    counts: dict[str, int] = {}
    for record in records[len(records) - len(judgments) :]:
        name = ("audit " if record.audit else "") + record.source
        counts[name] = counts.get(name, 0) + 1
    return FillResult(
        judgments=tuple(judgments),
        records=tuple(records),
        completed=compose_qrels(original, records, level, rel_level),  # type: ignore[arg-type]
        disagreements=tuple(audit_disagreements(original, judgments, rel_level)),
        counts=counts,
        whole_pool=whole_pool_qrels(judgments, level, rel_level) if whole_pool else None,
    )


def whole_pool_qrels(
    judgments: Sequence[Judgment], level: str = "reviewed", rel_level: int = 1
) -> Qrels:
    """Qrels of the new labels alone: every judged pair, a judged one's original label
    replaced (Abbasiantaeb et al. 2024 found such qrels rank systems closer to the full
    human ranking than human labels mixed with model labels for the holes)."""
    records = [record_from_judgment(judgment, rel_level) for judgment in judgments]
    return compose_qrels({}, records, level, rel_level)  # type: ignore[arg-type]
