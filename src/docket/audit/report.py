"""The label-quality certificate of a job: how good its automatic and final labels are.

:func:`certificate` reads a job's audit (:mod:`docket.audit.draw`), its escalations and
their human decisions, and gives, each with its interval and the n it rests on:

- the accuracy of the automatic labels per stratum (exact interval below 30 answered
  pairs, Wilson's above) and overall (stratified estimator, see
  :func:`docket.audit.proportions.stratified_proportion`);
- per-class recall and balanced accuracy of the final labels (automatic + human) and the
  share of relevant pairs (:mod:`docket.audit.estimates`);
- counts by source, the reviewers and their agreement (Cohen's kappa per pair of
  reviewers who decided the same tasks);
- warnings: a stratum with fewer than 30 answered audit pairs, an audit not fully
  answered, escalations without a decision.

Render it with :func:`docket.audit.render.certificate_markdown` or ``as_dict``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from docket.agreement import cohen_kappa
from docket.audit.draw import AuditedPair, audit_labels_in
from docket.audit.estimates import FinalLabelEstimates, Sample, final_label_estimates
from docket.audit.proportions import (
    SMALL_STRATUM,
    Interval,
    Stratum,
    proportion_interval,
    stratified_proportion,
    z_value,
)
from docket.audit.strata import CENSUS, audit_by, check_job, read_population
from docket.errors import ConfigError
from docket.review.models import Reviewer
from docket.review.queue import latest_decisions, reviewed_labels, select_tasks
from docket.store.base import Store


@dataclass(frozen=True)
class StratumAccuracy:
    """The automatic labels' accuracy in one stratum."""

    name: str
    population: int
    drawn: int
    answered: int
    correct: int
    accuracy: Interval


@dataclass(frozen=True)
class ReviewerAgreement:
    """Cohen's kappa between two reviewers over the ``n`` tasks both decided."""

    first: str
    second: str
    n: int
    kappa: float | None


@dataclass(frozen=True)
class Certificate:
    """The label-quality certificate of one job (see the module docstring)."""

    job: str
    method: str
    confidence: float
    strata: tuple[StratumAccuracy, ...]
    automatic_accuracy: Interval
    final: FinalLabelEstimates
    sources: dict[str, Any]
    reviewers: dict[str, int]
    agreement: tuple[ReviewerAgreement, ...]
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON data."""
        return {
            "job": self.job,
            "method": self.method,
            "confidence": self.confidence,
            "automatic_accuracy": self.automatic_accuracy.as_dict(),
            "strata": [
                {
                    "stratum": s.name,
                    "population": s.population,
                    "drawn": s.drawn,
                    "answered": s.answered,
                    "correct": s.correct,
                    "accuracy": s.accuracy.as_dict(),
                }
                for s in self.strata
            ],  # fmt: skip
            "final_labels": {
                "recall_relevant": self.final.recall_relevant.as_dict(),
                "recall_irrelevant": self.final.recall_irrelevant.as_dict(),
                "balanced_accuracy": self.final.balanced_accuracy.as_dict(),
                "relevant_share": self.final.relevant_share.as_dict(),
            },
            "sources": self.sources,
            "reviewers": self.reviewers,
            "agreement": [a.__dict__ for a in self.agreement],
            "warnings": list(self.warnings),
        }


def certificate(
    store: Store, job: str, *, confidence: float = 0.95, original: int | None = None
) -> Certificate:
    """The label-quality certificate of ``job`` (see the module docstring).

    Args:
        store: the store holding the job and its reviews.
        job: the judged job (its audit drawn with :func:`docket.audit.draw.draw_audit`).
        confidence: of every interval (default 0.95).
        original: how many judgments the original qrels held, for the counts by source.

    Raises:
        ConfigError: no such job, or ``confidence`` outside (0, 1).
    """
    _check_confidence(confidence)
    with store.read_session() as session:
        pairs = audit_labels_in(session, job)
        by = audit_by(session, job)
        population = read_population(session, job, by=by)
        human = reviewed_labels(session, job=job)
        reviewers, agreement = _reviewers(session, job)
        method = check_job(session, job).method
    census_keys = set(population.census)
    census = [o.label for key, o in human.items() if key in census_keys]
    strata = _strata(population.sizes, pairs, confidence)
    samples = [
        Sample(s.population, [(p.human_label, p.auto_label) for p in _answered(pairs, s.name)])
        for s in strata
    ]
    sources = {
        "original": original,
        "automatic": population.sizes,
        "automatic_total": population.total,
        "human_escalations": len(census),
        "human_audit": sum(s.answered for s in strata),
        "undecided_escalations": len(census_keys) - len(census),
        CENSUS: len(census_keys),
    }
    return Certificate(
        job=job,
        method=method,
        confidence=confidence,
        strata=tuple(strata),
        automatic_accuracy=stratified_proportion(
            [Stratum(s.name, s.population, s.answered, s.correct) for s in strata], confidence
        ),
        final=final_label_estimates(census, samples, confidence),
        sources=sources,
        reviewers=reviewers,
        agreement=agreement,
        warnings=tuple(_warnings(strata, sources, len(pairs))),
    )


def _check_confidence(confidence: float) -> None:
    try:
        z_value(confidence)
    except ValueError:
        raise ConfigError(f"--confidence must be between 0 and 1, not {confidence}") from None


def _answered(pairs: list[AuditedPair], stratum: str) -> list[AuditedPair]:
    return [p for p in pairs if p.stratum == stratum and p.human_label is not None]


def _strata(
    sizes: dict[str, int], pairs: list[AuditedPair], confidence: float
) -> list[StratumAccuracy]:
    rows = []
    for name, size in sizes.items():
        answered = _answered(pairs, name)
        correct = sum(p.human_label == p.auto_label for p in answered)
        drawn = sum(p.stratum == name for p in pairs)
        interval = proportion_interval(correct, len(answered), confidence)
        rows.append(StratumAccuracy(name, size, drawn, len(answered), correct, interval))
    return rows


def _reviewers(session: Session, job: str) -> tuple[dict[str, int], tuple[ReviewerAgreement, ...]]:
    """Decisions per reviewer, and kappa for each pair of reviewers with shared tasks."""
    tasks = select_tasks(session, job=job, kind="relevance")
    latest = latest_decisions(session, [t.id for t in tasks])
    names = dict(session.execute(select(Reviewer.id, Reviewer.name)).all())
    counts: dict[str, int] = {}
    by_reviewer: dict[str, dict[int, int]] = {}
    for task_id, decisions in latest.items():
        for reviewer_id, decision in decisions.items():
            name = names[reviewer_id]
            counts[name] = counts.get(name, 0) + 1
            by_reviewer.setdefault(name, {})[task_id] = decision.label
    agreement = []
    for first, second in combinations(sorted(by_reviewer), 2):
        shared = sorted(set(by_reviewer[first]) & set(by_reviewer[second]))
        if len(shared) < 2:
            continue
        kappa = cohen_kappa(
            [by_reviewer[first][t] for t in shared], [by_reviewer[second][t] for t in shared]
        )
        agreement.append(
            ReviewerAgreement(first, second, len(shared), None if kappa != kappa else kappa)
        )
    return dict(sorted(counts.items())), tuple(agreement)


def _warnings(strata: list[StratumAccuracy], sources: dict[str, Any], drawn: int) -> list[str]:
    warnings = []
    if not drawn:
        warnings.append("no audit drawn: draw one with docket audit draw")
    answered = sources["human_audit"]
    if drawn and answered < drawn:
        warnings.append(f"the audit is not fully answered: {answered} of {drawn} pairs")
    for s in strata:
        if drawn and s.answered < SMALL_STRATUM:
            warnings.append(
                f"stratum {s.name}: {s.answered} answered audit pairs (< {SMALL_STRATUM}); "
                f"its interval is the exact one and wide"
            )
    if sources["undecided_escalations"]:
        warnings.append(
            f"{sources['undecided_escalations']} escalated pairs have no human decision yet "
            "(left out of the final-label estimates)"
        )
    return warnings
