"""Reading and writing jobs and judgment records.

The store speaks in rows: column values in, :class:`JudgmentRecord` rows out. Turning a
pair and its judgment into those values and back is the runner's (:mod:`docket.runner.records`),
so the store imports nothing above it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from docket.errors import ConfigError
from docket.store.base import utcnow
from docket.store.tables import Job, JudgmentRecord
from docket.version import __version__


def upsert_job(
    session: Session, *, name: str, method: str, model: str, options: dict[str, Any], source: str,
    sticky: Sequence[str] = (),
) -> Job:  # fmt: skip
    """Create the job, or check that a rerun uses the same method, model and options.

    Resuming with different settings would mix incomparable judgments in one job. Only the
    options the run records are compared: jobs of older versions also recorded the options
    of other methods, which their judgments never read. ``sticky`` options are compared
    even when this run leaves them out (an option recorded only when set, such as a job's
    own instructions, must not be dropped by a rerun).
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
    keys = set(options) | {key for key in sticky if key in job.options}
    recorded = {key: job.options.get(key) for key in keys}  # older jobs recorded more
    if (job.method, job.model, recorded) != (method, model, {k: options.get(k) for k in keys}):
        raise ConfigError(
            f"job '{name}' already exists with method={job.method}, model={job.model}, "
            f"options={_shown_options(job.options)}",
            hint="use the same settings to resume it, or pick a new name with --job",
        )
    return job


def _shown_options(options: dict[str, Any]) -> dict[str, Any]:
    """Options for a message: a long text (a job's instructions) as its length."""
    return {k: f"<{len(v)} characters>" if isinstance(v, str) and len(v) > 60 else v
            for k, v in options.items()}  # fmt: skip


def finished_keys(session: Session, job: str) -> set[tuple[str, str]]:
    """(qid, docid) of every pair of ``job`` that already has a judgment."""
    rows = session.execute(
        select(JudgmentRecord.qid, JudgmentRecord.docid).where(JudgmentRecord.job == job)
    )
    return {(qid, docid) for qid, docid in rows}


def labels_of(
    session: Session, job: str, keys: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], int | None]:
    """The stored label of each of ``keys`` that ``job`` judged.

    The keys are a VALUES list joined to the table on (job, qid, docid), which searches the
    unique index once per key on SQLite and PostgreSQL alike; a row value IN list instead
    makes SQLite scan the whole job through ``ix_judgments_job``.
    """
    wanted = sorted(set(keys))
    found: dict[tuple[str, str], int | None] = {}
    for start in range(0, len(wanted), 400):  # keep each statement short
        rows = session.execute(
            *keyed_lookup("judgments", "label", job, wanted[start : start + 400])
        )
        found.update({(q, d): label for q, d, label in rows})
    return found


def keyed_lookup(table: str, column: str, job: str, keys: Sequence[tuple[str, str]]) -> tuple:
    """A statement and its parameters: ``qid, docid, column`` of ``table``'s rows of ``keys``."""
    values = ", ".join(f"(:q{i}, :d{i})" for i in range(len(keys)))
    params: dict[str, str] = {"job": job}
    for i, (qid, docid) in enumerate(keys):
        params[f"q{i}"], params[f"d{i}"] = qid, docid
    sql = (
        f"WITH k(q, d) AS (VALUES {values}) SELECT t.qid, t.docid, t.{column} FROM k "
        f"JOIN {table} t ON t.job = :job AND t.qid = k.q AND t.docid = k.d"
    )
    return text(sql), params


def judged_queries(session: Session, job: str, qids: Sequence[str]) -> set[str]:
    """The ``qids`` of which ``job`` has at least one judgment."""
    found: set[str] = set()
    for start in range(0, len(qids), 500):  # keep each IN list short
        chunk = list(qids[start : start + 500])
        rows = session.execute(
            select(JudgmentRecord.qid)
            .where(JudgmentRecord.job == job, JudgmentRecord.qid.in_(chunk))
            .distinct()
        )
        found |= {qid for (qid,) in rows}
    return found


def add_judgment_rows(session: Session, job: str, rows: Sequence[dict[str, Any]]) -> None:
    """Insert judgment records of pairs that have none yet, in one executemany.

    Each row holds the column values of one record (pair and judgment; ``job``, the
    docket version and the times are filled in here). A pair that already has a record
    (saved by another worker whose lease had expired) keeps the first one: both are
    equally valid, and a reader may have seen the first.
    """
    if not rows:
        return
    dialect = session.bind.dialect.name if session.bind else ""
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    stmt = insert(JudgmentRecord.__table__).on_conflict_do_nothing()  # Core: no ORM bulk path
    now = utcnow()
    stamp = {"job": job, "docket_version": __version__, "created_at": now, "updated_at": now}
    session.execute(stmt, [{**row, **stamp} for row in rows])


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
    (no ORM objects: several times faster to read), accepted by
    :func:`docket.runner.records.judgment_from_record` and ``pair_from_record``. ``columns``
    reads only those columns (and ``id``): leaving out the text and the transcript makes a
    pass over a large job several times cheaper.
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


def put_judgment(session: Session, job: str, values: dict[str, Any]) -> JudgmentRecord:
    """Insert or update the record of one pair (``values`` names its ``qid`` and ``docid``)."""
    record = session.scalar(
        select(JudgmentRecord).where(
            JudgmentRecord.job == job,
            JudgmentRecord.qid == values["qid"],
            JudgmentRecord.docid == values["docid"],
        )
    )
    if record is None:
        record = JudgmentRecord(job=job)
        session.add(record)
    for column, value in values.items():
        setattr(record, column, value)
    record.docket_version = __version__
    return record


def load_judgments(session: Session, job: str) -> list[JudgmentRecord]:
    """All records of ``job`` in a stable order."""
    stmt = select(JudgmentRecord).where(JudgmentRecord.job == job).order_by(JudgmentRecord.id)
    return list(session.scalars(stmt))
