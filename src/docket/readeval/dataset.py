"""The RE-AD-Eval dataset file: a header line, then one sample per line (JSONL).

The header records how the dataset was built (configuration, seed, models, rule set and
its version, seeds used, counts and drops), so a run can be traced back to its build.
Files are written to a temporary file and renamed, so a failed build leaves nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from docket.adherence.record import Record
from docket.adherence.rules.model import Tier
from docket.errors import InputError
from docket.readeval.personas import DEFAULT_PERSONAS, Persona
from docket.reading import loads_json, numbered_lines, validation_error
from docket.writing import write_atomically

PAPER_F1 = 0.749
REFERENCE = (
    "RE-AD (Uber AI Solutions, 2026) reports F1 0.749 on its own RE-AD-Eval; a reference "
    "point, not a target: rules, dialogues and models differ."
)


M = TypeVar("M", bound=BaseModel)


class BuildConfig(BaseModel):
    """Settings of a build (stored in the header).

    Attributes:
        samples: samples to attempt (drops make the dataset smaller).
        seed: seed of every random draw; the same seed and inputs give the same dataset.
        personas: annotator personas with their per-tier error probabilities.
        tiers: tiers to inject; None means fmt, plus sim and sub when there is a generator.
        max_iterations: generate-and-verify rounds per sample before it is dropped.
        temperature: sampling temperature of the generator.
        max_tokens: reply cap of the generator.
        judge_timeout_s: seconds one judge check may take (queueing included) before it is
            undecided.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    samples: int = Field(100, ge=1, le=1_000_000)
    seed: int = 0
    personas: tuple[Persona, ...] = Field(DEFAULT_PERSONAS, min_length=1)
    tiers: tuple[Tier, ...] | None = None
    max_iterations: int = Field(3, ge=1, le=10)
    temperature: float = Field(0.7, ge=0.0, le=2.0)
    max_tokens: int = Field(768, ge=16)
    judge_timeout_s: float = Field(60.0, gt=0)


class RulesetInfo(BaseModel):
    """The rule set a dataset was built for: name, version, and each rule's version and tier."""

    name: str
    version: str
    versions: dict[str, str]
    tiers: dict[str, Tier]


class BuildSummary(BaseModel):
    """Counts of a build: kept samples by tier and persona, drops by tier and reason."""

    attempted: int = 0
    kept: int = 0
    kept_by: dict[str, dict[str, int]] = Field(default_factory=dict)
    dropped_by: dict[str, dict[str, int]] = Field(default_factory=dict)
    iterations: dict[str, int] = Field(default_factory=dict)


class DatasetHeader(BaseModel):
    """The first line of a dataset file."""

    kind: Literal["readeval-dataset"] = "readeval-dataset"
    format: Literal[1] = 1
    docket_version: str
    config: BuildConfig
    models: dict[str, str | None]
    ruleset: RulesetInfo
    tiers: list[Tier]
    judge_checked: bool
    seeds: list[str]
    skipped_seeds: dict[str, str] = Field(default_factory=dict)
    generated_seeds: list[str] = Field(default_factory=list)
    summary: BuildSummary
    operators_missing: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    reference: str = REFERENCE


class Sample(BaseModel):
    """One benchmark item: a record with exactly one injected violation.

    Attributes:
        id: the sample id (also the record's id).
        persona: the persona drawn for the sample.
        tier: the tier of the injected rule.
        rule_id: the injected rule (the ground truth; by construction no other rule fails).
        operator: the fmt mutation operator (``urls.insert``) or ``llm-rewrite``.
        record: the record with the violation.
        source_id: the id of the clean record it was made from.
        iterations: generate-and-verify rounds used (1 = accepted at once).
        turn: the changed turn, when one turn was changed.
    """

    model_config = ConfigDict(extra="forbid")

    id: str
    persona: str
    tier: Tier
    rule_id: str
    operator: str
    record: Record
    source_id: str
    iterations: int = Field(ge=1)
    turn: int | None = None


class Dataset(BaseModel):
    """A header and its samples."""

    header: DatasetHeader
    samples: list[Sample]


def write_dataset(path: str | Path, dataset: Dataset) -> None:
    """Write the header and samples as JSONL, atomically (temporary file, then rename)."""
    lines = [dataset.header.model_dump_json(), *(s.model_dump_json() for s in dataset.samples)]
    write_atomically(path, (line + "\n" for line in lines))


def _validated(model: type[M], data: object, path: str, line: int) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, path, line) from exc


def _json_lines(path: Path) -> list[tuple[int, object]]:
    if not path.is_file():
        raise InputError("dataset file not found", path=str(path))
    return [(number, loads_json(line, path, number)) for number, line in numbered_lines(path)]


def read_dataset(path: str | Path) -> Dataset:
    """Read a dataset written by :func:`write_dataset`.

    Raises:
        InputError: the file is missing, has no header, or a line is not a valid header or
            sample (the error names the file, the line and the field).
    """
    path = Path(path)
    rows = _json_lines(path)
    if not rows or not isinstance(rows[0][1], dict) or rows[0][1].get("kind") != "readeval-dataset":
        raise InputError(
            "the first line is not a RE-AD-Eval header",
            path=str(path),
            line=rows[0][0] if rows else None,
            hint="build a dataset with `docket bench readeval build`",
        )
    header = _validated(DatasetHeader, rows[0][1], str(path), rows[0][0])
    samples = [_validated(Sample, data, str(path), number) for number, data in rows[1:]]
    seen: set[str] = set()
    for (number, _), sample in zip(rows[1:], samples, strict=True):
        if sample.id in seen:
            raise InputError(
                f"duplicate sample id '{sample.id}'", path=str(path), line=number, field="id"
            )
        seen.add(sample.id)
    return Dataset(header=header, samples=samples)
