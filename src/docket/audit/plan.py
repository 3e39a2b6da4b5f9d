"""How many audit labels give a confidence interval of a chosen half-width on the
automatic labels' accuracy (``docket audit plan``)."""

from __future__ import annotations

from dataclasses import dataclass

from docket.audit.draw import audit_labels_in
from docket.audit.proportions import (
    neyman_weights,
    plan_size,
    smoothed_error_rate,
    stratified_half_width,
)
from docket.audit.strata import audit_by, read_population
from docket.errors import ConfigError
from docket.store.base import Store


@dataclass(frozen=True)
class AuditPlan:
    """The audit size that reaches ``half_width``, its split, and what is drawn already."""

    job: str
    half_width: float
    confidence: float
    size: int
    allocation: dict[str, int]
    drawn: int
    error_rates: dict[str, float]
    rates_from: str
    expected_half_width: float

    @property
    def more(self) -> int:
        """Pairs still to draw."""
        return max(0, self.size - self.drawn)


def plan_audit(
    store: Store,
    job: str,
    half_width: float,
    *,
    prior_error: float | None = None,
    confidence: float = 0.95,
    allocation: str = "proportional",
) -> AuditPlan:
    """Plan the audit of ``job``: the smallest size whose interval on the automatic labels'
    accuracy has half-width at most ``half_width``.

    Error rates per stratum come from ``prior_error`` (the same for every stratum) when
    given, else from the audit's answers so far (Laplace-smoothed, so a stratum without
    answers counts as 0.5, the worst case).

    Raises:
        ConfigError: no such job, a half-width or prior outside (0, 1), no automatic labels.
    """
    if not 0.0 < half_width < 1.0:
        raise ConfigError(f"--width must be between 0 and 1, not {half_width}")
    if prior_error is not None and not 0.0 < prior_error < 1.0:
        raise ConfigError(f"--prior-error must be between 0 and 1, not {prior_error}")
    with store.read_session() as session:
        population = read_population(session, job, by=audit_by(session, job))
        pairs = audit_labels_in(session, job)
    if not population.total:
        raise ConfigError(f"job '{job}' has no automatic labels to audit")
    rates = {}
    for name in population.strata:
        seen = [p for p in pairs if p.stratum == name and p.human_label is not None]
        errors = sum(p.human_label != p.auto_label for p in seen)
        rates[name] = (
            prior_error if prior_error is not None else smoothed_error_rate(errors, len(seen))
        )
    drawn: dict[str, int] = {}
    for p in pairs:
        drawn[p.stratum] = drawn.get(p.stratum, 0) + 1
    weights = neyman_weights(population.sizes, rates) if allocation == "neyman" else None
    size, split = plan_size(
        population.sizes, rates, half_width, confidence=confidence, weights=weights, minimum=drawn
    )
    expected = stratified_half_width(population.sizes, split, rates, confidence)
    source = "prior" if prior_error is not None else "audit answers so far (smoothed)"
    return AuditPlan(job, half_width, confidence, size, split, len(pairs), rates, source, expected)
