"""Label sets for ``docket eval labels``: one graded label per (qid, docid), from any source.

Sources, told apart by their name or first line:

* ``job:NAME``: a docket job in the store, labels as reviewed (a human decision wins); a
  binary "relevant" without a grade counts as ``rel_level``, as ``docket export`` writes it;
* ``irds:<dataset id>``: the qrels of an ``ir_datasets`` dataset on this machine;
* a JSONL file (first line starts with ``{``): ``docket export --format jsonl`` output or
  any objects with ``qid``, ``docid`` and ``relevance``, ``grade`` or ``label`` (the first
  present wins; a row where all three are null is an undecided pair and is skipped);
* anything else: a TREC qrels file, ``qid iteration docid grade`` (optionally gzipped).

Every label is checked against the scale ``low..high``: out-of-scale labels are refused
with the file, the first line and the count, or clipped into the scale on request (and
counted). A pair labelled twice with different labels is refused with the count.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from docket.errors import ConfigError, InputError, UserError
from docket.ir.formats import parse_json_line, qrels_columns, run_name
from docket.reading import numbered_lines

Key = tuple[str, str]
Row = tuple[Key, int | None, int | None]
"""A pair, its label (None: undecided) and its line in the file (None: the source has no lines)."""

JSON_FIELDS = ("relevance", "grade", "label")


@dataclass(frozen=True)
class Scale:
    """The label scale ``low..high`` (integers) and whether labels outside it are clipped."""

    low: int = 0
    high: int = 3
    clip: bool = False

    @property
    def grades(self) -> list[int]:
        """Every grade of the scale, lowest first."""
        return list(range(self.low, self.high + 1))

    @property
    def thresholds(self) -> list[int]:
        """Every binarisation threshold: a label is relevant when it is at least the threshold."""
        return self.grades[1:]


DEFAULT_SCALE = Scale()
"""The TREC relevance scale 0..3, out-of-scale labels refused."""


def parse_scale(text: str, clip: bool = False, option: str = "--scale") -> Scale:
    """``"0:3"`` -> ``Scale(0, 3)``.

    Raises:
        ConfigError: not two integers ``LO:HI`` with LO < HI.
    """
    low, sep, high = text.partition(":")
    try:
        scale = Scale(int(low), int(high), clip)
    except ValueError:
        raise ConfigError(f"{option} '{text}' is not LO:HI", hint=f"e.g. {option} 0:3") from None
    if not sep or scale.low >= scale.high:
        raise ConfigError(f"{option} '{text}' needs LO < HI", hint=f"e.g. {option} 0:3")
    return scale


@dataclass(frozen=True)
class LabelSet:
    """The labels of one source.

    Attributes:
        name: display name (file name without extension, ``job:NAME``, ``irds:ID``).
        source: what was read.
        labels: label per (qid, docid), inside the scale.
        clipped: labels moved into the scale by clipping.
        undecided: rows without any label (escalated pairs still waiting for a human).
    """

    name: str
    source: str
    labels: dict[Key, int]
    clipped: int = 0
    undecided: int = 0

    def qrels(self) -> dict[str, dict[str, int]]:
        """The labels as qrels ``{qid: {docid: grade}}``."""
        qrels: dict[str, dict[str, int]] = {}
        for (qid, docid), grade in self.labels.items():
            qrels.setdefault(qid, {})[docid] = grade
        return qrels


def read_label_set(
    source: str | Path, scale: Scale = DEFAULT_SCALE, rel_level: int = 1, db: str | None = None
) -> LabelSet:
    """Read one label source (see the module docstring for the kinds).

    Args:
        source: a file, ``job:NAME`` or ``irds:<dataset id>``.
        scale: the accepted labels, and whether to clip the others.
        rel_level: the grade of a binary "relevant" job label that has no grade.
        db: store path or URL for ``job:`` sources (default: the configured store).

    Raises:
        InputError: a malformed line, a label outside the scale (without clipping), or a
            pair labelled twice with different labels.
        UserError: an unknown job or dataset.
    """
    text = str(source)
    if text.startswith("job:"):
        rows: Iterable[Row] = _job_rows(text.removeprefix("job:"), rel_level, db)
        name = text
    elif text.startswith("irds:"):
        rows, name = _irds_rows(text.removeprefix("irds:")), text
    else:
        rows, name = _file_rows(Path(text)), run_name(text)
    return _collect(name, text, rows, scale)


def _collect(name: str, source: str, rows: Iterable[Row], scale: Scale) -> LabelSet:
    """The label set after the duplicate and scale checks."""
    raw: dict[Key, tuple[int, int | None]] = {}
    conflicts: list[tuple[Key, int, int, int | None]] = []
    undecided = 0
    for key, value, line in rows:
        if value is None:
            undecided += 1
            continue
        first = raw.setdefault(key, (value, line))
        if first[0] != value:
            conflicts.append((key, first[0], value, line))
    if conflicts:
        (qid, docid), was, now, line = conflicts[0]
        raise InputError(
            f"{len(conflicts)} duplicate lines give a pair a different label "
            f"(first: ({qid}, {docid}) labelled {was}, then {now})",
            path=source,
            line=line,
            field="grade",
            hint="keep one label per (qid, docid)",
        )
    outside = [(v, line) for v, line in raw.values() if not scale.low <= v <= scale.high]
    if outside and not scale.clip:
        value, line = outside[0]  # in file order: the first offending line
        raise InputError(
            f"{len(outside)} labels are outside the scale {scale.low}..{scale.high} "
            f"(first: {value})",
            path=source,
            line=line,
            field="grade",
            hint=f"pass --clip {scale.low}:{scale.high} to clip them, or --scale LO:HI",
        )
    labels = {k: min(scale.high, max(scale.low, v)) for k, (v, _) in raw.items()}
    return LabelSet(name, source, labels, len(outside), undecided)


def _file_rows(path: Path) -> Iterator[Row]:
    lines = numbered_lines(path)
    first = next(lines, None)
    if first is None:
        raise InputError("the label file is empty", path=str(path))
    reader = _jsonl_row if first[1].lstrip().startswith("{") else _qrels_row
    yield reader(first[1], path, first[0])
    for number, line in lines:
        yield reader(line, path, number)


def _qrels_row(line: str, path: Path, number: int) -> Row:
    qid, _, docid, raw = qrels_columns(line, path, number)
    return (qid, docid), _integer(raw, path, number, "grade"), number


def _jsonl_row(line: str, path: Path, number: int) -> Row:
    record = parse_json_line(line, path, number)
    key = tuple(str(record.get(name) or "") for name in ("qid", "docid"))
    if not all(key):
        raise InputError("needs non-empty qid and docid", path=str(path), line=number)
    field = next((f for f in JSON_FIELDS if record.get(f) is not None), None)
    if field is None:
        return (key[0], key[1]), None, number
    return (key[0], key[1]), _integer(record[field], path, number, field), number


def _integer(value: object, path: Path, number: int, field: str) -> int:
    """An integral label (``2``, ``"2"``, ``2.0``, ``true``), or InputError."""
    try:
        number_value = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        number_value = float("nan")
    if not number_value.is_integer():
        raise InputError(
            f"label {value!r} is not an integer", path=str(path), line=number, field=field
        )
    return int(number_value)


def _irds_rows(dataset_id: str) -> Iterator[Row]:
    from docket.ir.irds import read_qrels

    for qid, docs in read_qrels(dataset_id).items():
        for docid, grade in docs.items():
            yield (qid, docid), grade, None


def _job_rows(job: str, rel_level: int, db: str | None) -> Iterator[Row]:
    from docket.config import load_settings
    from docket.ir.job_export import export_rows, relevance_value
    from docket.store import open_store
    from docket.store.tables import Job

    store = open_store(load_settings(db=db).db)
    with store.session() as session:
        if session.get(Job, job) is None:
            raise UserError(
                f"no job named '{job}' in the store", hint="list the jobs with `docket jobs`"
            )
    for row in export_rows(store, job, "reviewed"):
        yield (row.record.qid, row.record.docid), relevance_value(row, "keep", rel_level), None
