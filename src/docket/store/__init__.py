"""Persistent store: SQLAlchemy 2 tables, SQLite by default, any URL otherwise."""

from docket.store.base import Base, Store, open_store
from docket.store.judgments import (
    finished_keys,
    judgment_from_record,
    load_judgments,
    save_judgment,
    upsert_job,
)

__all__ = [
    "Base",
    "Store",
    "finished_keys",
    "judgment_from_record",
    "load_judgments",
    "open_store",
    "save_judgment",
    "upsert_job",
]
