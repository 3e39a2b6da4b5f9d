"""The one migration ledger: every table and column of docket's schema comes in here.

The ledger is a numbered, append-only list of migrations; ``schema_version`` records which
ones a database has applied, and :func:`migrate` applies the rest in one transaction. A
step is one of three kinds:

- :class:`CreateTables`: named tables of the metadata, each created only if missing;
- :class:`AddColumns`: columns of the metadata added to an existing table, each only if the
  database lacks it;
- :class:`Sql`: statements for what the metadata cannot say (drops, indexes on old tables),
  written so that running them on a database that already has the change does nothing.

A table is always created in its *current* shape, so on a fresh database the later steps
that changed it find their work done and do nothing, while an old database gets each change
from its step: both end with the same schema (``tests/store/test_migrations.py`` checks
this against ``create_all``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import Connection, Engine, MetaData, insert, inspect, select, text
from sqlalchemy.schema import CreateColumn

from docket.errors import StoreError
from docket.store import adherence_tables, audit_tables, review_tables, tables, web_tables
from docket.store.schema import Base, SchemaVersion

# Imported for their declarations on Base: the ledger creates tables from the metadata.
_DECLARING_MODULES = (tables, web_tables, review_tables, adherence_tables, audit_tables)
# Any constant shared by every docket process: PostgreSQL serialises migrations on it.
_PG_LOCK_KEY = 0x646F636B6574


class Step(Protocol):
    """One change of a migration, applied inside the migration's transaction."""

    def apply(self, conn: Connection, metadata: MetaData) -> None:
        """Make the change on ``conn``; do nothing where the database already has it."""


@dataclass(frozen=True)
class CreateTables:
    """Create these tables of the metadata (with their indexes), each only if missing."""

    names: tuple[str, ...]

    def apply(self, conn: Connection, metadata: MetaData) -> None:
        """Create the missing ones among ``names``, in foreign-key order."""
        chosen = [metadata.tables[name] for name in self.names]
        metadata.create_all(conn, tables=chosen, checkfirst=True)


@dataclass(frozen=True)
class AddColumns:
    """Add columns the metadata declares on an existing table, each only if missing.

    A column added this way must be nullable or have a ``server_default`` (an old table
    has rows), and gets no constraint beyond NOT NULL and DEFAULT; index it with a
    :class:`Sql` step.
    """

    table: str
    columns: tuple[str, ...]

    def apply(self, conn: Connection, metadata: MetaData) -> None:
        """``ALTER TABLE ... ADD COLUMN`` for each of ``columns`` the database lacks."""
        present = {column["name"] for column in inspect(conn).get_columns(self.table)}
        table = metadata.tables[self.table]
        preparer = conn.dialect.identifier_preparer
        for name in self.columns:
            if name in present:
                continue
            spec = CreateColumn(table.c[name]).compile(dialect=conn.dialect)
            conn.execute(text(f"ALTER TABLE {preparer.format_table(table)} ADD COLUMN {spec}"))


@dataclass(frozen=True)
class Sql:
    """Statements run as written (they must be no-ops where the change exists)."""

    statements: tuple[str, ...]

    def apply(self, conn: Connection, metadata: MetaData) -> None:
        """Run each statement in order."""
        for statement in self.statements:
            conn.execute(text(statement))


@dataclass(frozen=True)
class Migration:
    """One numbered entry of the ledger."""

    version: int
    name: str
    steps: tuple[Step, ...]


# The tables of the first schema (before issues 9 and 11), which version 1 creates.
_INITIAL_TABLES = (
    "jobs", "judgments",
    "review_reviewers", "review_tasks", "review_assignments", "review_decisions",
    "adherence_runs", "adherence_results", "adherence_feedback", "adherence_tokens",
)  # fmt: skip
_PRE_LEDGER = (*_INITIAL_TABLES, "web_sessions", "review_task_facets", "pair_claims")
_OLD_SESSION_TABLES = ("review_web_sessions", "adherence_sessions")
_REVIEW_INDEXES = (
    "CREATE INDEX IF NOT EXISTS ix_review_tasks_job_status ON review_tasks (job, status)",
    "CREATE INDEX IF NOT EXISTS ix_review_decisions_task_reviewer"
    " ON review_decisions (task_id, reviewer_id)",
)

# Append only; never edit an entry that has shipped. Versions 1-3 predate the ledger rule
# (tables then came from create_all): on an old database they are recorded and skipped, on
# a fresh one they build the schema as it stood, and 4 adds the rest.
LEDGER: tuple[Migration, ...] = (
    Migration(1, "initial schema", (CreateTables(_INITIAL_TABLES),)),
    # Issue 11: both web apps keep sessions in web_sessions. The per-app session tables
    # are dropped, not copied: their rows do not name the token that opened them, so
    # revoking a token could not end them; users log in again.
    Migration(
        2,
        "web kit sessions",
        (
            CreateTables(("web_sessions",)),
            Sql(tuple(f"DROP TABLE IF EXISTS {name}" for name in _OLD_SESSION_TABLES)),
        ),
    ),
    # Issue 11: review counts and loads at 100,000 tasks without reading the payloads.
    Migration(3, "review indexes", (Sql(_REVIEW_INDEXES),)),
    # Until this entry, create_all made the tables and 1-3 were recorded whatever existed
    # (a store from before issue 11 lacks the queue facets, one from before issue 9 the
    # claims, one from docket's first commits even the review tables). This entry makes
    # every table of that time that is missing; the ones present are left as they are.
    Migration(4, "tables create_all made before the ledger", (CreateTables(_PRE_LEDGER),)),
    # Issue 17: budget caps count a job's spend in the store; plans and pilots kept with it.
    Migration(5, "job spend and notes", (CreateTables(("job_spend", "job_notes")),)),
    # Issue 23: the pairs drawn into a label audit, with their inclusion probabilities.
    Migration(6, "label audit draws", (CreateTables(("audit_pairs",)),)),
    # Issue 26: the answered calls of unfinished pairs stay with the job, so a resume on any
    # worker replays them instead of paying again, whatever the response cache setting.
    Migration(7, "call journal", (CreateTables(("call_journal",)),)),
)


def ledger_tables(ledger: Sequence[Migration] = LEDGER) -> set[str]:
    """Every table some :class:`CreateTables` step of ``ledger`` creates."""
    return {
        name
        for migration in ledger
        for step in migration.steps
        if isinstance(step, CreateTables)
        for name in step.names
    }


def migrate(
    engine: Engine,
    label: str,
    ledger: Sequence[Migration] = LEDGER,
    metadata: MetaData = Base.metadata,
) -> None:
    """Apply the entries of ``ledger`` that the database at ``engine`` has not applied.

    Reads first, so opening an up-to-date database takes no lock: it opens read-only, and
    while another process writes. Changes take the write lock (SQLite) or an advisory
    lock (PostgreSQL) and re-read the versions, so processes opening one new database at
    once migrate it once.

    Raises:
        StoreError: the database records a version newer than ``ledger`` knows.
    """
    with engine.connect() as conn:
        if not _pending(_applied(conn), ledger, label):
            return
    with _write_transaction(engine) as conn:
        # The ledger's own record, so it cannot come from an entry; re-read under the lock.
        SchemaVersion.__table__.create(conn, checkfirst=True)
        applied = _applied(conn)
        for migration in _pending(applied, ledger, label):
            for step in migration.steps:
                step.apply(conn, metadata)
            conn.execute(
                insert(SchemaVersion).values(version=migration.version, name=migration.name)
            )


def _applied(conn: Connection) -> set[int]:
    if not inspect(conn).has_table(SchemaVersion.__tablename__):
        return set()
    return set(conn.scalars(select(SchemaVersion.version)))


def _pending(applied: set[int], ledger: Sequence[Migration], label: str) -> list[Migration]:
    known = ledger[-1].version
    newest = max(applied, default=0)
    if newest > known:
        raise StoreError(
            f"database {label} was written by a newer docket (schema {newest}; "
            f"this docket knows schema {known})",
            hint="upgrade docket (pip install -U docket) to use this database",
        )
    return [migration for migration in ledger if migration.version not in applied]


@contextmanager
def _write_transaction(engine: Engine) -> Iterator[Connection]:
    # sqlite_immediate makes the store's begin hook take the write lock up front.
    with engine.execution_options(sqlite_immediate=True).begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK_KEY})
        yield conn
