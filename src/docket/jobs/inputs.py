"""The pairs of a job, from a pairs file, a pandas DataFrame or any iterable of Pair.

Whatever the form, the pairs are checked whole before the first call (a bad row names its
row and column, and nothing is judged), repeated pairs are judged once, and a file is
streamed rather than held in memory.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from collections.abc import Iterable, Iterator, Mapping, Sized
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docket.errors import ConfigError, InputError
from docket.relevance.pairs_io import GuidanceCheck, collect_pairs, scan_pairs
from docket.relevance.types import Pair

DATAFRAME = "DataFrame"
"""How a DataFrame is named in errors (its rows are numbered from 1)."""


@dataclass(frozen=True)
class JobInput:
    """Checked pairs, ready to stream into a job.

    Attributes:
        pairs: the pairs, each once, in input order (iterable more than once).
        count: how many distinct pairs.
        duplicates: repeated identical pairs that were dropped.
        source: where they came from (a path, ``DataFrame`` or ``pairs``).
        stem: a short name for default job names.
        guidance: each query's guidance (``{qid: text}``, "" for none).
        key_types: the dtypes of a DataFrame's ``qid`` and ``docid`` columns when they
            are not text (integer qids), so results convert back (``JobRun.to_pandas``).
    """

    pairs: Iterable[Pair]
    count: int
    duplicates: int
    source: str
    stem: str
    guidance: Mapping[str, str] = field(default_factory=dict)
    key_types: Mapping[str, Any] = field(default_factory=dict)

    def __iter__(self) -> Iterator[Pair]:
        return iter(self.pairs)

    def __len__(self) -> int:
        return self.count


def job_input(pairs: Any) -> JobInput:
    """Check ``pairs`` (a path, a DataFrame, a JobInput or an iterable of Pair).

    Raises:
        InputError: naming the file or DataFrame row and the column of the first bad record.
    """
    if isinstance(pairs, JobInput):
        return pairs
    if isinstance(pairs, str | Path):
        loaded = scan_pairs(pairs)
        return JobInput(loaded, len(loaded), loaded.duplicates, str(pairs), Path(pairs).stem,
                        loaded.guidance)  # fmt: skip
    if _is_dataframe(pairs):
        listed = collect_pairs(dataframe_records(pairs), DATAFRAME)
        return JobInput(listed, len(listed), listed.duplicates, DATAFRAME, "dataframe",
                        listed.guidance, key_types(pairs))  # fmt: skip
    return _from_pairs(pairs)


def select_input(
    loaded: JobInput, *, limit: int | None = None, sample: int | None = None, seed: int = 0
) -> JobInput:
    """A quick look at a big input: its first ``limit`` pairs, or a seeded ``sample``.

    ``sample`` draws that many distinct pairs uniformly (``random.Random(seed)``: the same
    seed and input give the same pairs, in input order, so a rerun resumes them); ``limit``
    then keeps the first of those. The input is still streamed. Selecting again from a
    selection changes nothing.

    Raises:
        ConfigError: a limit or sample below 1.
    """
    for name, value in (("limit", limit), ("sample", sample)):
        if value is not None and value < 1:
            raise ConfigError(f"{name} must be at least 1, got {value}", hint=f"e.g. {name}=10")
    chosen: Iterable[Pair] = loaded.pairs
    count = loaded.count
    if sample is not None and sample < count:
        keep = frozenset(random.Random(seed).sample(range(count), sample))
        chosen = _Picked(loaded.pairs, keep)
        count = sample
    if limit is not None and limit < count:
        chosen = _Limited(chosen, limit)
        count = limit
    if count == loaded.count:
        return loaded
    return dataclasses.replace(loaded, pairs=chosen, count=count)


@dataclass(frozen=True)
class _Picked:
    # Re-iterable (a job walks its pairs more than once), unlike a generator.
    pairs: Iterable[Pair]
    keep: frozenset[int]

    def __iter__(self) -> Iterator[Pair]:
        return (pair for index, pair in enumerate(self.pairs) if index in self.keep)


@dataclass(frozen=True)
class _Limited:
    pairs: Iterable[Pair]
    limit: int

    def __iter__(self) -> Iterator[Pair]:
        return itertools.islice(self.pairs, self.limit)


def _from_pairs(pairs: Iterable[Pair]) -> JobInput:
    # An empty iterable is a job with nothing to do (a benchmark without holes), not an error.
    unique: dict[tuple[str, str], Pair] = {}
    guidance = GuidanceCheck("pairs")
    duplicates = 0
    for index, pair in enumerate(pairs, start=1):
        if not isinstance(pair, Pair):
            raise InputError(
                f"expected a docket Pair, got {type(pair).__name__}", path="pairs", line=index
            )
        guidance.check(pair, index)
        first = unique.setdefault(pair.key, pair)
        if first is not pair:
            if first != pair:
                raise InputError(
                    f"pair ({pair.qid}, {pair.docid}) is given twice with different content",
                    path="pairs",
                    line=index,
                )
            duplicates += 1
    listed = list(unique.values())
    return JobInput(listed, len(listed), duplicates, "pairs", "pairs", guidance.texts)


def _is_dataframe(value: Any) -> bool:
    # Checked by duck type, so pandas is imported only by those who pass a DataFrame.
    return hasattr(value, "to_dict") and hasattr(value, "columns") and isinstance(value, Sized)


def key_types(frame: Any) -> dict[str, Any]:
    """The dtypes of ``frame``'s ``qid`` and ``docid`` (or ``docno``) columns that are not
    text: docket keeps ids as text, and converts back to these on the way out."""
    found = {}
    for key, names in (("qid", ("qid",)), ("docid", ("docid", "docno"))):
        column = next((name for name in names if name in frame.columns), None)
        if column is not None and frame[column].dtype.kind in "iu":
            found[key] = frame[column].dtype
    return found


def dataframe_records(frame: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(row number from 1, record)`` per DataFrame row; NaN cells count as missing.

    ``docno`` (PyTerrier's name) is read as ``docid``; numpy scalars become Python values.
    """
    for number, row in enumerate(frame.to_dict("records"), start=1):
        record = {str(k): _plain(v) for k, v in row.items()}
        if "docid" not in record and "docno" in record:
            record["docid"] = record["docno"]
        yield number, {k: v for k, v in record.items() if v is not None}


def _plain(value: Any) -> Any:
    if type(value).__name__ in ("NAType", "NaTType"):
        return None  # pandas' missing markers
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()  # numpy scalar
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if value.is_integer():
            return int(value)  # a label column with NaN holes is float in pandas
    return value
