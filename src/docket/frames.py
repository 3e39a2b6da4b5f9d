"""pandas DataFrames from docket's results, with pandas imported only when asked for.

Every ``to_pandas()`` (a job's judgments, a method comparison, the evaluation reports,
a hole fill) builds its frame here, so pandas stays an optional dependency.

This module imports nothing of docket but :mod:`docket.errors`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def import_pandas() -> Any:
    """The pandas module, or an error naming the install command."""
    try:
        import pandas
    except ImportError:
        from docket.errors import MissingDependencyError

        raise MissingDependencyError("pandas", "pandas") from None
    return pandas


def frame(rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> Any:
    """A DataFrame of ``rows`` with exactly ``columns``, in order (also when empty)."""
    return import_pandas().DataFrame(list(rows), columns=list(columns))


def flat(record: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``record`` with nested mappings spread into dotted columns (``kappa.n``); lists
    and other values stay as they are."""
    row: dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            row.update(flat(value, f"{name}."))
        else:
            row[name] = value
    return row
