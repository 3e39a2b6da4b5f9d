"""Fixtures for the review tests: a store, reviewers, and relevance payloads."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn
from fastapi.testclient import TestClient

from docket.review.auth import add_reviewer
from docket.review.web import create_app
from docket.store.base import Store, open_store


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    """A fresh store with the review tables."""
    opened = open_store(db_url)
    yield opened
    opened.close()


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


def login(client: TestClient, token: str) -> str:
    """Log the client in with a token; return the session's CSRF token."""
    response = client.post("/login", data={"token": token}, headers={"Accept": "application/json"})
    assert response.status_code == 200, response.text
    return response.json()["csrf_token"]


@pytest.fixture
def live_server(store: Store) -> Iterator[str]:
    """The review app on a real uvicorn server, on a free loopback port, in a thread."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(store), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the review server did not start")
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)
    sock.close()
