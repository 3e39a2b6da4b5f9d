"""Reading and writing jobs and judgments."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import func, select, tuple_
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from docket.errors import ConfigError
from docket.relevance.types import Judgment, Pair
from docket.store.base import utcnow
from docket.store.tables import Job, JudgmentRecord
from docket.version import __version__


def upsert_job(
    session: Session, *, name: str, method: str, model: str, options: dict[str, Any], source: str
) -> Job:
    """Create the job, or check that a rerun uses the same method, model and options.

    Resuming with different settings would mix incomparable judgments in one job.
    """
    job = session.get(Job, name)
    if job is None:
        job = Job(
            name=name,
            method=method,
            model=model,
            options=options,
            source=source,
            docket_version=__version__,
        )
        try:
            with session.begin_nested():  # two workers may start the same job at once
                session.add(job)
            return job
        except IntegrityError:
            job = session.get(Job, name, populate_existing=True)
    if job is None:
        raise ConfigError(f"job '{name}' could not be created", hint="run the command again")
    if (job.method, job.model, job.options) != (method, model, options):
        raise ConfigError(
            f"job '{name}' already exists with method={job.method}, model={job.model}, "
            f"options={job.options}",
            hint="use the same settings to resume it, or pick a new name with --job",
        )
    return job


def finished_keys(session: Session, job: str) -> set[tuple[str, str]]:
    """(qid, docid) of every pair of ``job`` that already has a judgment."""
    rows = session.execute(
        select(JudgmentRecord.qid, JudgmentRecord.docid).where(JudgmentRecord.job == job)
    )
    return {(qid, docid) for qid, docid in rows}


def existing_keys(session: Session, job: str, keys: Sequence[tuple[str, str]]) -> set:
    """Which of ``keys`` already have a judgment in ``job``."""
    if not keys:
        return set()
    rows = session.execute(
        select(JudgmentRecord.qid, JudgmentRecord.docid).where(
            JudgmentRecord.job == job,
            tuple_(JudgmentRecord.qid, JudgmentRecord.docid).in_(list(keys)),
        )
    )
    return {tuple(row) for row in rows}


def add_judgments(session: Session, job: str, results: Sequence[tuple[Pair, Judgment]]) -> None:
    """Insert the judgments of pairs that have none yet, in one executemany.

    A pair that already has a judgment (saved by another worker whose lease had expired)
    keeps the first one: both are equally valid, and a reader may have seen the first.
    """
    if not results:
        return
    dialect = session.bind.dialect.name if session.bind else ""
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    stmt = insert(JudgmentRecord.__table__).on_conflict_do_nothing()  # Core: no ORM bulk path
    session.execute(stmt, [_row(job, pair, judgment) for pair, judgment in results])


def _row(job: str, pair: Pair, judgment: Judgment) -> dict[str, Any]:
    """The column values of a new judgment record (a Core insert, not an ORM object)."""
    now = utcnow()
    return {
        "job": job, "qid": pair.qid, "docid": pair.docid, "query": pair.query,
        "text": pair.text, "gold": pair.label, "method": judgment.method,
        "label": judgment.label, "grade": judgment.grade, "confidence": judgment.confidence,
        "decided_by": judgment.decided_by, "rounds": judgment.rounds,
        "transcript": list(judgment.transcript), "usage": dict(judgment.usage),
        "model": judgment.model, "prompt_hash": judgment.prompt_hash,
        "config": dict(judgment.config), "parse_failures": judgment.parse_failures,
        "invalid_evidence": judgment.invalid_evidence, "docket_version": __version__,
        "created_at": now, "updated_at": now,
    }  # fmt: skip


def count_judgments(session: Session, job: str) -> int:
    """How many pairs of ``job`` have a judgment."""
    stmt = select(func.count()).select_from(JudgmentRecord).where(JudgmentRecord.job == job)
    return session.scalar(stmt) or 0


def iter_judgments(
    session: Session,
    job: str,
    *,
    escalated_only: bool = False,
    batch: int = 2000,
    columns: Sequence[str] | None = None,
) -> Iterator[Any]:
    """The rows of ``job`` in a stable order, read in batches (constant memory).

    Rows are plain result rows with the columns of :class:`JudgmentRecord` as attributes
    (no ORM objects: several times faster to read), accepted by ``judgment_from_record``
    and ``pair_from_record``. ``columns`` reads only those columns (and ``id``): leaving out
    the text and the transcript makes a pass over a large job several times cheaper.
    """
    table = JudgmentRecord.__table__
    wanted = [table.c.id, *(table.c[name] for name in columns or () if name != "id")]
    stmt = select(*wanted) if columns else select(table)
    stmt = stmt.where(table.c.job == job)
    if escalated_only:
        stmt = stmt.where(table.c.decided_by == "escalated")
    last = 0
    while True:
        chunk = session.execute(
            stmt.where(table.c.id > last).order_by(table.c.id).limit(batch)
        ).all()
        if not chunk:
            return
        yield from chunk
        last = chunk[-1].id


def save_judgment(session: Session, job: str, pair: Pair, judgment: Judgment) -> JudgmentRecord:
    """Insert or update the record of one judgment."""
    record = session.scalar(
        select(JudgmentRecord).where(
            JudgmentRecord.job == job,
            JudgmentRecord.qid == pair.qid,
            JudgmentRecord.docid == pair.docid,
        )
    )
    if record is None:
        record = JudgmentRecord(job=job, qid=pair.qid, docid=pair.docid)
        session.add(record)
    record.query, record.text, record.gold = pair.query, pair.text, pair.label
    _copy_judgment(record, judgment)
    return record


def _copy_judgment(record: JudgmentRecord, judgment: Judgment) -> None:
    record.method = judgment.method
    record.label = judgment.label
    record.grade = judgment.grade
    record.confidence = judgment.confidence
    record.decided_by = judgment.decided_by
    record.rounds = judgment.rounds
    record.transcript = list(judgment.transcript)
    record.usage = dict(judgment.usage)
    record.model = judgment.model
    record.prompt_hash = judgment.prompt_hash
    record.config = dict(judgment.config)
    record.parse_failures = judgment.parse_failures
    record.invalid_evidence = judgment.invalid_evidence
    record.docket_version = __version__


def judgment_from_record(record: JudgmentRecord) -> Judgment:
    """Rebuild the in-process Judgment from its stored record."""
    return Judgment(
        qid=record.qid,
        docid=record.docid,
        method=record.method,
        label=record.label,
        decided_by=record.decided_by,  # type: ignore[arg-type]
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


def pair_from_record(record: JudgmentRecord) -> Pair:
    """The pair a record judged (with its gold label if one was given)."""
    return Pair(
        qid=record.qid, query=record.query, docid=record.docid, text=record.text, label=record.gold
    )


def load_judgments(session: Session, job: str) -> list[JudgmentRecord]:
    """All records of ``job`` in a stable order."""
    stmt = select(JudgmentRecord).where(JudgmentRecord.job == job).order_by(JudgmentRecord.id)
    return list(session.scalars(stmt))
