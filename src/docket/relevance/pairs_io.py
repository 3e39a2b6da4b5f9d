"""Read query-chunk pairs (JSONL or TSV) and human label files, with located errors.

JSONL: one object per line with ``qid``, ``query``, ``docid``, ``text`` (or ``passage``),
optional ``label`` (0/1) and ``grade`` (an integer >= 0; without a label, grade >= 2 counts as
relevant, the TREC DL binarisation) and ``guidance`` (the collection's description of the
query: what counts as relevant for it; one text per query). TSV: a header line naming the
same columns.
A row of ``docket export --format jsonl`` is read too: its gold label is ``gold_label``,
never its ``label`` (the job's final, model or reviewed, label), so judging an export again
does not turn model labels into gold.
A pair repeated with identical content is kept once and counted; a repeated pair with
different content is an error.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from docket.errors import InputError
from docket.reading import json_object, numbered_lines
from docket.relevance.types import Pair

TEXT_FIELDS = ("text", "passage")
REQUIRED = ("qid", "query", "docid")
RELEVANT_GRADE = 2
EXPORT_MARK = "judged_label"
"""A field only ``docket export --format jsonl`` rows have: such a row's gold is its
``gold_label``, and its ``label``/``grade`` (a job's final labels) are not read."""
_FIELD_LIMIT = 2**31 - 1  # csv's largest limit on every platform (a C long)


class PairList(list[Pair]):
    """The pairs of a file in input order, how many duplicate lines were dropped, and the
    guidance of each query (``{qid: text}``, "" for a query without)."""

    def __init__(
        self, pairs: list[Pair], duplicates: int = 0, guidance: dict[str, str] | None = None
    ) -> None:
        super().__init__(pairs)
        self.duplicates = duplicates
        self.guidance = guidance if guidance is not None else {p.qid: p.guidance for p in pairs}

    @property
    def pairs(self) -> list[Pair]:
        """The pairs as a plain list."""
        return list(self)


def read_pairs(path: str | Path) -> PairList:
    """Read pairs from a ``.jsonl`` or ``.tsv`` file (format chosen by the first line).

    Raises:
        InputError: naming the file, line and field of the first malformed record; nothing
            is returned in that case.
    """
    return collect_pairs(_records(path, (*REQUIRED, TEXT_FIELDS)), str(path))


def collect_pairs(records: Iterable[tuple[int, dict[str, Any]]], source: str) -> PairList:
    """Pairs from ``(line or row number, record)`` items, checked as a pairs file is.

    ``source`` names where the records come from in error messages (a file, a DataFrame).

    Raises:
        InputError: naming the source, line and field of the first malformed record.
    """
    seen: dict[tuple[str, str], tuple[Pair, int]] = {}
    guidance = GuidanceCheck(source)
    duplicates = 0
    for line_no, record in records:
        pair = _pair(record, source, line_no)
        guidance.check(pair, line_no)
        if pair.key in seen:
            _check_same(pair, *seen[pair.key], source, line_no)
            duplicates += 1
            continue
        seen[pair.key] = (pair, line_no)
    if not seen:
        raise InputError("no pairs found", path=source, hint="one pair per line")
    return PairList([pair for pair, _ in seen.values()], duplicates, guidance.texts)


class PairFile:
    """A pairs file checked whole once, then streamed: memory for its keys, not its texts.

    ``scan_pairs`` reads the file and raises on the first malformed record, as
    :func:`read_pairs` does, so nothing is judged from a bad file; iterating reads it again
    and yields each pair once (a repeated line is skipped), in file order.
    """

    def __init__(
        self, path: Path, first: dict[tuple[str, str], tuple[int, int]], dup: int,
        guidance: dict[str, str] | None = None,
    ) -> None:  # fmt: skip
        self.path = path
        self.duplicates = dup
        self._first = first
        self.guidance = guidance or {}  # {qid: guidance text}

    def __len__(self) -> int:
        return len(self._first)

    def __iter__(self) -> Iterator[Pair]:
        for line_no, record in _records(self.path, (*REQUIRED, TEXT_FIELDS)):
            pair = _pair(record, str(self.path), line_no)
            if self._first[pair.key][0] == line_no:
                yield pair


def scan_pairs(path: str | Path) -> PairFile:
    """Check a ``.jsonl`` or ``.tsv`` pairs file and return it as a :class:`PairFile`.

    Raises:
        InputError: naming the file, line and field of the first malformed record.
    """
    first: dict[tuple[str, str], tuple[int, int]] = {}
    guidance = GuidanceCheck(str(path))
    duplicates = 0
    for line_no, record in _records(path, (*REQUIRED, TEXT_FIELDS)):
        pair = _pair(record, str(path), line_no)
        guidance.check(pair, line_no)
        digest = hash((pair.query, pair.text, pair.label, pair.grade, pair.guidance))
        if pair.key in first:
            first_line, first_digest = first[pair.key]
            if digest != first_digest:
                raise _repeat_error(pair, first_line, str(path), line_no)
            duplicates += 1
            continue
        first[pair.key] = (line_no, digest)
    if not first:
        raise InputError("no pairs found", path=str(path), hint="one pair per line")
    return PairFile(Path(path), first, duplicates, guidance.texts)


class GuidanceCheck:
    """Guidance is per query: every pair of a qid must carry the same text (or none)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.texts: dict[str, str] = {}  # qid -> guidance ("" for none)
        self.lines: dict[str, int] = {}  # qid -> line of its first pair

    def check(self, pair: Pair, line: int) -> None:
        """Raise when ``pair``'s guidance differs from an earlier pair of its query."""
        first = self.texts.setdefault(pair.qid, pair.guidance)
        self.lines.setdefault(pair.qid, line)
        if first != pair.guidance:
            raise InputError(
                f"query {pair.qid} has other guidance than on line {self.lines[pair.qid]}",
                path=self.source, line=line, field="guidance",
                hint="guidance describes a query: give every pair of a query the same text",
            )  # fmt: skip


def read_labels(path: str | Path) -> dict[tuple[str, str], int]:
    """Read human decisions: ``qid``, ``docid``, ``label`` (0/1) per JSONL line or TSV row."""
    labels: dict[tuple[str, str], int] = {}
    for line_no, record in _records(path, ("qid", "docid", "label")):
        qid, docid = (_text(record, name, str(path), line_no) for name in ("qid", "docid"))
        label = _label(record, str(path), line_no)
        if label is None:
            raise InputError("missing", path=str(path), line=line_no, field="label")
        labels[(qid, docid)] = label
    return labels


Columns = tuple[str | tuple[str, ...], ...]
"""Required columns; a tuple entry means one of these names."""


def _records(path: str | Path, columns: Columns) -> Iterator[tuple[int, dict[str, Any]]]:
    # The file is read line by line, never held whole: a 100,000-pair input streams.
    first = next(numbered_lines(path), None)  # the first non-blank line tells JSONL from TSV
    if first is None:
        return
    try:
        if first[1].lstrip().startswith("{"):
            yield from _jsonl(numbered_lines(path), str(path))
        else:
            yield from _tsv(numbered_lines(path, blank=True), str(path), columns)
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc.strerror}", path=str(path)) from None


def _jsonl(lines: Iterable[tuple[int, str]], path: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for line_no, line in lines:
        yield line_no, json_object(line, path, line_no)


def _tsv(
    lines: Iterable[tuple[int, str]], path: str, columns: Columns
) -> Iterator[tuple[int, dict[str, Any]]]:
    # A TSV field may be as long as a JSONL line: lift csv's 128 KiB default field limit.
    csv.field_size_limit(max(csv.field_size_limit(), _FIELD_LIMIT))
    rows = csv.reader((line for _, line in lines), delimiter="\t", quoting=csv.QUOTE_NONE)
    header = [name.strip().lower() for name in next(rows, [])]
    for column in columns:
        names = column if isinstance(column, tuple) else (column,)
        if not set(names) & set(header):
            raise InputError(
                "missing from the header line",
                path=path,
                line=1,
                field="/".join(names),
                hint="TSV files start with a tab-separated header: "
                + ", ".join(c if isinstance(c, str) else c[0] for c in columns),
            )
    for line_no, row in enumerate(rows, start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise InputError(
                f"expected {len(header)} tab-separated columns, found {len(row)}",
                path=path,
                line=line_no,
            )
        yield line_no, dict(zip(header, row, strict=True))


def _pair(record: dict[str, Any], path: str, line: int) -> Pair:
    qid, query, docid = (_text(record, name, path, line) for name in REQUIRED)
    text_field = next((name for name in TEXT_FIELDS if name in record), "text")
    text = _text(record, text_field, path, line)
    if EXPORT_MARK in record:
        # A ``docket export --format jsonl`` row: its ``label``/``grade`` are a job's final
        # labels, never gold; its gold is ``gold_label`` (the judged input's own label).
        return Pair(qid=qid, query=query, docid=docid, text=text,
                    label=_label(record, path, line, "gold_label"),
                    guidance=_guidance(record, path, line))  # fmt: skip
    grade = _grade(record, path, line)
    label = _label(record, path, line)
    if label is None and grade is not None:
        label = int(grade >= RELEVANT_GRADE)
    return Pair(qid=qid, query=query, docid=docid, text=text, label=label, grade=grade,
                guidance=_guidance(record, path, line))  # fmt: skip


def _guidance(record: dict[str, Any], path: str, line: int) -> str:
    """The optional ``guidance`` text ("" when absent or empty; pandas' NaN is absent)."""
    value = record.get("guidance")
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if not isinstance(value, str):
        raise InputError("expected text", path=path, line=line, field="guidance")
    return value.strip()


def _text(record: dict[str, Any], name: str, path: str, line: int) -> str:
    value = record.get(name)
    if value is None:
        raise InputError("missing", path=path, line=line, field=name)
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InputError("expected text", path=path, line=line, field=name)
    text = str(value).strip()
    if not text:
        raise InputError("empty", path=path, line=line, field=name)
    return text


def _label(record: dict[str, Any], path: str, line: int, name: str = "label") -> int | None:
    value = record.get(name)
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | str) and str(value).strip() in ("0", "1"):
        return int(str(value).strip())
    raise InputError(
        f"not a binary label: {value!r}",
        path=path,
        line=line,
        field=name,
        hint="use 1 for relevant and 0 for irrelevant (graded labels go in 'grade')",
    )


def _grade(record: dict[str, Any], path: str, line: int) -> int | None:
    value = record.get("grade")
    if value is None or value == "":
        return None
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit():
        raise InputError(
            f"not a grade: {value!r}",
            path=path,
            line=line,
            field="grade",
            hint="use an integer such as 0, 1, 2 or 3",
        )
    return int(text)


def _check_same(pair: Pair, first: Pair, first_line: int, path: str, line: int) -> None:
    if pair != first:
        raise _repeat_error(pair, first_line, path, line)


def _repeat_error(pair: Pair, first_line: int, path: str, line: int) -> InputError:
    return InputError(
        f"pair ({pair.qid}, {pair.docid}) repeats line {first_line} with different content",
        path=path,
        line=line,
        field="docid",
        hint="each (qid, docid) pair may appear once; remove or fix the repeated line",
    )
