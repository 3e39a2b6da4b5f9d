"""The declarative base every docket table is declared on, and the ledger's own table.

Table modules of the store (``tables``, ``web_tables``, ``review_tables``,
``adherence_tables``) declare their tables on :class:`Base`; the migration ledger
(:mod:`docket.store.migrations`) is the only place that creates them in a database.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def utcnow() -> datetime:
    """Timezone-aware now, used for every timestamp docket stores."""
    return datetime.now(UTC)


class Base(DeclarativeBase):
    """Declarative base shared by every docket table."""


class SchemaVersion(Base):
    """Which numbered migrations of the ledger have been applied (append-only)."""

    __tablename__ = "schema_version"
    version: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    applied_at: Mapped[datetime] = mapped_column(default=lambda: datetime.now(UTC))
