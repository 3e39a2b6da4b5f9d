"""Exports of a judged job: TREC qrels and JSONL with provenance, as judged or as reviewed.

This module sits above ``review`` (it reads the reviewers' decisions), so it is not part
of ``store``, the bottom layer. Qrels come out in the order ``trec_eval`` sorts them
(qid, then docid, both by byte value); every file is written to a temporary file beside
the target and renamed, with the permissions the umask gives a new file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from docket.errors import ConfigError
from docket.ir.formats import trec_sorted, write_atomically
from docket.store.base import Store
from docket.store.judgments import load_judgments
from docket.store.tables import JudgmentRecord

__all__ = [
    "ExportRow",
    "check_export_options",
    "export_rows",
    "jsonl_lines",
    "qrels_lines",
    "relevance_value",
    "undecided_lines",
    "write_atomically",
]

Level = Literal["judged", "reviewed"]
Grades = Literal["keep", "binary"]


@dataclass(frozen=True)
class ExportRow:
    """One pair's final label and where it came from.

    Attributes:
        record: the stored judgment.
        label: final binary label (None while escalated and undecided).
        grade: final grade 0-3 when the deciding side gave one.
        source: ``human`` or the judgment's ``decided_by``.
        decisions: the latest decision of each reviewer of the pair (any level).
    """

    record: JudgmentRecord
    label: int | None
    grade: int | None
    source: str
    decisions: tuple[dict[str, Any], ...] = ()

    @property
    def undecided(self) -> bool:
        """Escalated and still without a label."""
        return self.label is None


def _reviews(session: Session, job: str) -> tuple[dict, dict[str, list[dict[str, Any]]]]:
    from docket.review.models import Reviewer
    from docket.review.queue import final_labels, latest_decisions, select_tasks

    tasks = select_tasks(session, job=job, kind="relevance")
    latest = latest_decisions(session, [t.id for t in tasks])
    names = dict(session.execute(select(Reviewer.id, Reviewer.name)).all())
    decisions = {
        task.item_key: [_decision(d, names) for d in latest.get(task.id, {}).values()]
        for task in tasks
    }
    outcomes = {k: o for k, o in final_labels(session, job=job).items() if o.label is not None}
    return outcomes, decisions


def _decision(decision: Any, names: dict[int, str]) -> dict[str, Any]:
    return {
        "reviewer": names.get(decision.reviewer_id, ""),
        "reviewer_id": decision.reviewer_id,
        "label": decision.label,
        "grade": decision.grade,
        "seconds": decision.seconds,
        "decided_at": _iso(decision.created_at),
        "source": decision.source,
    }


def export_rows(store: Store, job: str, level: Level) -> list[ExportRow]:
    """Final label per pair: the automatic label, or the reviewers' when ``level='reviewed'``."""
    from docket.review.queue import relevance_key

    with store.session() as session:
        outcomes, decisions = _reviews(session, job)
        records = load_judgments(session, job)
    rows = []
    for record in records:
        key = relevance_key(record.qid, record.docid)
        seen = tuple(sorted(decisions.get(key, []), key=lambda d: d["decided_at"] or ""))
        outcome = outcomes.get(key) if level == "reviewed" else None
        if outcome is not None:
            rows.append(ExportRow(record, outcome.label, outcome.grade, "human", seen))
        else:
            rows.append(ExportRow(record, record.label, record.grade, record.decided_by, seen))
    return rows


def relevance_value(row: ExportRow, grades: Grades = "keep", rel_level: int = 1) -> int | None:
    """The qrels value of a row: its grade (``keep``), else ``rel_level`` or 0 by label."""
    if row.label is None:
        return None
    if grades == "keep" and row.grade is not None:
        return row.grade
    return rel_level if row.label else 0


def check_export_options(grades: str, rel_level: int) -> None:
    """Refuse unknown ``--grades`` values and a relevance level below 1.

    Raises:
        ConfigError: a bad value.
    """
    if grades not in ("keep", "binary"):
        raise ConfigError(f"--grades must be keep or binary, not '{grades}'")
    if rel_level < 1:
        raise ConfigError(f"--rel-level must be at least 1, not {rel_level}")


def qrels_lines(
    rows: Iterable[ExportRow], grades: Grades = "keep", rel_level: int = 1
) -> Iterator[str]:
    """TREC qrels lines in ``trec_eval`` order; pairs still waiting for a human are left out."""
    values = {}
    for row in rows:
        value = relevance_value(row, grades, rel_level)
        if value is not None:
            values[(row.record.qid, row.record.docid)] = value
    for qid, docid in trec_sorted(values):
        yield f"{qid} 0 {docid} {values[(qid, docid)]}\n"


def undecided_lines(rows: Iterable[ExportRow]) -> Iterator[str]:
    """``qid<TAB>docid`` of every escalated pair still without a label, in qrels order."""
    keys = [(row.record.qid, row.record.docid) for row in rows if row.undecided]
    for qid, docid in trec_sorted(keys):
        yield f"{qid}\t{docid}\n"


def jsonl_lines(
    rows: Iterable[ExportRow], grades: Grades = "keep", rel_level: int = 1
) -> Iterator[str]:
    """One JSON object per pair: texts, labels, reviewers, timestamps and full provenance."""
    for row in rows:
        yield json.dumps(_json_row(row, grades, rel_level), ensure_ascii=False) + "\n"


def _json_row(row: ExportRow, grades: Grades, rel_level: int) -> dict[str, Any]:
    r = row.record
    return {
        "qid": r.qid,
        "docid": r.docid,
        "query": r.query,
        "text": r.text,
        "gold_label": r.gold,
        "label": row.label,
        "grade": row.grade,
        "relevance": relevance_value(row, grades, rel_level),
        "source": row.source,
        "judged_label": r.label,
        "judged_grade": r.grade,
        "decided_by": r.decided_by,
        "reviews": list(row.decisions),
        "rounds": r.rounds,
        "method": r.method,
        "model": r.model,
        "prompt_hash": r.prompt_hash,
        "config": r.config,
        "usage": r.usage,
        "transcript": r.transcript,
        "judged_at": _iso(r.created_at),
        "updated_at": _iso(r.updated_at),
        "docket_version": r.docket_version,
    }


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()
