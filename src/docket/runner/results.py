"""The judged pairs of a job, read from the store when iterated (never all held at once)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from docket.relevance.types import Judgment, Pair
from docket.runner.records import judgment_from_record, pair_from_record
from docket.store.base import Store
from docket.store.judgments import iter_judgments
from docket.store.tables import JudgmentRecord

Key = tuple[str, str]
SUMMARY_COLUMNS = (
    "qid",
    "docid",
    "gold",
    "label",
    "grade",
    "decided_by",
    "rounds",
    "usage",
    "parse_failures",
)
"""What a summary of a job reads per pair: no text and no transcript."""


@dataclass(frozen=True)
class StoredResults:
    """``(pair, judgment)`` of every judged pair of ``job`` (restricted to ``keys`` if given).

    Each iteration reads the store afresh in batches, so a 100,000-pair job costs memory
    for one batch, not for the job. ``len`` counts without loading the judgments.
    """

    store: Store
    job: str
    keys: frozenset[Key] | None = None
    escalated_only: bool = False

    def __iter__(self) -> Iterator[tuple[Pair, Judgment]]:
        with self.store.read_session() as session:
            for record in iter_judgments(session, self.job, escalated_only=self.escalated_only):
                if self.keys is None or (record.qid, record.docid) in self.keys:
                    yield pair_from_record(record), judgment_from_record(record)

    def summary_rows(self) -> Iterator[Any]:
        """One lean row per result (:data:`SUMMARY_COLUMNS` as attributes), in one pass.

        Totals over a 100,000-pair job read these instead of whole judgments.
        """
        with self.store.read_session() as session:
            rows = iter_judgments(
                session, self.job, escalated_only=self.escalated_only, columns=SUMMARY_COLUMNS
            )
            for row in rows:
                if self.keys is None or (row.qid, row.docid) in self.keys:
                    yield row

    def get(self, key: Key) -> tuple[Pair, Judgment] | None:
        """The stored result of one pair, or None."""
        stmt = select(JudgmentRecord).where(
            JudgmentRecord.job == self.job,
            JudgmentRecord.qid == key[0],
            JudgmentRecord.docid == key[1],
        )
        with self.store.read_session() as session:
            record = session.scalar(stmt)
            return (
                None if record is None else (pair_from_record(record), judgment_from_record(record))
            )

    def __len__(self) -> int:
        stmt = select(JudgmentRecord.qid, JudgmentRecord.docid).where(
            JudgmentRecord.job == self.job
        )
        if self.escalated_only:
            stmt = stmt.where(JudgmentRecord.decided_by == "escalated")
        with self.store.read_session() as session:
            rows = session.execute(stmt)
            return sum(1 for q, d in rows if self.keys is None or (q, d) in self.keys)

    def __bool__(self) -> bool:
        return len(self) > 0

    def escalated(self) -> StoredResults:
        """The same results, escalated pairs only."""
        return StoredResults(self.store, self.job, self.keys, escalated_only=True)
