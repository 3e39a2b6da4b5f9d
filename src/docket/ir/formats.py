"""TREC qrels and run files; atomic writes (queries: :mod:`docket.ir.queries`).

Conventions:

* Qrels are plain ``dict[qid, dict[docid, grade]]`` (the form ``ir_measures`` accepts).
* A run is ranked as ``trec_eval`` ranks it: by score descending, ties broken by docid
  descending; the rank column is validated but not used for ordering. Every docket
  computation (holes, measures, condensed lists) uses this one order.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path

from docket.errors import InputError
from docket.reading import json_object, not_utf8, numbered_lines, open_text
from docket.writing import write_atomically

Qrels = dict[str, dict[str, int]]

#: Grades accepted by default: TREC collections use -2 (junk) up to 4 (navigational).
DEFAULT_GRADES: frozenset[int] = frozenset(range(-2, 5))


def read_qrels(path: str | Path, grades: Iterable[int] | None = None) -> Qrels:
    """Read a TREC qrels file (``qid iteration docid grade``).

    Args:
        path: the qrels file (optionally gzipped), or ``irds:<dataset id>`` for the
            qrels of a local ``ir_datasets`` dataset.
        grades: accepted relevance grades; default :data:`DEFAULT_GRADES`.

    Raises:
        InputError: a line without four columns, a non-integer or unknown grade, or two
            different grades for the same pair (names file, line and field).
    """
    allowed = frozenset(grades) if grades is not None else DEFAULT_GRADES
    if str(path).startswith("irds:"):
        return _irds_qrels(str(path), allowed)
    qrels: Qrels = {}
    for number, line in numbered_lines(path):
        qid, _, docid, raw = qrels_columns(line, path, number)
        grade = _parse_grade(raw, allowed, path, number)
        known = qrels.setdefault(qid, {})
        if known.get(docid, grade) != grade:
            raise InputError(
                f"pair ({qid}, {docid}) is judged twice with different grades",
                path=str(path),
                line=number,
                field="grade",
            )
        known[docid] = grade
    return qrels


def qrels_columns(line: str, path: str | Path, number: int) -> list[str]:
    """The four columns of a qrels line (qid iteration docid grade), or InputError."""
    parts = line.split()
    if len(parts) != 4:
        raise InputError(
            f"expected 4 columns (qid iteration docid grade), found {len(parts)}",
            path=str(path),
            line=number,
            hint="TREC qrels lines look like: 101 0 doc7 1",
        )
    return parts


def _irds_qrels(name: str, allowed: frozenset[int]) -> Qrels:
    from docket.ir.irds import read_qrels as read_irds_qrels

    qrels = read_irds_qrels(name.removeprefix("irds:"))
    for qid, docs in qrels.items():
        for docid, grade in docs.items():
            if grade not in allowed:
                raise InputError(
                    f"unknown relevance value {grade} for ({qid}, {docid}) "
                    f"(accepted: {sorted(allowed)})",
                    path=name,
                    field="grade",
                    hint="pass --grades to accept other values",
                )
    return qrels


def _parse_grade(raw: str, allowed: frozenset[int], path: str | Path, number: int) -> int:
    try:
        grade = int(raw)
    except ValueError:
        raise InputError(
            f"relevance '{raw}' is not an integer", path=str(path), line=number, field="grade"
        ) from None
    if grade not in allowed:
        raise InputError(
            f"unknown relevance value {grade} (accepted: {sorted(allowed)})",
            path=str(path),
            line=number,
            field="grade",
            hint="pass --grades to accept other values",
        )
    return grade


def trec_sorted(keys: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """(qid, docid) keys in the order ``trec_eval`` sorts qrels: qid, then docid, by bytes.

    (Python compares strings by code point, which is the order of their UTF-8 bytes.)
    """
    return sorted(keys)


def write_qrels(qrels: Mapping[str, Mapping[str, int]], path: str | Path) -> None:
    """Write qrels in TREC format, in ``trec_eval`` order, atomically."""
    keys = trec_sorted((qid, docid) for qid, docs in qrels.items() for docid in docs)
    write_atomically(Path(path), (f"{q} 0 {d} {qrels[q][d]}\n" for q, d in keys))


def count_judgments(qrels: Mapping[str, Mapping[str, int]]) -> int:
    """Number of judged (qid, docid) pairs."""
    return sum(len(docs) for docs in qrels.values())


def uncovered(
    original: Mapping[str, Mapping[str, int]], completed: Mapping[str, Mapping[str, int]]
) -> int:
    """Judged pairs of ``original`` that ``completed`` does not hold.

    Completed qrels hold every original judgment; a file of new labels only (a plain job
    export) would score every system near 0.
    """
    return sum(1 for q, docs in original.items() for d in docs if d not in completed.get(q, {}))


@dataclass(frozen=True)
class Run:
    """A retrieval system's ranked lists.

    Attributes:
        name: system name (the file name without extension by default).
        ranking: for each query, docids in rank order (best first, no duplicates).
        duplicates: repeated documents within one query's ranking that were dropped
            (the first occurrence in the file is kept).
        path: the file the run came from, if any.
    """

    name: str
    ranking: dict[str, tuple[str, ...]]
    duplicates: int = 0
    path: str = ""

    def top(self, qid: str, depth: int | None) -> tuple[str, ...]:
        """The first ``depth`` documents of a query (all when ``depth`` is None)."""
        docs = self.ranking.get(qid, ())
        return docs if depth is None else docs[:depth]

    def to_ir_measures(self, depth: int | None = None) -> dict[str, dict[str, float]]:
        """The run as ``ir_measures`` input, with scores that encode docket's order.

        Scores are replaced by descending integers so that every provider (pytrec_eval,
        Judged, ...) sees exactly the same order, whatever its own tie-breaking.
        """
        out: dict[str, dict[str, float]] = {}
        for qid, docs in self.ranking.items():
            top = docs if depth is None else docs[:depth]
            if top:
                out[qid] = dict(zip(top, map(float, range(len(top), 0, -1)), strict=True))
        return out


def run_name(path: str | Path) -> str:
    """System name for a run file: its name without ``.gz`` and the last extension."""
    name = Path(path).name
    name = name[:-3] if name.endswith(".gz") else name
    return name.rsplit(".", 1)[0] if "." in name[1:] else name


def read_run(path: str | Path, name: str | None = None) -> Run:
    """Read a TREC run file (``qid Q0 docid rank score tag``).

    Raises:
        InputError: a line without six columns, a non-integer rank, a non-numeric or
            non-finite score, or an empty file (names file, line and field).
    """
    scores: dict[str, dict[str, float]] = {}
    duplicates = 0
    # The hot loop of loading: kept flat because runs have millions of lines.
    with open_text(path) as handle:
        try:
            for number, line in enumerate(handle, start=1):
                parts = line.split()
                if len(parts) != 6:
                    if not parts:
                        continue
                    _bad_columns(len(parts), path, number)
                qid, _, docid, rank, raw_score, _ = parts
                try:
                    score = float(raw_score)
                except ValueError:
                    score = math.nan
                if not (rank.isdigit() and math.isfinite(score)):
                    _check_numbers(rank, raw_score, score, path, number)
                docs = scores.get(qid)
                if docs is None:
                    docs = scores[qid] = {}
                if docid in docs:
                    duplicates += 1
                else:
                    docs[docid] = score
        except UnicodeDecodeError:
            raise not_utf8(path) from None
    if not scores:
        raise InputError("run file is empty", path=str(path), hint="give a TREC run file")
    ranking = {qid: _ranked(docs) for qid, docs in scores.items()}
    return Run(name or run_name(path), ranking, duplicates, str(path))


def _bad_columns(found: int, path: str | Path, number: int) -> None:
    raise InputError(
        f"expected 6 columns (qid Q0 docid rank score tag), found {found}",
        path=str(path),
        line=number,
        hint="TREC run lines look like: 101 Q0 doc7 1 12.5 bm25",
    )


def _check_numbers(rank: str, raw_score: str, score: float, path: str | Path, number: int) -> None:
    """Raise for a non-integer rank or a non-finite score (``rank`` may be signed)."""
    try:
        int(rank)
    except ValueError:
        raise InputError(
            f"rank '{rank}' is not an integer", path=str(path), line=number, field="rank"
        ) from None
    if not math.isfinite(score):
        raise InputError(
            f"score '{raw_score}' is not a finite number",
            path=str(path),
            line=number,
            field="score",
        )


def _ranked(docs: dict[str, float]) -> tuple[str, ...]:
    # trec_eval order: score descending, then docid descending.
    ordered = sorted(docs.items(), key=itemgetter(1, 0), reverse=True)
    return tuple(docid for docid, _ in ordered)


def read_runs(paths: Iterable[str | Path]) -> list[Run]:
    """Read several runs; names clashing between files get the parent folder as prefix."""
    runs = [read_run(path) for path in paths]
    seen: dict[str, int] = {}
    for run in runs:
        seen[run.name] = seen.get(run.name, 0) + 1
    return [
        Run(f"{Path(run.path).parent.name}/{run.name}", run.ranking, run.duplicates, run.path)
        if seen[run.name] > 1
        else run
        for run in runs
    ]


def parse_json_line(line: str, path: str | Path, number: int) -> dict:
    """Decode one JSONL line holding an object, or raise InputError (see :mod:`docket.reading`)."""
    return json_object(line, path, number)


def first_field(record: dict, names: tuple[str, ...], path: str | Path, number: int) -> str:
    """The first of ``names`` present in ``record``, as a string; InputError if none."""
    for name in names:
        value = record.get(name)
        if value is not None and str(value) != "":
            return str(value)
    raise InputError(
        f"missing field (one of {', '.join(names)})", path=str(path), line=number, field=names[0]
    )
