"""What a judging run gives back: its judgments, a DataFrame, qrels and its usage."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from docket.errors import ModelUnavailableError
from docket.frames import frame
from docket.ir.formats import Qrels
from docket.ir.job_export import Grades, Level, export_rows, relevance_value
from docket.jobs.bill.figures import JobPlan
from docket.llm.usage import Usage
from docket.relevance.types import Judgment, Pair
from docket.runner import StoredResults, Tally, apply_human_decisions
from docket.store.base import Store

FRAME_COLUMNS = (
    "qid", "docid", "query", "text", "gold_label", "gold_grade", "label", "grade",
    "decided_by", "confidence", "rounds", "method", "model", "calls", "tokens",
    "parse_failures",
)  # fmt: skip
"""Columns of :meth:`JobRun.to_pandas`, in order."""


@dataclass(frozen=True)
class JobRun:
    """A judging job after one run: what the store holds for its input, and what the run did.

    Attributes:
        job: the job's name in the store.
        store: the store the judgments are in.
        results: ``(pair, judgment)`` of the input's judged pairs, as judged, read lazily.
        outcome: what this run did (judged now, judged before, failed, busy, error).
        queued: escalated pairs of the input in the review queue.
        failed: ``(qid, docid, reason)`` of the input's pairs a server refused.
        usage: the LLM calls of this run (a rerun of a finished job: 0 calls).
        total: distinct pairs in the input.
        stopped_by: the budget cap that stopped the run and what is left ("" if none).
        spend: the job's spend in the store after the run (all runs and processes), when
            caps were given.
        plan: the run's own plan, made at its start (``spec.bill.track``), else None.
        elapsed_s: the run's wall time, from the first claim to the review queue.
    """

    job: str
    store: Store
    results: StoredResults
    outcome: Tally
    queued: int
    failed: list[tuple[str, str, str]]
    usage: Usage
    total: int
    stopped_by: str = ""
    spend: dict[str, float] | None = None
    plan: JobPlan | None = None
    elapsed_s: float = 0.0
    key_types: Mapping[str, Any] = field(default_factory=dict)
    """Dtypes of the input DataFrame's ``qid``/``docid`` columns that were not text
    (:attr:`~docket.jobs.inputs.JobInput.key_types`): :meth:`to_pandas` gives them back."""

    @property
    def error(self) -> ModelUnavailableError | None:
        """The model failure that stopped the run early, if any."""
        return self.outcome.error

    @property
    def complete(self) -> bool:
        """Every pair of the input has a stored judgment (none failed, none left to others)."""
        return len(self.results) == self.total

    def raise_for_error(self) -> None:
        """Raise the model failure that stopped the run, if any (finished pairs stay saved)."""
        if self.outcome.error is not None:
            raise self.outcome.error

    def judgments(self, reviewed: bool = True) -> list[tuple[Pair, Judgment]]:
        """``(pair, judgment)`` per judged pair; reviewers' final labels applied if ``reviewed``.

        The stored rows never change: with ``reviewed=False`` the labels are as judged.
        """
        results = list(self.results)
        return apply_human_decisions(self.store, self.job, results) if reviewed else results

    def escalations(self) -> list[tuple[Pair, Judgment]]:
        """Escalated pairs still waiting for a reviewer's decision."""
        return [(p, j) for p, j in self.judgments() if j.decided_by == "escalated"]

    def rows(self, reviewed: bool = True) -> Iterator[dict[str, Any]]:
        """One plain dict per judged pair, with the keys of :data:`FRAME_COLUMNS`."""
        for pair, judgment in self.judgments(reviewed):
            yield _row(pair, judgment)

    def to_pandas(self, reviewed: bool = True) -> Any:
        """The judgments as a pandas DataFrame (columns :data:`FRAME_COLUMNS`).

        Raises:
            MissingDependencyError: pandas is not installed.
        """
        return with_key_types(frame(self.rows(reviewed), FRAME_COLUMNS), self.key_types)

    def qrels(
        self, labels: Level = "reviewed", grades: Grades = "keep", rel_level: int = 1
    ) -> Qrels:
        """The job's labels as qrels ``{qid: {docid: value}}``, as ``docket export`` writes them.

        ``grades="keep"`` writes a pair's grade where the deciding side gave one, else
        ``rel_level`` or 0; escalated pairs without a decision are left out.
        """
        return job_qrels(self.store, self.job, labels, grades, rel_level)


def job_qrels(
    store: Store, job: str, labels: Level = "reviewed", grades: Grades = "keep", rel_level: int = 1
) -> Qrels:
    """A stored job's labels as qrels ``{qid: {docid: value}}`` (see :meth:`JobRun.qrels`);
    read from the store, so it works in a new process on a job judged earlier."""
    qrels: Qrels = {}
    for row in export_rows(store, job, labels):
        value = relevance_value(row, grades, rel_level)
        if value is not None:
            qrels.setdefault(row.record.qid, {})[row.record.docid] = value
    return qrels


def with_key_types(table: Any, key_types: Mapping[str, Any]) -> Any:
    """``table`` with its ``qid``/``docid`` columns converted back to the input's dtypes
    (integer qids stay integers, so a merge with the caller's frame works)."""
    for column, dtype in key_types.items():
        if column in table.columns:
            # ids that are no longer all numbers stay text
            with contextlib.suppress(ValueError, TypeError, OverflowError):
                table[column] = table[column].astype(dtype)
    return table


def _row(pair: Pair, judgment: Judgment) -> dict[str, Any]:
    usage = judgment.usage or {}
    return {
        "qid": pair.qid,
        "docid": pair.docid,
        "query": pair.query,
        "text": pair.text,
        "gold_label": pair.label,
        "gold_grade": pair.grade,
        "label": judgment.label,
        "grade": judgment.grade,
        "decided_by": judgment.decided_by,
        "confidence": judgment.confidence,
        "rounds": judgment.rounds,
        "method": judgment.method,
        "model": judgment.model,
        "calls": usage.get("calls", 0),
        "tokens": usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0),
        "parse_failures": judgment.parse_failures,
    }
