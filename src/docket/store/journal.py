"""The call journal: answered LLM calls of a job's unfinished pairs, kept with the job.

A run adds the calls of pairs still in flight, a resume (on any worker, SQLite or
PostgreSQL) reads them back for the pairs it claims, and the transaction that saves a pair
deletes its calls. Completions are stored as the JSON of
:meth:`docket.llm.types.Completion.to_json` (the store imports nothing of the LLM layer).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, select, tuple_
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from docket.store.tables import CallRecord

Key = tuple[str, str]
Call = tuple[Key, str, str, dict[str, Any]]
"""One answered call: the pair's key, the request's key, the model, the completion's JSON."""


def _in(keys: Sequence[Key]):  # type: ignore[no-untyped-def]
    return tuple_(CallRecord.qid, CallRecord.docid).in_(list(keys))


def add_calls(session: Session, job: str, calls: Sequence[Call]) -> None:
    """Keep ``calls`` with ``job``; a call already kept (same pair and request) stays as is."""
    if not calls:
        return
    rows = [
        {"job": job, "qid": q, "docid": d, "key": key, "model": model, "completion": data}
        for (q, d), key, model, data in calls
    ]
    insert = postgresql.insert if session.bind.dialect.name == "postgresql" else sqlite.insert
    session.execute(insert(CallRecord).on_conflict_do_nothing(), rows)


def calls_of(session: Session, job: str, keys: Sequence[Key]) -> dict[Key, dict[str, Any]]:
    """``{pair key: {request key: completion JSON}}`` of the kept calls of ``keys``."""
    if not keys:
        return {}
    rows = session.execute(
        select(CallRecord.qid, CallRecord.docid, CallRecord.key, CallRecord.completion).where(
            CallRecord.job == job, _in(keys)
        )
    )
    found: dict[Key, dict[str, Any]] = {}
    for qid, docid, key, data in rows:
        found.setdefault((qid, docid), {})[key] = data
    return found


def drop_calls(session: Session, job: str, keys: Sequence[Key]) -> None:
    """Forget the kept calls of ``keys`` (their pairs are saved or failed)."""
    if keys:
        session.execute(delete(CallRecord).where(CallRecord.job == job, _in(keys)))
