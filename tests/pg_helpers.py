"""PostgreSQL test helpers: a fresh schema per test, so other tests' tables never interfere."""

from __future__ import annotations

import uuid


def pg_schema_url(base: str) -> str:
    """A URL of ``base`` whose search path is a new, empty schema."""
    from sqlalchemy import create_engine, text

    schema = f"t_{uuid.uuid4().hex[:12]}"
    engine = create_engine(base)
    with engine.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    engine.dispose()
    return f"{base}?options=-csearch_path%3D{schema}"
