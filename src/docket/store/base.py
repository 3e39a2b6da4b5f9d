"""Opening a store: engine, sessions, one-line database errors, and the schema brought up to date.

SQLite (``docket.db``) by default; any SQLAlchemy URL otherwise (PostgreSQL via psycopg).
Tables are declared on :class:`~docket.store.schema.Base` in the store's table modules and
come into a database only through the numbered ledger in :mod:`docket.store.migrations`,
which :func:`open_store` applies (a database from a newer docket is refused).
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import Engine, create_engine, event, make_url
from sqlalchemy import text as sql_text
from sqlalchemy.exc import ArgumentError, DatabaseError, DBAPIError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from docket.errors import StoreError
from docket.store.migrations import migrate
from docket.store.schema import Base, SchemaVersion, utcnow

__all__ = [
    "Base",
    "SchemaVersion",
    "Store",
    "check_sqlite_path",
    "display_url",
    "open_store",
    "reading_url",
    "store_error",
    "to_url",
    "utcnow",
]


def to_url(db: str | Path) -> str:
    """Accept a path (``docket.db``) or a SQLAlchemy URL."""
    text = str(db)
    return text if "://" in text else f"sqlite:///{text}"


_QUERY_SECRET = re.compile(r"([?&](?:password|passwd|pwd|pass)=)[^&#]*", re.IGNORECASE)
_DSN_SECRET = re.compile(
    r"(\b(?:password|passwd|pwd)\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE
)
_USERINFO_SECRET = re.compile(r"(://[^:/@?#]*:)[^@/?#]*@")


def display_url(db: str | Path) -> str:
    """``db`` as it may be shown to anyone: every password in it becomes ``***``.

    The one mask for printing or logging a store URL: ``user:pass@host``, a
    ``?password=`` (or ``&password=``) query parameter, and ``password=...`` in a libpq
    key/value DSN (``host=db password=secret``).
    """
    text = str(db)
    if "://" in text:
        try:
            text = make_url(text).render_as_string(hide_password=True)
        except (ArgumentError, ValueError):  # e.g. a port that is not a number
            text = _USERINFO_SECRET.sub(r"\1***@", text)
        return _QUERY_SECRET.sub(r"\1***", text)
    return _DSN_SECRET.sub(r"\1***", text)


@dataclass
class Store:
    """An opened database: engine plus session factories.

    ``session()`` may read and write. On SQLite it takes the write lock up front (``BEGIN
    IMMEDIATE``), so a transaction that reads and then writes (a claim, a new job) waits
    for another process's writer instead of failing half-way with "database is locked".
    ``read_session()`` only reads and never blocks writers (use it for long reads).
    """

    engine: Engine
    sessions: sessionmaker[Session]
    reads: sessionmaker[Session] | None = None
    label: str = ""

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session that commits on success and rolls back on error."""
        with self._transaction(self.sessions) as session:
            yield session

    @contextmanager
    def read_session(self) -> Iterator[Session]:
        """A session for reading only (no write lock on SQLite)."""
        with self._transaction(self.reads or self.sessions) as session:
            yield session

    @contextmanager
    def _transaction(self, factory: sessionmaker[Session]) -> Iterator[Session]:
        with factory() as session:
            try:
                yield session
                session.commit()
            except OperationalError as exc:
                session.rollback()
                if _server_gone(exc):
                    raise StoreError(
                        f"database {self.label}: the database server went away "
                        f"({_first_line(exc)})",
                        hint="start it (or wait for it) and run the same command again: "
                        "finished work is saved and a rerun resumes",
                    ) from exc
                raise store_error(self.label, exc) from exc
            except Exception:
                session.rollback()
                raise

    def reachable(self) -> bool:
        """Whether the database answers now (a web app's ``/health``)."""
        try:
            with self.read_session() as session:
                session.execute(sql_text("SELECT 1"))
        except (StoreError, DBAPIError):
            return False
        return True

    def close(self) -> None:
        """Dispose of the engine's connections."""
        self.engine.dispose()


_GONE = (
    "server closed the connection",
    "terminating connection",
    "connection refused",
    "could not connect",
    "connection is closed",
    "connection already closed",
    "the database system is shutting down",
    "the database system is starting up",
    "consuming input failed",
    "connection to server",
)


def _first_line(exc: DBAPIError) -> str:
    return (str(exc.orig) if exc.orig else str(exc)).strip().splitlines()[0]


def _server_gone(exc: DBAPIError) -> bool:
    """A database server that was reachable stopped answering (restart, outage)."""
    if exc.connection_invalidated:
        return True
    lowered = (str(exc.orig) if exc.orig else str(exc)).lower()
    return any(sign in lowered for sign in _GONE)


def store_error(label: str, exc: OperationalError) -> StoreError:
    """One line for a database failure, with the fix for the common ones."""
    reason = _first_line(exc)
    lowered = reason.lower()
    hint = "check the --db setting"
    if "full" in lowered:
        hint = "free disk space and run the same command again; finished work is saved"
    elif "readonly" in lowered or "read-only" in lowered:
        hint = "make the file and its directory writable, or pass another --db"
    elif "locked" in lowered:
        hint = "another process holds the database too long; run again when it is done"
    elif "unable to open" in lowered:
        hint = "create the directory first, or pass another --db"
    return StoreError(f"database {label}: {reason}", hint=hint)


def _sqlite_connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    # The driver's own transaction handling is off, so that sessions can BEGIN IMMEDIATE.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    # busy_timeout avoids "database is locked" when two writers meet, so it comes first:
    # switching a new file to WAL needs a lock that another process opening the same new
    # database may hold. WAL lets the review server read while a judge job writes;
    # synchronous=NORMAL is WAL's durable-against-crashes setting and spares a disk sync
    # per commit.
    cursor.execute("PRAGMA busy_timeout=30000")
    _set_wal(cursor)
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _set_wal(cursor, attempts: int = 50) -> None:  # type: ignore[no-untyped-def]
    # SQLite answers a journal-mode switch that meets another connection's lock with
    # SQLITE_BUSY at once, without its busy handler, so the switch is tried again.
    for attempt in range(attempts):
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(0.02 * (attempt + 1))


def _sqlite_begin(conn) -> None:  # type: ignore[no-untyped-def]
    immediate = conn.get_execution_options().get("sqlite_immediate")
    conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


SQLITE_MAGIC = b"SQLite format 3\x00"


def check_sqlite_path(path: Path, label: str) -> None:
    """Refuse, before any work, a SQLite path that cannot hold a database."""
    if str(path) in ("", ":memory:"):
        return
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise StoreError(
            f"database {label}: the directory '{folder}' does not exist",
            hint="create it first, or pass another --db",
        )
    if path.is_dir():
        raise StoreError(f"database {label} is a directory", hint="pass a file path as --db")
    if path.exists() and path.stat().st_size:
        with path.open("rb") as handle:
            if handle.read(16) != SQLITE_MAGIC:
                raise StoreError(
                    f"database {label} is not a SQLite file",
                    hint="pass the path of a docket database, or a new file name",
                )
    writable = os.access(path, os.W_OK) if path.exists() else True
    if not (writable and os.access(folder, os.W_OK)):
        raise StoreError(
            f"database {label} is read-only (SQLite needs the file and its directory writable)",
            hint="make both writable, or pass another --db",
        )


def open_store(db: str | Path = "docket.db", *, read_only: bool = False) -> Store:
    """Open (and create or migrate) the store at a path or SQLAlchemy URL.

    ``read_only`` is for commands that only read (export, show, statistics): a SQLite
    store must exist already ("no docket store at ..."; nothing is created), and a file or
    directory that is not writable is opened read-only (see :func:`reading_url`).

    Raises:
        StoreError: the database cannot be used (one line naming the fix), found before
            any judging starts.
    """
    url = to_url(db)
    label = f"'{display_url(db)}'"
    if read_only:
        url = reading_url(url, label)
    engine = create_engine(url, future=True)
    sessions = reads = sessionmaker(engine, expire_on_commit=False)
    if engine.dialect.name == "sqlite":
        if not engine.url.query.get("uri"):  # a file: URI (e.g. mode=ro) is taken as given
            check_sqlite_path(Path(engine.url.database or ""), label)
        if "mode=ro" in str(engine.url) or engine.url.query.get("mode") == "ro":
            event.listen(engine, "connect", _sqlite_connect_read_only)
            return _opened(engine, sessions, sessions, label)
        event.listen(engine, "connect", _sqlite_connect)
        event.listen(engine, "begin", _sqlite_begin)
        sessions = sessionmaker(
            engine.execution_options(sqlite_immediate=True), expire_on_commit=False
        )
    return _opened(engine, sessions, reads, label)


def reading_url(url: str, label: str) -> str:
    """The URL a read-only command opens: ``url``, or a read-only SQLite URI.

    A SQLite path that holds no database is refused (a mistyped ``--db`` must not create an
    empty store and report on it). A file or directory that is not writable is opened with
    ``mode=ro``; in a read-only directory also ``immutable=1``, since SQLite cannot create
    its lock files there (the store must then not change while it is read).

    Raises:
        StoreError: "no docket store at ..." for a missing or empty SQLite file.
    """
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.query.get("uri"):
        return url
    if parsed.database in (None, "", ":memory:"):
        return url
    path = Path(parsed.database)
    if not path.is_file() or path.stat().st_size == 0:
        raise StoreError(
            f"no docket store at {label}",
            hint="check --db; a judging command (docket judge) creates the store",
        )
    folder_writable = os.access(path.parent if str(path.parent) else Path("."), os.W_OK)
    if os.access(path, os.W_OK) and folder_writable:
        return url
    flags = "mode=ro" + ("" if folder_writable else "&immutable=1")
    return f"sqlite:///file:{quote(str(path.resolve()))}?{flags}&uri=true"


def _sqlite_connect_read_only(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    # No journal-mode switch: it would write. query_only makes any write fail at once.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA query_only=ON")
    cursor.close()


def _opened(
    engine: Engine, sessions: sessionmaker[Session], reads: sessionmaker[Session], label: str
) -> Store:
    try:
        migrate(engine, label)
    except OperationalError as exc:
        error = store_error(label, exc)
        raise StoreError(f"cannot open {error.message}", hint=error.hint) from exc
    except DatabaseError as exc:
        raise StoreError(
            f"cannot open database {label}: {_first_line(exc)}", hint="check the --db setting"
        ) from exc
    return Store(engine, sessions, reads, label)


def _first_line(exc: DBAPIError) -> str:
    return str(exc.orig).strip().splitlines()[0] if exc.orig else type(exc).__name__
