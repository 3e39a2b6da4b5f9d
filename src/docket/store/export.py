"""Exports: TREC qrels and JSONL with provenance, as judged or as reviewed."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from docket.store.base import Store
from docket.store.judgments import load_judgments
from docket.store.tables import JudgmentRecord

Level = Literal["judged", "reviewed"]


@dataclass(frozen=True)
class ExportRow:
    """One pair's final label and where it came from."""

    record: JudgmentRecord
    label: int | None
    source: str
    human: dict[str, Any] | None


def _human_labels(store: Store, job: str) -> dict[tuple[str, str], Any]:
    from docket.review.queue import reviewed_labels

    with store.session() as session:
        return reviewed_labels(session, job=job)


def export_rows(store: Store, job: str, level: Level) -> list[ExportRow]:
    """Final label per pair: the automatic label, or the reviewers' when ``level='reviewed'``."""
    humans = _human_labels(store, job) if level == "reviewed" else {}
    with store.session() as session:
        records = load_judgments(session, job)
    rows = []
    for record in records:
        outcome = humans.get((record.qid, record.docid))
        if outcome is not None:
            human = {"label": outcome.label, "n_decisions": outcome.n_decisions}
            rows.append(ExportRow(record, outcome.label, "human", human))
        else:
            rows.append(ExportRow(record, record.label, record.decided_by, None))
    return rows


def qrels_lines(rows: Iterable[ExportRow]) -> Iterator[str]:
    """TREC qrels lines; pairs still waiting for a human are left out."""
    for row in rows:
        if row.label is not None:
            yield f"{row.record.qid} 0 {row.record.docid} {row.label}\n"


def jsonl_lines(rows: Iterable[ExportRow]) -> Iterator[str]:
    """One JSON object per pair with its full provenance."""
    for row in rows:
        r = row.record
        yield (
            json.dumps(
                {
                    "qid": r.qid,
                    "docid": r.docid,
                    "label": row.label,
                    "source": row.source,
                    "judged_label": r.label,
                    "decided_by": r.decided_by,
                    "human": row.human,
                    "rounds": r.rounds,
                    "grade": r.grade,
                    "method": r.method,
                    "model": r.model,
                    "prompt_hash": r.prompt_hash,
                    "config": r.config,
                    "usage": r.usage,
                    "transcript": r.transcript,
                    "docket_version": r.docket_version,
                }
            )
            + "\n"
        )


def write_atomically(path: Path, lines: Iterable[str]) -> int:
    """Write to a temporary file beside ``path`` and rename: never a half-written export."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    count = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            for line in lines:
                handle.write(line)
                count += 1
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return count
