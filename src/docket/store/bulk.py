"""Bulk inserts that leave existing rows alone, at the database driver's speed.

SQLAlchemy's executemany runs every row through its compiler to build a parameter dict
(about 0.05 ms for a judgment's row, a tenth of a whole LLM call's CPU at high
concurrency). Here the statement is compiled once per table, dialect and column set, and
each row becomes driver parameters with the columns' own bind processors applied: the same
values, types and casts SQLAlchemy itself would send.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from sqlalchemy import Table, bindparam
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import Session

Processor = Callable[[Any], Any] | None


def insert_new_rows(session: Session, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """``INSERT ... ON CONFLICT DO NOTHING`` of ``rows`` (all with the same keys), one executemany.

    Raises:
        KeyError: a row lacks a column the first row has.
    """
    if not rows:
        return
    conn = session.connection()
    sql, names, processors, positional = _compiled(table, conn.dialect, tuple(rows[0]))
    defaults = {n: _default(table, n) for n in names if n not in rows[0]}
    if defaults:  # columns with a Python-side default that the rows leave out
        rows = [{**defaults, **row} for row in rows]
    if positional:
        params: list[Any] = [
            tuple(p(row[n]) if p else row[n] for n, p in zip(names, processors, strict=True))
            for row in rows
        ]
    else:
        params = [
            {n: p(row[n]) if p else row[n] for n, p in zip(names, processors, strict=True)}
            for row in rows
        ]
    conn.exec_driver_sql(sql, params)


@lru_cache(maxsize=64)
def _compiled(
    table: Table, dialect: Dialect, columns: tuple[str, ...]
) -> tuple[str, tuple[str, ...], tuple[Processor, ...], bool]:
    """The statement's SQL, its parameter names in order, their processors, and whether
    the driver takes positional parameters."""
    insert = postgresql.insert if dialect.name == "postgresql" else sqlite.insert
    stmt = insert(table).values({name: bindparam(name) for name in columns})
    compiled = stmt.on_conflict_do_nothing().compile(dialect=dialect)
    positional = bool(compiled.positional)
    # Every parameter of the statement: the given columns and those with a default.
    names = tuple(compiled.positiontup or ()) if positional else tuple(compiled.params)
    processors = tuple(
        table.c[name].type.dialect_impl(dialect).bind_processor(dialect) for name in names
    )
    return compiled.string, names, processors, positional


def _default(table: Table, name: str) -> Any:
    """The value of a column's Python-side default (what SQLAlchemy would insert)."""
    default = table.c[name].default
    if default is None:
        return None
    if getattr(default, "is_scalar", False):
        return default.arg  # type: ignore[attr-defined]
    return default.arg(None)  # type: ignore[attr-defined]  # SQLAlchemy wraps it to take a context
