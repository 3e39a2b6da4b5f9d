"""Migration 2 of the store's ledger: the web kit's sessions replace the per-app ones."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import create_engine, inspect, select, text

from docket.review.auth import add_reviewer
from docket.store.base import open_store
from docket.store.migrations import LEDGER
from docket.store.web_tables import WebSessionRow
from tests.web.conftest import login, review_app


def test_an_older_store_loses_the_old_session_tables_and_keeps_its_reviewers(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    store = open_store(url)
    with store.session() as session:
        token = add_reviewer(session, "ann")[1]
    store.close()
    engine = create_engine(url)
    with engine.begin() as conn:  # make it look like a store from before the kit
        conn.execute(text("DELETE FROM schema_version WHERE version = 2"))
        conn.execute(text("CREATE TABLE review_web_sessions (id_hash VARCHAR(64) PRIMARY KEY)"))
        conn.execute(text("CREATE TABLE adherence_sessions (id_sha256 VARCHAR(64) PRIMARY KEY)"))
    engine.dispose()
    store = open_store(url)
    tables = set(inspect(store.engine).get_table_names())
    assert {"review_web_sessions", "adherence_sessions"}.isdisjoint(tables)
    assert "web_sessions" in tables
    with store.engine.connect() as conn:
        versions = conn.execute(text("SELECT version FROM schema_version")).scalars().all()
        assert versions == [migration.version for migration in LEDGER]
    with TestClient(review_app(store)) as client:  # the old token still logs in
        assert login(client, token).status_code == 200


def test_session_hours_sets_the_expiry_and_the_cookie_age(db_url: str) -> None:
    store = open_store(db_url)
    with store.session() as session:
        token = add_reviewer(session, "ann")[1]
    with TestClient(review_app(store, session_hours=2)) as client:
        response = login(client, token)
        cookie = next(
            v for k, v in response.headers.multi_items() if k == "set-cookie" and "_session=" in v
        )
        assert "Max-Age=7200" in cookie
    with store.session() as session:
        row = session.scalars(select(WebSessionRow)).one()
        assert (row.expires_at - row.created_at).total_seconds() == 7200
