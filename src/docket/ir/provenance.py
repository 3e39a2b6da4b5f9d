"""Provenance of every label in completed qrels, and composing qrels at a trust level.

Each line of a provenance file is one :class:`ProvenanceRecord`. Sources:

* ``original``: the benchmark's own qrels;
* ``consensus``: the debating agents agreed (at round ``rounds``);
* ``judge``: a single LLM judge (or a vote) decided;
* ``adjudicator``: an LLM adjudicator decided a disagreement;
* ``human``: a reviewer decided;
* ``escalated-pending``: waiting for a reviewer (no label yet).

Levels for :func:`compose_qrels`: ``original`` (original only), ``automatic`` (plus
consensus, judge and adjudicator labels), ``reviewed`` (plus human decisions). Original
labels always win; audit records (judgments of already judged pairs) never change qrels.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from docket.errors import UserError
from docket.ir.formats import Qrels, write_atomically
from docket.reading import numbered_lines, validation_error
from docket.relevance.types import Judgment

Source = Literal["original", "consensus", "judge", "adjudicator", "human", "escalated-pending"]
Level = Literal["original", "automatic", "reviewed"]
LEVELS: tuple[str, ...] = ("original", "automatic", "reviewed")
AUTOMATIC: frozenset[str] = frozenset({"consensus", "judge", "adjudicator"})
_SOURCES = {"escalated": "escalated-pending"}


class ProvenanceRecord(BaseModel):
    """Where one (qid, docid) label comes from.

    Attributes:
        relevance: the grade written to the completed qrels (None while pending).
        label: binary label (1 relevant), None while pending.
        source: see the module docstring.
        rounds: debate rounds used (0 for original labels).
        method: relevance method (``dream``, ``single``, ...), empty for originals.
        model: model name, empty for originals.
        audit: True when an already judged pair was re-judged to audit its label.
        original: the original grade of an audited pair.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    qid: str
    docid: str
    relevance: int | None
    label: int | None
    source: Source
    rounds: int = 0
    method: str = ""
    model: str = ""
    audit: bool = False
    original: int | None = None

    @property
    def key(self) -> tuple[str, str]:
        """(qid, docid)."""
        return (self.qid, self.docid)


def record_from_judgment(
    judgment: Judgment, rel_level: int = 1, original: int | None = None
) -> ProvenanceRecord:
    """Provenance of a judgment; a relevant label is written as grade ``rel_level``.

    Args:
        judgment: the outcome of a relevance method.
        rel_level: the grade at which the benchmark counts a document relevant.
        original: the original grade when the pair was already judged (an audit).
    """
    label = judgment.label
    return ProvenanceRecord(
        qid=judgment.qid,
        docid=judgment.docid,
        relevance=None if label is None else (rel_level if label else 0),
        label=label,
        source=_SOURCES.get(judgment.decided_by, judgment.decided_by),
        rounds=judgment.rounds,
        method=judgment.method,
        model=judgment.model,
        audit=original is not None,
        original=original,
    )


def original_records(qrels: Qrels, rel_level: int = 1) -> list[ProvenanceRecord]:
    """One ``original`` record per judged pair."""
    return [
        ProvenanceRecord(
            qid=qid, docid=docid, relevance=grade, label=int(grade >= rel_level), source="original"
        )
        for qid in sorted(qrels)
        for docid, grade in sorted(qrels[qid].items())
    ]


def compose_qrels(
    original: Qrels,
    judgments: Iterable[ProvenanceRecord | Judgment],
    level: Level = "automatic",
    rel_level: int = 1,
) -> Qrels:
    """Qrels for one trust level: original labels plus the accepted new ones.

    A human decision replaces an automatic label of the same pair at level ``reviewed``;
    otherwise the last accepted record of a pair wins.

    Args:
        original: the benchmark's qrels (always kept as they are).
        judgments: provenance records or judgments of unjudged (or audited) pairs.
        level: ``original``, ``automatic`` or ``reviewed``.
        rel_level: grade written for relevant labels of :class:`Judgment` inputs.
    """
    if level not in LEVELS:
        raise UserError(f"unknown qrels level '{level}'", hint=f"use one of {', '.join(LEVELS)}")
    accepted = set() if level == "original" else set(AUTOMATIC)
    if level == "reviewed":
        accepted.add("human")
    chosen: dict[tuple[str, str], ProvenanceRecord] = {}
    for item in judgments:
        record = (
            item if isinstance(item, ProvenanceRecord) else record_from_judgment(item, rel_level)
        )
        if record.audit or record.source not in accepted or record.relevance is None:
            continue
        previous = chosen.get(record.key)
        if previous is None or previous.source != "human" or record.source == "human":
            chosen[record.key] = record
    completed = {qid: dict(docs) for qid, docs in original.items()}
    for (qid, docid), record in chosen.items():
        completed.setdefault(qid, {}).setdefault(docid, record.relevance)
    return completed


def audit_disagreements(
    original: Mapping[str, Mapping[str, int]],
    judgments: Iterable[Judgment],
    rel_level: int = 1,
) -> list[ProvenanceRecord]:
    """Audit records whose decided label differs from the binarised original label."""
    found = []
    for judgment in judgments:
        grade = original.get(judgment.qid, {}).get(judgment.docid)
        if grade is None or judgment.label is None:
            continue
        if judgment.label != int(grade >= rel_level):
            found.append(record_from_judgment(judgment, rel_level, original=grade))
    return found


def write_provenance(records: Iterable[ProvenanceRecord], path: str | Path) -> None:
    """Write records as JSONL, atomically (never a half-written file)."""
    write_atomically(Path(path), (record.model_dump_json() + "\n" for record in records))


def read_provenance(path: str | Path) -> list[ProvenanceRecord]:
    """Read a provenance JSONL file (InputError names the bad line and field)."""
    records = []
    for number, line in numbered_lines(path):
        try:
            records.append(ProvenanceRecord.model_validate_json(line))
        except ValidationError as exc:
            raise validation_error(exc, path, number) from exc
    return records
