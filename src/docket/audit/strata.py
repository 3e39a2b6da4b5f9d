"""The population an audit draws from: a job's automatically decided pairs, by stratum.

Strata are the method's own outcome: for a debate, the round in which the agents agreed
and the label they agreed on (``round1-relevant``); for a single judge, majority vote or
LARA, the label (``relevant``); an LLM adjudicator's decisions form their own strata
(``adjudicator-relevant``). Escalated pairs are not automatic labels: they are the census
stratum (:data:`CENSUS`), decided by humans.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from docket.errors import ConfigError, InputError
from docket.store.audit_tables import AuditPairRow
from docket.store.judgments import iter_judgments
from docket.store.tables import Job

CENSUS = "escalated"
"""The stratum of escalated pairs: every one is decided by a human (a census)."""
LABEL_NAMES = {1: "relevant", 0: "irrelevant"}
_COLUMNS = ("qid", "docid", "decided_by", "rounds", "label", "grade")


def _outcome(row: Any) -> str:
    label = LABEL_NAMES[row.label]
    if row.decided_by == "consensus":
        return f"round{row.rounds}-{label}"
    if row.decided_by == "judge":
        return label
    return f"{row.decided_by}-{label}"


STRATIFIERS: dict[str, Callable[[Any], str]] = {
    "outcome": _outcome,
    "label": lambda row: LABEL_NAMES[row.label],
    "round": lambda row: f"round{row.rounds}",
    "none": lambda row: "all",
}
"""How ``--by`` names a pair's stratum: the method's outcome (default), the label alone,
the round alone, or one stratum."""


@dataclass(frozen=True)
class PopulationPair:
    """One automatically decided pair and its place in its stratum's seeded order."""

    qid: str
    docid: str
    stratum: str
    label: int
    grade: int | None
    order: str


@dataclass(frozen=True)
class Population:
    """A job's automatic pairs by stratum (each list in seeded order), and its census."""

    job: str
    by: str
    seed: int
    strata: dict[str, list[PopulationPair]]
    census: list[tuple[str, str]]

    @property
    def sizes(self) -> dict[str, int]:
        """N_h: pairs per stratum."""
        return {name: len(pairs) for name, pairs in self.strata.items()}

    @property
    def total(self) -> int:
        """How many automatic labels the job has."""
        return sum(self.sizes.values())


def order_key(seed: int, qid: str, docid: str) -> str:
    """A pair's place in the seeded random order (SHA-256 of seed, qid and docid).

    Taking the pairs with the smallest keys is a simple random sample, the same for the
    same seed, and a longer prefix keeps a shorter one.
    """
    return hashlib.sha256(f"{seed}\t{qid}\t{docid}".encode()).hexdigest()


def check_job(session: Session, job: str) -> Job:
    """The job's row.

    Raises:
        ConfigError: no such job.
    """
    found = session.get(Job, job)
    if found is None:
        raise ConfigError(f"no job named '{job}' in the store", hint="run docket judge first")
    return found


def read_population(
    session: Session, job: str, *, by: str = "outcome", seed: int = 0
) -> Population:
    """The automatic pairs of ``job`` by stratum, and its escalated (census) pairs.

    Raises:
        ConfigError: no such job, or an unknown ``by``.
    """
    check_job(session, job)
    if by not in STRATIFIERS:
        raise ConfigError(f"--by must be one of {', '.join(STRATIFIERS)}, not '{by}'")
    name_of = STRATIFIERS[by]
    strata: dict[str, list[PopulationPair]] = {}
    census: list[tuple[str, str]] = []
    for row in iter_judgments(session, job, columns=_COLUMNS):
        if row.decided_by == "escalated" or row.label is None:
            census.append((row.qid, row.docid))
            continue
        pair = PopulationPair(
            row.qid, row.docid, name_of(row), row.label, row.grade,
            order_key(seed, row.qid, row.docid),
        )  # fmt: skip
        strata.setdefault(pair.stratum, []).append(pair)
    for pairs in strata.values():
        pairs.sort(key=lambda p: p.order)
    return Population(job, by, seed, dict(sorted(strata.items())), census)


def audit_by(session: Session, job: str) -> str:
    """The strata of the job's audit (``outcome`` before any draw)."""
    found = session.scalars(select(AuditPairRow.by).where(AuditPairRow.job == job)).first()
    return found or "outcome"


def parse_size(size: int | str, automatic: int) -> int:
    """An audit size given as a count (``60``) or a share of the automatic labels (``5%``).

    Raises:
        InputError: not a count or percentage, or more than the automatic labels.
    """
    text = str(size).strip()
    match = re.fullmatch(r"(\d+(?:\.\d+)?)%", text)
    if match:
        count = math.ceil(float(match.group(1)) / 100 * automatic)
    elif text.isdigit():
        count = int(text)
    else:
        raise InputError(f"'{text}' is neither a count nor a percentage", field="size")
    if count < 1 or count > automatic:
        raise InputError(
            f"an audit of {count} pairs is impossible: the job has {automatic} automatic labels",
            field="size",
            hint=f"ask for 1 to {automatic} pairs (or a percentage)",
        )
    return count


def check_unchanged(population: Population, drawn: list[AuditPairRow]) -> None:
    """Refuse to extend an audit whose job has changed since the draw (its strata' sizes
    differ): the recorded probabilities would no longer hold.

    Raises:
        ConfigError: a stratum's size differs from the one recorded at draw time.
    """
    sizes = population.sizes
    for row in drawn:
        if sizes.get(row.stratum) != row.stratum_size:
            raise ConfigError(
                f"job '{population.job}' has changed since its audit was drawn (stratum "
                f"{row.stratum}: {row.stratum_size} pairs then, {sizes.get(row.stratum, 0)} now)",
                hint="audit the finished job under a new name, or draw before resuming",
            )
