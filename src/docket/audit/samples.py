"""Human labels of a random sample of pool pairs: from an audit or from files.

A :class:`HumanSample` holds each sampled pair's human grade, its inclusion probability
and its stratum. Probabilities come from the audit draw (``docket audit draw``) or a TSV
(``qid docid probability [stratum]``); without them the sample is taken as a simple
random sample of the frame (uniform).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from docket.errors import InputError
from docket.ir.formats import Qrels, read_qrels
from docket.reading import numbered_lines

PairKey = tuple[str, str]


class Audited(Protocol):
    """What :func:`from_audit` reads of an audited pair (``docket.audit.draw.AuditedPair``)."""

    qid: str
    docid: str
    stratum: str
    inclusion_probability: float
    auto_label: int
    auto_grade: int | None
    human_label: int | None
    human_grade: int | None


@dataclass(frozen=True)
class HumanSample:
    """Human grades of sampled pool pairs.

    Attributes:
        grades: the human grade of each sampled pair.
        probability: each pair's inclusion probability; empty: uniform over the frame.
        strata: each pair's stratum; empty: one stratum (or groups of equal probability).
        source: where the labels came from, for messages.
        unanswered: drawn pairs without a human answer yet (left out of the estimates).
        automatic: the automatic label of each sampled pair, when known (an audit): it
            replaces whatever the LLM-labelled qrels hold there, since qrels exported after
            the audit was answered carry the reviewers' answers on audited pairs.
        binary: grades and automatic labels are 0/1 labels (an audit of a binary job), to
            be put on the completed qrels' scale (:func:`on_scale`).
    """

    grades: dict[PairKey, int]
    probability: dict[PairKey, float] = field(default_factory=dict)
    strata: dict[PairKey, str] = field(default_factory=dict)
    source: str = "human sample"
    unanswered: int = 0
    automatic: dict[PairKey, int] = field(default_factory=dict)
    binary: bool = False


def from_audit(pairs: Iterable[Audited], job: str) -> HumanSample:
    """The answered pairs of an audit, as a stratified random sample.

    As in the audit's certificate, the answered pairs of a stratum are taken as a simple
    random sample of it (unanswered ones missing at random): a pair's probability is its
    recorded inclusion probability times the stratum's share of answered drawn pairs.
    """
    pairs = list(pairs)
    drawn: dict[str, int] = {}
    answered: dict[str, int] = {}
    for pair in pairs:
        drawn[pair.stratum] = drawn.get(pair.stratum, 0) + 1
        if _grade(pair) is not None:
            answered[pair.stratum] = answered.get(pair.stratum, 0) + 1
    grades, probability, strata, automatic = {}, {}, {}, {}
    for pair in pairs:
        grade = _grade(pair)
        if grade is None:
            continue
        key = (pair.qid, pair.docid)
        grades[key] = grade
        automatic[key] = int(pair.auto_grade if pair.auto_grade is not None else pair.auto_label)
        share = answered[pair.stratum] / drawn[pair.stratum]
        probability[key] = float(pair.inclusion_probability) * share
        strata[key] = pair.stratum
    unanswered = len(pairs) - len(grades)
    binary = all(p.auto_grade is None or p.human_grade is None for p in pairs)
    source = f"audit of job {job}"
    return HumanSample(grades, probability, strata, source, unanswered, automatic, binary)


def on_scale(sample: HumanSample, llm_qrels: dict[str, dict[str, int]]) -> HumanSample:
    """A binary sample's labels on the completed qrels' scale.

    Completed qrels of a binary job write a relevant label as ``--rel-level`` (2 for TREC
    DL's binarisation), while an audit answers 0/1: a 1 becomes the level the qrels give
    the sampled pairs' relevant labels (the most common positive value there, which the
    job wrote), so that a measure with ``rel=2`` reads human and automatic labels alike.
    """
    if not sample.binary:
        return sample
    held = (llm_qrels.get(qid, {}).get(docid, 0) for qid, docid in sample.grades)
    positives = Counter(g for g in held if g > 0)
    level = positives.most_common(1)[0][0] if positives else 1
    if level == 1:
        return sample
    grades = {key: grade * level for key, grade in sample.grades.items()}
    automatic = {key: label * level for key, label in sample.automatic.items()}
    return replace(sample, grades=grades, automatic=automatic, binary=False)


def _grade(pair: Audited) -> int | None:
    """The human answer on the automatic labels' scale: grades when the job graded."""
    graded = pair.auto_grade is not None and pair.human_grade is not None
    grade = pair.human_grade if graded else pair.human_label
    return None if grade is None else int(grade)


def read_human_sample(qrels: str | Path, inclusion: str | Path | None = None) -> HumanSample:
    """A qrels file of human grades, with optional inclusion probabilities.

    Raises:
        InputError: a bad qrels line; an inclusion line without 3-4 columns, with a
            probability outside (0, 1], or for a pair the qrels lack (or the reverse).
    """
    grades: Qrels = read_qrels(qrels)
    flat = {(q, d): g for q, docs in grades.items() for d, g in docs.items()}
    if inclusion is None:
        return HumanSample(flat, source=str(qrels))
    probability, strata = _read_inclusion(inclusion)
    missing = next((key for key in flat if key not in probability), None)
    if missing is not None:
        raise InputError(
            f"pair ({missing[0]}, {missing[1]}) of the human sample has no inclusion probability",
            path=str(inclusion),
            hint="give one line per sampled pair: qid docid probability [stratum]",
        )
    return HumanSample(flat, {k: probability[k] for k in flat}, strata, str(qrels))


def _read_inclusion(path: str | Path) -> tuple[dict[PairKey, float], dict[PairKey, str]]:
    probability: dict[PairKey, float] = {}
    strata: dict[PairKey, str] = {}
    for number, line in numbered_lines(path):
        parts = line.split()
        if len(parts) not in (3, 4):
            raise InputError(
                f"expected 3 or 4 columns (qid docid probability [stratum]), found {len(parts)}",
                path=str(path),
                line=number,
            )
        try:
            value = float(parts[2])
        except ValueError:
            value = math.nan
        if not 0 < value <= 1:
            raise InputError(
                f"inclusion probability '{parts[2]}' is not in (0, 1]",
                path=str(path),
                line=number,
                field="probability",
            )
        probability[(parts[0], parts[1])] = value
        if len(parts) == 4:
            strata[(parts[0], parts[1])] = parts[3]
    return probability, strata
