"""The migration ledger is the only way tables come in, and every route ends at one schema.

A fresh database (built by the ledger alone), a database written by today's ``create_all``
and an old database (the schema of commit a105927, before issues 9 and 11) must all end
with the same tables, columns, keys and indexes, on SQLite and on a real PostgreSQL.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import (
    Column,
    Engine,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    insert,
    inspect,
    select,
    text,
)

from docket.store.base import open_store
from docket.store.migrations import (
    LEDGER,
    AddColumns,
    CreateTables,
    Migration,
    ledger_tables,
    migrate,
)
from docket.store.schema import Base, SchemaVersion

SCHEMAS = Path(__file__).parent / "schemas"
CURRENT = [migration.version for migration in LEDGER]


def _sqlite_urls(tmp_path: Path) -> Callable[[], str]:
    count = iter(range(1000))
    return lambda: f"sqlite:///{tmp_path / f'db{next(count)}.sqlite'}"


def _postgres_urls(_tmp_path: Path) -> Callable[[], str]:
    if "DOCKET_TEST_POSTGRES_URL" not in os.environ:
        pytest.skip("PostgreSQL not started (make test starts it)")
    from tests.pg_helpers import pg_schema_url

    return lambda: pg_schema_url(os.environ["DOCKET_TEST_POSTGRES_URL"])


@pytest.fixture(params=["sqlite", "postgresql"])
def new_url(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], str]:
    """A factory of URLs of new, empty databases of one dialect."""
    return {"sqlite": _sqlite_urls, "postgresql": _postgres_urls}[request.param](tmp_path)


def schema_of(engine: Engine) -> dict[str, Any]:
    """Tables with their columns, keys, constraints and indexes, as the database reports them."""
    found = inspect(engine)
    shape: dict[str, Any] = {}
    for name in sorted(found.get_table_names()):
        shape[name] = {
            "columns": sorted(
                (c["name"], str(c["type"]), c["nullable"], str(c.get("default")))
                for c in found.get_columns(name)
            ),
            "primary key": found.get_pk_constraint(name)["constrained_columns"],
            "foreign keys": sorted(
                (tuple(f["constrained_columns"]), f["referred_table"], tuple(f["referred_columns"]))
                for f in found.get_foreign_keys(name)
            ),
            "unique": sorted(
                (str(u["name"]), tuple(u["column_names"]))
                for u in found.get_unique_constraints(name)
            ),
            "indexes": sorted(
                (i["name"], tuple(i["column_names"]), bool(i["unique"]))
                for i in found.get_indexes(name)
            ),
        }
    if engine.dialect.name == "sqlite":
        with engine.connect() as conn:
            triggers = "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name"
            shape["(triggers)"] = conn.scalars(text(triggers)).all()
    return shape


def built_by_create_all(url: str) -> dict[str, Any]:
    """The schema ``create_all`` makes from today's metadata (the reference)."""
    engine = create_engine(url)
    Base.metadata.create_all(engine)
    try:
        return schema_of(engine)
    finally:
        engine.dispose()


def _versions(engine: Engine) -> list[int]:
    with engine.connect() as conn:
        return list(conn.scalars(select(SchemaVersion.version).order_by(SchemaVersion.version)))


def test_every_table_comes_in_through_one_numbered_entry() -> None:
    assert list(range(1, len(LEDGER) + 1)) == CURRENT
    assert ledger_tables() == set(Base.metadata.tables) - {SchemaVersion.__tablename__}


def test_a_fresh_database_from_the_ledger_equals_create_all(new_url) -> None:  # type: ignore[no-untyped-def]
    store = open_store(new_url())
    assert schema_of(store.engine) == built_by_create_all(new_url())
    assert _versions(store.engine) == CURRENT
    store.close()


def _statements(dialect: str) -> list[str]:
    lines = (SCHEMAS / f"a105927_{dialect}.sql").read_text().splitlines()
    body = "\n".join(line for line in lines if not line.startswith("--"))
    return [part.strip().removesuffix(";") for part in body.split(";\n\n") if part.strip()]


# Rows written by the old docket (times are added), one per table worth checking.
OLD_ROWS: dict[str, dict[str, Any]] = {
    "schema_version": {"version": 1, "name": "initial schema", "applied_at": None},
    "jobs": {"name": "j", "kind": "relevance", "method": "single", "model": "m",
             "options": {}, "source": "p", "docket_version": "0.1", "created_at": None},
    "review_reviewers": {"name": "ann", "token_hash": "h", "is_admin": False, "blind": False,
                         "active": True, "created_at": None},
    "review_web_sessions": {"id_hash": "s", "reviewer_id": 1, "csrf_token": "c",
                            "created_at": None, "expires_at": None},
}  # fmt: skip


def _old_database(url: str) -> None:
    """A database as docket wrote it at commit a105927, with some rows (version 1 only)."""
    engine = create_engine(url)
    now = datetime.now(UTC)
    with engine.begin() as conn:
        for statement in _statements(engine.dialect.name):
            conn.execute(text(statement))
        old = MetaData()
        old.reflect(conn)
        for table, row in OLD_ROWS.items():
            conn.execute(
                insert(old.tables[table]), [{k: now if v is None else v for k, v in row.items()}]
            )
    engine.dispose()


def test_a_database_from_before_issues_9_and_11_migrates_to_the_current_schema(new_url) -> None:  # type: ignore[no-untyped-def]
    url = new_url()
    _old_database(url)
    store = open_store(url)
    assert schema_of(store.engine) == built_by_create_all(new_url())
    assert _versions(store.engine) == CURRENT
    with store.engine.connect() as conn:  # the rows written before are still there
        assert conn.scalars(text("SELECT name FROM jobs")).all() == ["j"]
        assert conn.scalars(text("SELECT name FROM review_reviewers")).all() == ["ann"]
    store.close()


@pytest.mark.parametrize(
    "present",
    [
        pytest.param(None, id="every table (create_all)"),
        pytest.param(("jobs", "judgments"), id="jobs and judgments (commit e4821e1)"),
    ],
)
def test_a_database_that_recorded_1_to_3_ends_with_every_table(new_url, present) -> None:  # type: ignore[no-untyped-def]
    # Before the ledger, create_all made whatever tables the code declared at the time, and
    # 1-3 were recorded regardless: docket's first commits had only jobs and judgments.
    url = new_url()
    engine = create_engine(url)
    names = (SchemaVersion.__tablename__, *present) if present else None
    chosen = [Base.metadata.tables[name] for name in names] if names else None
    Base.metadata.create_all(engine, tables=chosen)
    with engine.begin() as conn:
        conn.execute(insert(SchemaVersion), [{"version": v, "name": "before"} for v in (1, 2, 3)])
    engine.dispose()
    store = open_store(url)
    assert schema_of(store.engine) == built_by_create_all(new_url())
    assert _versions(store.engine) == CURRENT
    store.close()


def test_an_up_to_date_store_opens_read_only_and_while_another_process_writes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "d.db"
    open_store(path).close()
    read_only = open_store(f"sqlite:///file:{path}?mode=ro&uri=true")
    assert _versions(read_only.engine) == CURRENT
    read_only.close()
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # a judge job in the middle of a commit
    try:  # opening only reads the versions; waiting for the write lock would fail after 30 s
        store = open_store(path)
        assert _versions(store.engine) == CURRENT
        store.close()
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def open_at_once(url: str, openers: int = 4) -> list[Exception]:
    """What ``openers`` threads opening the store at ``url`` at the same moment raised."""
    errors: list[Exception] = []
    start = threading.Barrier(openers)

    def opener() -> None:
        start.wait()
        try:
            open_store(url).close()
        except Exception as exc:  # any failure of one opener is the finding
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(openers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_processes_opening_one_new_database_at_once_migrate_it_once(new_url) -> None:  # type: ignore[no-untyped-def]
    url = new_url()
    errors = open_at_once(url)
    assert errors == []
    store = open_store(url)
    assert _versions(store.engine) == CURRENT
    store.close()


def _probe(*, later: bool) -> MetaData:
    """A table as first declared, or ``later`` with two more columns."""
    metadata = MetaData()
    columns = [Column("id", Integer, primary_key=True), Column("name", String(20))]
    if later:
        columns += [Column("note", Text), Column("score", Integer, server_default="0")]
        columns[-1].nullable = False
    Table("probe_items", metadata, *columns)
    return metadata


PROBE_V1 = (Migration(1, "probe", (CreateTables(("probe_items",)),)),)
PROBE_V2 = (
    *PROBE_V1,
    Migration(2, "probe columns", (AddColumns("probe_items", ("note", "score")),)),
)


def test_added_columns_reach_old_databases_and_are_no_ops_on_fresh_ones(new_url) -> None:  # type: ignore[no-untyped-def]
    old, fresh, reference = (create_engine(new_url()) for _ in range(3))
    migrate(old, "old", PROBE_V1, _probe(later=False))
    with old.begin() as conn:
        conn.execute(text("INSERT INTO probe_items (id, name) VALUES (1, 'kept')"))
    migrate(old, "old", PROBE_V2, _probe(later=True))
    migrate(old, "old", PROBE_V2, _probe(later=True))  # a second run changes nothing
    migrate(fresh, "fresh", PROBE_V2, _probe(later=True))
    _probe(later=True).create_all(reference)
    assert schema_of(old) == schema_of(fresh)
    assert schema_of(old)["probe_items"] == schema_of(reference)["probe_items"]
    assert _versions(old) == [1, 2]
    with old.connect() as conn:
        assert conn.execute(text("SELECT name, note, score FROM probe_items")).all() == [
            ("kept", None, 0)
        ]
    for engine in (old, fresh, reference):
        engine.dispose()


def test_processes_creating_one_sqlite_file_at_once_never_see_it_locked(tmp_path: Path) -> None:
    # Switching a new file to WAL meets the lock of another opener, and SQLite answers
    # that at once (no busy handler): before the switch was retried, about 1 round in 15
    # failed with "database is locked".
    errors = [e for i in range(30) for e in open_at_once(f"sqlite:///{tmp_path / f'new{i}.db'}")]
    assert errors == []
