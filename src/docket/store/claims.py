"""Claims: workers lease the pairs of a job, so several processes share it and pay once.

A worker claims a batch of pairs in one transaction, renews its leases while their calls
run, and marks each claim done in the transaction that saves its judgment. Two workers never
hold the same pair at once: a new claim is an insert that does nothing on conflict, and
taking over an expired lease is an update whose condition the database re-checks under
the row lock (PostgreSQL; ``SELECT ... FOR UPDATE SKIP LOCKED`` keeps workers from queueing
on each other's rows) or under the write lock (SQLite, whose writers take ``BEGIN
IMMEDIATE``).
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence

from sqlalchemy import and_, bindparam, delete, or_, select, tuple_, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from docket.store.judgments import keyed_lookup
from docket.store.tables import PairClaim

Key = tuple[str, str]
DEFAULT_LEASE_S = 300.0
DONE = 1e18
"""``expires_at`` of a judged pair's claim: a lease that never expires, so no one retakes it."""


def _in(keys: Sequence[Key]):  # type: ignore[no-untyped-def]
    return tuple_(PairClaim.qid, PairClaim.docid).in_(list(keys))


def claim(
    session: Session,
    job: str,
    keys: Sequence[Key],
    owner: str,
    *,
    lease_s: float = DEFAULT_LEASE_S,
    retry_failed: bool = False,
    take_from: Collection[str] = (),
) -> set[Key]:
    """Claim what is free among ``keys``: unclaimed, expired, or failed when retrying.

    Returns the keys this owner now holds; the others are judged, failed, or belong to
    live workers. A pair nobody claimed before costs one row of one executemany. A live
    lease of ``owner`` itself is taken back, so a batch that Ray retries after its worker
    died (same owner) goes on at once instead of waiting for its own leases to expire;
    so are live leases of the owners in ``take_from`` (workers the caller knows are dead).
    """
    if not keys:
        return set()
    now = time.time()
    until = now + lease_s
    rows = [
        {"job": job, "qid": q, "docid": d, "owner": owner, "expires_at": until} for q, d in keys
    ]
    insert = postgresql.insert if session.bind.dialect.name == "postgresql" else sqlite.insert
    new = insert(PairClaim).on_conflict_do_nothing().returning(PairClaim.qid, PairClaim.docid)
    held = {tuple(row) for row in session.execute(new, rows)}
    if len(held) < len(keys):
        held |= _take_over(session, job, [k for k in keys if k not in held], owner, until, now,
                           retry_failed, take_from)  # fmt: skip
    return held  # type: ignore[return-value]


def _take_over(
    session: Session,
    job: str,
    keys: list[Key],
    owner: str,
    until: float,
    now: float,
    retry_failed: bool,
    take_from: Collection[str] = (),
) -> set[Key]:
    """Take the expired leases, ``owner``'s own and ``take_from``'s, and failures (when
    retrying) among ``keys``."""
    own = and_(PairClaim.owner.in_([owner, *take_from]), PairClaim.expires_at < DONE)
    takeable = and_(PairClaim.failed.is_(None), or_(PairClaim.expires_at < now, own))
    if retry_failed:
        takeable = or_(takeable, PairClaim.failed.is_not(None))
    stale = (
        select(PairClaim.qid, PairClaim.docid)
        .where(PairClaim.job == job, _in(keys), takeable)
        .with_for_update(skip_locked=True)
    )
    taken = [tuple(row) for row in session.execute(stale)]
    if not taken:
        return set()
    result = session.execute(
        update(PairClaim)
        .where(PairClaim.job == job, _in(taken), takeable)
        .values(owner=owner, expires_at=until, failed=None)
        .returning(PairClaim.qid, PairClaim.docid)
    )
    return {tuple(row) for row in result}  # type: ignore[misc]


def live_owners(session: Session, job: str, keys: Sequence[Key]) -> set[str]:
    """The owners of the live (unexpired, unfinished) leases among ``keys``."""
    if not keys:
        return set()
    rows = session.execute(
        select(PairClaim.owner)
        .distinct()
        .where(
            PairClaim.job == job,
            _in(keys),
            PairClaim.failed.is_(None),
            PairClaim.expires_at >= time.time(),
            PairClaim.expires_at < DONE,
        )
    )
    return {owner for (owner,) in rows if owner}


def done_among(
    session: Session, job: str, keys: Sequence[Key], owner: str | None = None
) -> set[Key]:
    """Which of ``keys`` are judged (their claim is a done marker), by ``owner`` if given.

    A done marker keeps the owner that saved the judgment, so a run can tell the pairs it
    judged itself (an earlier attempt of the same batch) from those judged by others.
    """
    if not keys:
        return set()
    stmt = select(PairClaim.qid, PairClaim.docid).where(
        PairClaim.job == job, _in(keys), PairClaim.expires_at >= DONE
    )
    if owner is not None:
        stmt = stmt.where(PairClaim.owner == owner)
    return {tuple(row) for row in session.execute(stmt)}  # type: ignore[misc]


def mark_done(session: Session, job: str, keys: Sequence[Key], owner: str) -> None:
    """Turn ``owner``'s leases on ``keys`` into done markers (their judgments are saved)."""
    if not keys:
        return
    table = PairClaim.__table__
    stmt = (
        update(table)
        .where(
            table.c.job == bindparam("j"),
            table.c.qid == bindparam("q"),
            table.c.docid == bindparam("d"),
            table.c.owner == owner,
        )
        .values(expires_at=DONE)
    )
    session.execute(stmt, [{"j": job, "q": q, "d": d} for q, d in keys])


def renew(session: Session, job: str, owner: str, lease_s: float = DEFAULT_LEASE_S) -> int:
    """Extend every lease ``owner`` holds on ``job``; return how many."""
    result = session.execute(
        update(PairClaim)
        .where(PairClaim.job == job, PairClaim.owner == owner, PairClaim.failed.is_(None))
        .where(PairClaim.expires_at < DONE)
        .values(expires_at=time.time() + lease_s)
    )
    return result.rowcount or 0


def release(session: Session, job: str, owner: str) -> None:
    """Let go of every live claim of ``owner`` (a stopped or interrupted worker)."""
    session.execute(
        delete(PairClaim).where(
            PairClaim.job == job,
            PairClaim.owner == owner,
            PairClaim.failed.is_(None),
            PairClaim.expires_at < DONE,
        )
    )


def mark_failed(session: Session, job: str, failures: Sequence[tuple[Key, str]]) -> None:
    """Record why each pair failed; the claim stays as a failure until retried."""
    for (qid, docid), reason in failures:
        claim_row = session.get(PairClaim, (job, qid, docid))
        if claim_row is None:
            claim_row = PairClaim(job=job, qid=qid, docid=docid, attempts=0)
            session.add(claim_row)
        claim_row.owner, claim_row.expires_at = None, None
        claim_row.failed = reason
        claim_row.attempts = (claim_row.attempts or 0) + 1


def fail_unfinished(
    session: Session, job: str, keys: Sequence[Key], owner: str, reason: str
) -> list[Key]:
    """Record ``reason`` as the failure of each of ``keys`` that no one else holds or judged.

    A pair fails if it has no claim, an expired lease, or a live lease of ``owner`` (a batch
    that could not finish); judged pairs and other live workers' pairs are left alone.
    Returns the keys now failed.
    """
    if not keys:
        return []
    rows = session.execute(
        select(PairClaim.qid, PairClaim.docid, PairClaim.owner, PairClaim.expires_at,
               PairClaim.failed).where(PairClaim.job == job, _in(keys))
    ).all()  # fmt: skip
    now, claimed = time.time(), {(q, d): (o, e, f) for q, d, o, e, f in rows}
    failing = []
    for key in keys:
        held_by, expires_at, failed = claimed.get(key, (None, None, None))
        free = key not in claimed or failed is not None or (expires_at or 0) < now
        if free or (held_by == owner and (expires_at or 0) < DONE):
            failing.append(key)
    mark_failed(session, job, [(key, reason) for key in failing])
    return failing


def failed_pairs(
    session: Session, job: str, keys: Collection[Key] | None = None
) -> list[tuple[str, str, str]]:
    """``(qid, docid, reason)`` of every failed pair of ``job`` (of ``keys`` if given), by key.

    With ``keys`` (a batch of an ordered fill) only their rows are read, through the
    primary key (job, qid, docid), instead of every claim the job has kept.
    """
    if keys is None:
        rows = session.execute(
            select(PairClaim.qid, PairClaim.docid, PairClaim.failed)
            .where(PairClaim.job == job, PairClaim.failed.is_not(None))
            .order_by(PairClaim.qid, PairClaim.docid)
        )
        return [(q, d, reason or "") for q, d, reason in rows]
    wanted = sorted(set(keys))
    found: list[tuple[str, str, str]] = []
    for start in range(0, len(wanted), 400):  # keep each statement short
        rows = session.execute(
            *keyed_lookup("pair_claims", "failed", job, wanted[start : start + 400])
        )
        found += [(q, d, reason) for q, d, reason in rows if reason is not None]
    return sorted(found)
