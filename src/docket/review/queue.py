"""The review queue: enqueue tasks, record decisions (append-only), read final labels.

Concurrency: :func:`record_decision` first bumps the task's ``revision`` with an
``UPDATE``. That takes the database write lock (SQLite) or the row lock (PostgreSQL)
before anything is read, so two reviewers deciding at the same moment are serialised:
neither decision is lost and the required-review count is never exceeded. Call it
before other reads in the transaction: on SQLite a transaction that read first and
writes after another writer committed fails with "database is locked" (the web app
uses a fresh transaction per decision and retries that error).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from docket.errors import InputError
from docket.review.errors import (
    ForeignTaskError,
    TaskClosedError,
    UnknownReviewerError,
    UnknownTaskError,
)
from docket.review.facets import facets_of
from docket.review.models import (
    TASK_CLOSED,
    TASK_DONE,
    TASK_OPEN,
    Assignment,
    Decision,
    Reviewer,
    ReviewTask,
    TaskFacets,
)
from docket.review.payloads import validate_payload
from docket.store.base import utcnow

MAX_NOTE = 10_000
MAX_SECONDS = 24 * 3600.0


@dataclass(frozen=True)
class ReviewOutcome:
    """The reviewed result of one task.

    ``label`` is the majority of the latest decision of each reviewer (None on a tie);
    ``grade`` likewise over the reviewers who gave one.
    """

    task_id: int
    job: str
    item_key: str
    label: int | None
    grade: int | None
    n_decisions: int
    reviewers: tuple[str, ...]


def enqueue(
    session: Session,
    *,
    job: str,
    kind: str,
    item_key: str,
    payload: dict,
    required_reviews: int = 1,
    blind: bool = False,
) -> ReviewTask:
    """Add a task for human review, or return the existing one for this item.

    Idempotent on (job, kind, item_key): enqueuing the same item again returns the
    first task unchanged (its payload and decisions are kept).

    Args:
        session: an open store session (the caller commits).
        job: the job the item belongs to.
        kind: ``relevance`` or ``adherence``.
        item_key: the item's identity within the job (e.g. ``qid/docid``).
        payload: what the reviewer sees (validated against the kind).
        required_reviews: how many independent reviewers must decide (k >= 1).
        blind: hide the debate from every reviewer of this task.

    Raises:
        InputError: bad kind, payload or required_reviews.
    """
    if required_reviews < 1:
        raise InputError("must be at least 1", field="required_reviews")
    if not job or not item_key:
        raise InputError("must not be empty", field="job" if not job else "item_key")
    existing = _find(session, job, kind, item_key)
    if existing is not None:
        return existing
    values = {
        "job": job,
        "kind": kind,
        "item_key": item_key,
        "payload": validate_payload(kind, payload),
        "required_reviews": required_reviews,
        "blind": blind,
        "status": TASK_OPEN,
        "revision": 0,
        "created_at": utcnow(),
    }
    dialect = session.get_bind().dialect.name
    if dialect in _UPSERT:
        # INSERT .. ON CONFLICT DO NOTHING: a concurrent enqueue of the same item cannot
        # fail the caller's transaction, and no SAVEPOINT is needed (pysqlite's are unsafe).
        insert = _UPSERT[dialect](ReviewTask).values(**values)
        session.execute(insert.on_conflict_do_nothing(index_elements=_ITEM))
        found = _find(session, job, kind, item_key)
        if found is not None:
            _add_facets(session, found.id, kind, values["payload"], dialect)
            return found
    task = ReviewTask(**values)
    session.add(task)
    session.flush()
    _add_facets(session, task.id, kind, values["payload"], dialect)
    return task


def _add_facets(session: Session, task_id: int, kind: str, payload: dict, dialect: str) -> None:
    row = facets_of(task_id, kind, payload)
    if dialect not in _UPSERT:
        if session.get(TaskFacets, task_id) is None:
            session.add(row)
            session.flush()
        return
    columns = ("task_id", "qid", "docid", "disagreement", "title", "subtitle")
    values = {c: getattr(row, c) for c in columns}
    insert = _UPSERT[dialect](TaskFacets).values(**values)
    session.execute(insert.on_conflict_do_nothing(index_elements=["task_id"]))


_ITEM = ["job", "kind", "item_key"]
_UPSERT = {"sqlite": sqlite_insert, "postgresql": postgresql_insert}


def _find(session: Session, job: str, kind: str, item_key: str) -> ReviewTask | None:
    query = select(ReviewTask).where(
        ReviewTask.job == job, ReviewTask.kind == kind, ReviewTask.item_key == item_key
    )
    return session.scalars(query).first()


def resolve_reviewer(session: Session, reviewer: Reviewer | str) -> Reviewer:
    """The active reviewer given by object or name.

    Raises:
        UnknownReviewerError: no such active reviewer.
    """
    if isinstance(reviewer, Reviewer):
        return reviewer
    found = session.scalars(select(Reviewer).where(Reviewer.name == reviewer)).first()
    if found is None or not found.active:
        raise UnknownReviewerError(
            f"no reviewer named '{reviewer}'", hint="add one with: docket review add-reviewer"
        )
    return found


def lock_task(session: Session, task_id: int) -> ReviewTask:
    """Take the write lock on a task (bumping its revision) and return it fresh.

    Raises:
        UnknownTaskError: no such task.
    """
    bumped = session.execute(
        update(ReviewTask)
        .where(ReviewTask.id == task_id)
        .values(revision=ReviewTask.revision + 1)
        .execution_options(synchronize_session=False)
    )
    if bumped.rowcount == 0:
        raise UnknownTaskError(f"there is no review task {task_id}")
    query = select(ReviewTask).where(ReviewTask.id == task_id)
    return session.scalars(query.execution_options(populate_existing=True)).one()


def assigned_ids(session: Session, task_id: int) -> set[int]:
    """Ids of the reviewers a task is assigned to (empty: open to every reviewer)."""
    query = select(Assignment.reviewer_id).where(Assignment.task_id == task_id)
    return set(session.scalars(query))


def decider_ids(session: Session, task_id: int) -> set[int]:
    """Ids of the reviewers who have decided on a task."""
    query = select(Decision.reviewer_id).where(Decision.task_id == task_id).distinct()
    return set(session.scalars(query))


def check_can_decide(session: Session, task: ReviewTask, reviewer: Reviewer) -> set[int]:
    """Refuse a decision the reviewer may not make; return who has decided so far.

    Raises:
        TaskClosedError: the task is closed, or complete without this reviewer.
        ForeignTaskError: the task is assigned to other reviewers.
    """
    if task.status == TASK_CLOSED:
        raise TaskClosedError(f"task {task.id} is closed; no more decisions are accepted")
    assigned = assigned_ids(session, task.id)
    if assigned and reviewer.id not in assigned:
        raise ForeignTaskError(
            f"task {task.id} is assigned to other reviewers", hint="pick a task from your queue"
        )
    deciders = decider_ids(session, task.id)
    if reviewer.id not in deciders and len(deciders) >= task.required_reviews:
        raise TaskClosedError(
            f"task {task.id} already has its {task.required_reviews} required review(s)",
            hint="pick a task from your queue",
        )
    return deciders


def _check_values(label: int, grade: int | None, note: str, kind: str) -> None:
    if label not in (0, 1) or isinstance(label, bool):
        raise InputError("must be 0 or 1", field="label")
    if grade is not None and (grade not in (0, 1, 2, 3) or isinstance(grade, bool)):
        raise InputError("must be 0, 1, 2 or 3", field="grade")
    # Under TREC binarisation grades 2-3 are relevant and 0 is not (1 is borderline).
    if kind == "relevance" and grade is not None and label == 0 and grade >= 2:
        raise _contradiction("irrelevant", grade)
    if kind == "relevance" and label == 1 and grade == 0:
        raise _contradiction("relevant", grade)
    if len(note) > MAX_NOTE:
        raise InputError(f"longer than {MAX_NOTE} characters", field="note")


def _contradiction(name: str, grade: int) -> InputError:
    return InputError(
        f"'{name}' with grade {grade} contradicts itself",
        field="grade",
        hint="grades 2-3 mean relevant and grade 0 irrelevant: change the label or the grade",
    )


def record_decision(
    session: Session,
    task_id: int,
    reviewer: Reviewer | str,
    label: int,
    grade: int | None = None,
    note: str = "",
    *,
    blind: bool | None = None,
    seconds: float | None = None,
    source: str = "web",
    created_at: datetime | None = None,
) -> Decision:
    """Append a reviewer's decision on a task (a repeat by the same reviewer corrects).

    Args:
        session: an open store session; the caller commits (which releases the lock).
        task_id: the task decided on.
        reviewer: the deciding reviewer (object or name).
        label: 1 relevant (adherence: violates the rule), 0 not.
        grade: optional graded relevance 0-3.
        note: free-text reason.
        blind: whether the debate was hidden; default: the task's or reviewer's setting.
        seconds: time spent on the item; values outside 0..24 h are dropped as bogus.
        source: where the decision came from (``web``, ``api``, ``labelstudio``...).
        created_at: when it was decided, for imported history (default: now).

    Raises:
        InputError: bad label, grade or note.
        UnknownTaskError, UnknownReviewerError, TaskClosedError, ForeignTaskError.
    """
    # Lock first: on SQLite the UPDATE must be the transaction's first statement, so that
    # it waits for the write lock instead of failing on a stale read snapshot.
    task = lock_task(session, task_id)
    _check_values(label, grade, note, task.kind)
    person = resolve_reviewer(session, reviewer)
    deciders = check_can_decide(session, task, person)
    if seconds is not None and not 0.0 <= float(seconds) <= MAX_SECONDS:
        seconds = None  # a stale page or a wrong clock, not a measurement
    decision = Decision(
        task_id=task.id,
        reviewer_id=person.id,
        label=label,
        grade=grade,
        note=note,
        blind=bool(task.blind or person.blind) if blind is None else blind,
        seconds=seconds,
        source=source,
        created_at=created_at or utcnow(),
    )
    session.add(decision)
    if task.status == TASK_OPEN and len(deciders | {person.id}) >= task.required_reviews:
        task.status = TASK_DONE
    session.flush()
    return decision


def close_task(session: Session, task_id: int) -> ReviewTask:
    """Close a task: it refuses every further decision (its decisions stay).

    Raises:
        UnknownTaskError: no such task.
    """
    task = lock_task(session, task_id)
    if task.status != TASK_CLOSED:
        task.status, task.closed_at = TASK_CLOSED, utcnow()
    session.flush()
    return task


def select_tasks(
    session: Session, job: str | None = None, kind: str | None = None
) -> list[ReviewTask]:
    """Review tasks in id order, only of ``job`` and ``kind`` when given (empty means all)."""
    query = select(ReviewTask).order_by(ReviewTask.id)
    if job:
        query = query.where(ReviewTask.job == job)
    if kind:
        query = query.where(ReviewTask.kind == kind)
    return list(session.scalars(query))


def latest_decisions(session: Session, task_ids: list[int]) -> dict[int, dict[int, Decision]]:
    """For each task, the latest decision of each reviewer (corrections win)."""
    result: dict[int, dict[int, Decision]] = {}
    for start in range(0, len(task_ids), 500):  # stay under SQL parameter limits
        chunk = task_ids[start : start + 500]
        query = select(Decision).where(Decision.task_id.in_(chunk)).order_by(Decision.id)
        for decision in session.scalars(query):
            result.setdefault(decision.task_id, {})[decision.reviewer_id] = decision
    return result


def majority(values: list[int]) -> int | None:
    """The most frequent value; None when there is none or the top is tied."""
    ranked = Counter(values).most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def relevance_key(qid: str, docid: str) -> str:
    """The item key of a relevance task: ``qid<TAB>docid``."""
    return f"{qid}\t{docid}"


def reviewed_labels(
    session: Session, job: str | None = None
) -> dict[tuple[str, str], ReviewOutcome]:
    """Final reviewed relevance outcomes by (qid, docid); undecided ties are left out."""
    return {
        tuple(key.split("\t", 1)): outcome  # type: ignore[misc]
        for key, outcome in final_labels(session, job=job).items()
        if outcome.label is not None
    }


def final_labels(
    session: Session, job: str | None = None, kind: str = "relevance"
) -> dict[str, ReviewOutcome]:
    """Reviewed labels by item key, for tasks that have all their required reviews.

    With ``job=None`` all jobs are included; an item key reviewed in several jobs
    takes the outcome of the most recently created task.
    """
    query = select(ReviewTask).where(ReviewTask.kind == kind).order_by(ReviewTask.id)
    if job is not None:
        query = query.where(ReviewTask.job == job)
    tasks = list(session.scalars(query))
    latest = latest_decisions(session, [t.id for t in tasks])
    names = dict(session.execute(select(Reviewer.id, Reviewer.name)).all())
    outcomes: dict[str, ReviewOutcome] = {}
    for task in tasks:
        by_reviewer = latest.get(task.id, {})
        if len(by_reviewer) < task.required_reviews:
            continue
        decisions = list(by_reviewer.values())
        outcomes[task.item_key] = ReviewOutcome(
            task_id=task.id,
            job=task.job,
            item_key=task.item_key,
            label=majority([d.label for d in decisions]),
            grade=majority([d.grade for d in decisions if d.grade is not None]),
            n_decisions=len(decisions),
            reviewers=tuple(sorted(names[d.reviewer_id] for d in decisions)),
        )
    return outcomes
