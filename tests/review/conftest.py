"""Fixtures for the review tests: a store, reviewers, and relevance payloads."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from docket.review.auth import add_reviewer
from docket.review.web import create_app
from docket.store.base import Store
from tests.browser_support import serve


@pytest.fixture
def tokens(store: Store) -> dict[str, str]:
    """Reviewers ann, bob (reviewers) and root (admin), by name -> login token."""
    made = {}
    with store.session() as session:
        for name, admin in (("ann", False), ("bob", False), ("root", True)):
            made[name] = add_reviewer(session, name, admin=admin)[1]
    return made


@pytest.fixture
def client(store: Store) -> Iterator[TestClient]:
    """A test client of the review app (not logged in)."""
    with TestClient(create_app(store)) as test_client:
        yield test_client


def login_nonce(client: TestClient) -> str:
    """Open the login form (as JSON); the client keeps its nonce cookie."""
    form = client.get("/login", headers={"Accept": "application/json"})
    assert form.status_code == 200, form.text
    return form.json()["nonce"]


def login(client: TestClient, token: str) -> str:
    """Log the client in with a token; return the session's CSRF token."""
    data = {"token": token, "csrf_token": login_nonce(client)}
    response = client.post("/login", data=data, headers={"Accept": "application/json"})
    assert response.status_code == 200, response.text
    return response.json()["csrf_token"]


@pytest.fixture
def live_server(store: Store) -> Iterator[str]:
    """The review app on a real uvicorn server, on a free loopback port, in a thread."""
    with serve(create_app(store)) as url:
        yield url
