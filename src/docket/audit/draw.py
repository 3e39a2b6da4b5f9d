"""Draw a stratified random audit of a job's automatic labels, and read its answers.

:func:`draw_audit` puts a random sample of a job's automatically decided pairs into the
review queue as blind tasks (query and chunk only) and records each drawn pair's stratum
and inclusion probability in the store (``audit_pairs``). Within a stratum the pairs are
taken in a seeded random order (:func:`docket.audit.strata.order_key`), so a draw is
reproducible (same seed, same pairs) and extendable (a larger size takes a longer prefix:
the pairs already drawn stay, and every pair of a stratum has probability ``n_h / N_h``).

:func:`audit_labels` reads the drawn pairs back with the automatic label and the human
answer (None while unanswered); the certificate and prediction-powered evaluation use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from docket.audit.proportions import (
    allocate,
    minimum_per_stratum,
    neyman_weights,
    smoothed_error_rate,
)
from docket.audit.strata import (
    CENSUS,
    Population,
    PopulationPair,
    check_job,
    check_unchanged,
    parse_size,
    read_population,
)
from docket.errors import ConfigError, InputError
from docket.review.queue import final_labels, relevance_key
from docket.runner.escalate import queue_blind
from docket.runner.records import judgment_from_record, pair_from_record
from docket.store.audit_tables import AuditPairRow
from docket.store.base import Store
from docket.store.tables import JudgmentRecord

ALLOCATIONS = ("proportional", "neyman")


@dataclass(frozen=True)
class StratumDraw:
    """One stratum of a draw: N_h pairs, n_h drawn in all (``added`` by this draw)."""

    name: str
    population: int
    drawn: int
    added: int

    @property
    def inclusion_probability(self) -> float:
        """n_h / N_h, the probability of every pair of the stratum."""
        return self.drawn / self.population if self.population else 0.0


@dataclass(frozen=True)
class AuditDraw:
    """The result of :func:`draw_audit`: the audit of ``job`` as it now stands."""

    job: str
    seed: int
    by: str
    allocation: str
    strata: tuple[StratumDraw, ...]
    census: int

    @property
    def size(self) -> int:
        """Pairs drawn in all."""
        return sum(s.drawn for s in self.strata)

    @property
    def added(self) -> int:
        """Pairs this draw added to the queue."""
        return sum(s.added for s in self.strata)


@dataclass(frozen=True)
class AuditedPair:
    """A drawn pair: its automatic label and the human answer (None while unanswered)."""

    qid: str
    docid: str
    stratum: str
    inclusion_probability: float
    auto_label: int
    auto_grade: int | None
    human_label: int | None
    human_grade: int | None
    task_id: int | None = None
    reviewers: tuple[str, ...] = ()


def draw_audit(
    store: Store,
    job: str,
    size: int | str,
    *,
    by: str | None = None,
    seed: int = 0,
    allocation: str = "proportional",
    oversample: Mapping[str, float] | None = None,
    required_reviews: int = 1,
) -> AuditDraw:
    """Draw (or extend) the audit of ``job`` to ``size`` pairs, queued as blind tasks.

    Args:
        store: the store holding the job.
        job: the judged job.
        size: pairs in all (count or ``P%`` of the automatic labels); an existing audit
            grows to this size, keeping its pairs.
        by: strata: ``outcome`` (default: the method's outcome), ``label``, ``round``,
            ``none``; an extension keeps the audit's own.
        seed: the random order's seed; an extension must use the audit's seed.
        allocation: ``proportional`` (to N_h) or ``neyman`` (N_h times the error's
            standard deviation, from the audit's answers so far).
        oversample: stratum -> factor multiplying its allocation weight.
        required_reviews: independent reviewers per audit task.

    Raises:
        ConfigError: unknown job, strata, allocation or stratum to oversample; a seed or
            strata other than the audit's; a job that changed since the audit was drawn.
        InputError: a size larger than the job's automatic labels, or smaller than drawn.
    """
    if allocation not in ALLOCATIONS:
        raise ConfigError(f"--allocation must be proportional or neyman, not '{allocation}'")
    with store.session() as session:
        drawn = _drawn_rows(session, job)
        recorded = drawn[0].by if drawn else by or "outcome"
        population = read_population(session, job, by=recorded, seed=seed)
        total = parse_size(size, population.total)  # a size no audit can have, first
        by = _same_design(drawn, by, seed)
        check_unchanged(population, drawn)
        counts = _counts(drawn)
        if total < sum(counts.values()):
            raise InputError(
                f"the audit of job '{job}' has {sum(counts.values())} pairs already; "
                "a draw only grows it",
                field="size",
            )
        weights = _weights(session, population, allocation, oversample)
        minimum = minimum_per_stratum(population.sizes, total, counts)
        split = allocate(population.sizes, total, weights, minimum=minimum)
        strata = tuple(
            _take(session, population, name, split[name], counts.get(name, 0), required_reviews)
            for name in population.strata
        )
    return AuditDraw(job, seed, by, allocation, strata, len(population.census))


def _drawn_rows(session: Session, job: str) -> list[AuditPairRow]:
    query = select(AuditPairRow).where(AuditPairRow.job == job)
    return list(session.scalars(query.order_by(AuditPairRow.stratum, AuditPairRow.rank)))


def _counts(rows: list[AuditPairRow]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.stratum] = counts.get(row.stratum, 0) + 1
    return counts


def _same_design(drawn: list[AuditPairRow], by: str | None, seed: int) -> str:
    """The strata to use; an extension must keep the audit's seed and strata."""
    if not drawn:
        return by or "outcome"
    first = drawn[0]
    if by not in (None, first.by) or seed != first.seed:
        raise ConfigError(
            f"the audit of job '{first.job}' was drawn with --seed {first.seed} "
            f"--by {first.by}; extend it with the same",
            hint=f"pass --seed {first.seed} --by {first.by}",
        )
    return first.by


def _weights(
    session: Session,
    population: Population,
    allocation: str,
    oversample: Mapping[str, float] | None,
) -> dict[str, float]:
    weights = {h: float(n) for h, n in population.sizes.items()}
    if allocation == "neyman":
        answered = [
            p for p in audit_labels_in(session, population.job) if p.human_label is not None
        ]
        if not answered:
            raise ConfigError(
                "Neyman allocation needs per-stratum error rates from answered audit pairs",
                hint="draw a first audit with proportional allocation and answer it",
            )
        rates = {}
        for h in population.strata:
            seen = [p for p in answered if p.stratum == h]
            errors = sum(p.human_label != p.auto_label for p in seen)
            rates[h] = smoothed_error_rate(errors, len(seen))
        weights = neyman_weights(population.sizes, rates)
    for name, factor in (oversample or {}).items():
        if name not in weights:
            known = ", ".join(weights) or "none"
            raise ConfigError(f"no stratum '{name}' to oversample (strata: {known})")
        if not factor > 0:
            raise ConfigError(f"oversampling factor of {name} must be positive, not {factor}")
        weights[name] *= factor
    return weights


def _take(
    session: Session, population: Population, name: str, n: int, had: int, reviews: int
) -> StratumDraw:
    """Queue the stratum's prefix of length ``n`` and set its pairs' probability."""
    pairs = population.strata[name]
    probability = n / len(pairs)
    for rank in range(had, n):
        _add_pair(session, population, pairs[rank], rank, len(pairs), probability, reviews)
    session.execute(
        update(AuditPairRow)
        .where(AuditPairRow.job == population.job, AuditPairRow.stratum == name)
        .values(inclusion_probability=probability)
    )
    return StratumDraw(name, len(pairs), n, n - had)


def _add_pair(
    session: Session,
    population: Population,
    pair: PopulationPair,
    rank: int,
    size: int,
    probability: float,
    reviews: int,
) -> None:
    record = session.scalars(
        select(JudgmentRecord).where(
            JudgmentRecord.job == population.job,
            JudgmentRecord.qid == pair.qid,
            JudgmentRecord.docid == pair.docid,
        )
    ).one()
    task_id = queue_blind(
        session, population.job, pair_from_record(record), judgment_from_record(record), reviews
    )
    session.add(
        AuditPairRow(
            job=population.job, qid=pair.qid, docid=pair.docid, stratum=pair.stratum,
            rank=rank, stratum_size=size, inclusion_probability=probability,
            seed=population.seed, by=population.by, task_id=task_id,
        )
    )  # fmt: skip
    session.flush()


def audit_labels(store: Store, job: str) -> list[AuditedPair]:
    """The drawn pairs of ``job``'s audit with automatic and human labels.

    A pair's human label is the reviewers' majority once its task has all its required
    reviews (None before, and on a tie). Empty when no audit was drawn.

    Raises:
        ConfigError: no such job.
    """
    with store.read_session() as session:
        check_job(session, job)
        return audit_labels_in(session, job)


def audit_labels_in(session: Session, job: str) -> list[AuditedPair]:
    """:func:`audit_labels` in the caller's session."""
    rows = _drawn_rows(session, job)
    if not rows:
        return []
    outcomes = final_labels(session, job=job)
    autos = {
        (qid, docid): (label, grade)
        for qid, docid, label, grade in session.execute(
            select(
                JudgmentRecord.qid, JudgmentRecord.docid, JudgmentRecord.label,
                JudgmentRecord.grade,
            ).where(JudgmentRecord.job == job)
        )
    }  # fmt: skip
    result = []
    for row in rows:
        outcome = outcomes.get(relevance_key(row.qid, row.docid))
        label, grade = autos[(row.qid, row.docid)]
        result.append(
            AuditedPair(
                qid=row.qid, docid=row.docid, stratum=row.stratum,
                inclusion_probability=row.inclusion_probability,
                auto_label=int(label), auto_grade=grade,
                human_label=outcome.label if outcome else None,
                human_grade=outcome.grade if outcome else None,
                task_id=row.task_id,
                reviewers=outcome.reviewers if outcome else (),
            )
        )  # fmt: skip
    return result


__all__ = ["CENSUS", "AuditDraw", "AuditedPair", "StratumDraw", "audit_labels", "draw_audit"]
