"""Pairs and judgments to and from their store records (the store knows only rows).

Every field of a :class:`~docket.relevance.types.Judgment` and its pair is stored, so a
judgment is rebuilt from its record exactly (``judgment_from_record(record) == judgment``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.orm import Session

from docket.relevance.types import Judgment, Pair
from docket.store.judgments import add_judgment_rows, put_judgment
from docket.store.tables import JudgmentRecord


def judgment_values(pair: Pair, judgment: Judgment) -> dict[str, Any]:
    """The column values of a pair's record (the store adds job, version and times)."""
    return {
        "qid": pair.qid, "docid": pair.docid, "query": pair.query, "text": pair.text,
        "gold": pair.label, "method": judgment.method, "label": judgment.label,
        "grade": judgment.grade, "confidence": judgment.confidence,
        "decided_by": judgment.decided_by, "rounds": judgment.rounds,
        "transcript": list(judgment.transcript), "usage": dict(judgment.usage),
        "model": judgment.model, "prompt_hash": judgment.prompt_hash,
        "config": dict(judgment.config), "parse_failures": judgment.parse_failures,
        "invalid_evidence": judgment.invalid_evidence,
    }  # fmt: skip


def add_judgments(session: Session, job: str, results: Sequence[tuple[Pair, Judgment]]) -> None:
    """Insert the records of pairs that have none yet (the first record of a pair wins)."""
    add_judgment_rows(session, job, [judgment_values(pair, judgment) for pair, judgment in results])


def save_judgment(session: Session, job: str, pair: Pair, judgment: Judgment) -> JudgmentRecord:
    """Insert or update the record of one judgment."""
    return put_judgment(session, job, judgment_values(pair, judgment))


def judgment_from_record(record: Any) -> Judgment:
    """Rebuild the in-process Judgment from its stored record (ORM object or result row)."""
    return Judgment(
        qid=record.qid,
        docid=record.docid,
        method=record.method,
        label=record.label,
        decided_by=record.decided_by,
        rounds=record.rounds,
        grade=record.grade,
        confidence=record.confidence,
        transcript=tuple(record.transcript or ()),
        usage=dict(record.usage or {}),
        model=record.model,
        prompt_hash=record.prompt_hash,
        config=dict(record.config or {}),
        parse_failures=record.parse_failures,
        invalid_evidence=record.invalid_evidence,
    )


def pair_from_record(record: Any) -> Pair:
    """The pair a record judged (with its gold label if one was given)."""
    return Pair(
        qid=record.qid, query=record.query, docid=record.docid, text=record.text,
        label=record.gold, guidance=(record.config or {}).get("guidance", ""),
    )  # fmt: skip
