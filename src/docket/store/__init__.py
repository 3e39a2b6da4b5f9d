"""Persistent store, the bottom layer: SQLAlchemy 2 tables, SQLite by default, any URL otherwise.

Tables come into a database only through the migration ledger (:mod:`docket.store.migrations`);
the store imports nothing of docket but ``errors``, ``version`` and ``config``.
"""

from docket.store.base import Base, Store, open_store
from docket.store.judgments import finished_keys, load_judgments, upsert_job

__all__ = [
    "Base",
    "Store",
    "finished_keys",
    "load_judgments",
    "open_store",
    "upsert_job",
]
