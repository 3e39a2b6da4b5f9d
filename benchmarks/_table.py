"""The one table printer of the benchmark scripts.

Every script in ``benchmarks/`` writes its measurements to ``benchmarks/results/*.json``
and defines ``tables(result) -> list[Table]`` that turns one such JSON document into
tables. The script prints them with :func:`print_tables` after a run, and
``scripts/benchmarks_doc.py`` renders the same tables from the stored JSON into
``docs/benchmarks.md`` with :func:`markdown`, so the console and the docs never differ.

Scripts are run as ``python benchmarks/<name>.py`` (``make bench``), so this module is
imported as ``from _table import Table, print_tables``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Table:
    """Rows of cells under a title; notes are printed below the rows."""

    columns: Sequence[str]
    rows: list[Sequence[Any]] = field(default_factory=list)
    title: str = ""
    notes: list[str] = field(default_factory=list)

    def add(self, *cells: Any) -> None:
        """Append one row."""
        self.rows.append(cells)


def dict_table(
    rows: Sequence[dict[str, Any]], keys: Sequence[str] | None = None, title: str = ""
) -> Table:
    """A table of dict rows, one column per key (default: the first row's keys)."""
    columns = list(keys if keys is not None else (rows[0] if rows else []))
    return Table(columns, [[r.get(k) for k in columns] for r in rows], title)


def cell(value: Any) -> str:
    """One cell as text: floats to about three significant digits, None as a dash."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value != value:  # NaN
            return "n/a"
        return f"{value:.3g}" if abs(value) < 100 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10000 else str(value)
    return str(value)


def _numeric(table: Table, column: int) -> bool:
    values = [row[column] for row in table.rows if column < len(row) and row[column] is not None]
    return bool(values) and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in values
    )


def _texts(table: Table) -> list[list[str]]:
    width = len(table.columns)
    return [[cell(v) for v in row] + [""] * (width - len(row)) for row in table.rows]


def render(table: Table) -> str:
    """The table as aligned plain text (numbers right-aligned)."""
    texts = _texts(table)
    widths = [max([len(c)] + [len(r[i]) for r in texts]) for i, c in enumerate(table.columns)]
    right = [_numeric(table, i) for i in range(len(table.columns))]

    def line(cells: Sequence[str]) -> str:
        parts = [
            c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True)
        ]
        return "  ".join(parts).rstrip()

    out = [table.title] if table.title else []
    out += [line(table.columns), line(["-" * w for w in widths])]
    out += [line(r) for r in texts]
    out += table.notes
    return "\n".join(out)


def print_tables(tables: Iterable[Table]) -> None:
    """Print each table, a blank line between them."""
    print("\n\n".join(render(t) for t in tables))


def markdown(table: Table) -> str:
    """The table as a Markdown pipe table, title in bold above, notes below."""

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    rule = ["---:" if _numeric(table, i) else "---" for i in range(len(table.columns))]
    out = [f"**{table.title}**", ""] if table.title else []
    out += [line(list(table.columns)), "|" + "|".join(rule) + "|"]
    out += [line(r) for r in _texts(table)]
    if table.notes:
        out += [""] + [
            f"{n}  " if i < len(table.notes) - 1 else n for i, n in enumerate(table.notes)
        ]
    return "\n".join(out)


def write_results(path: Path, result: dict[str, Any]) -> None:
    """Write one benchmark's JSON (indented, newline at the end), whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
    tmp.replace(path)
