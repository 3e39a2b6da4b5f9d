"""PostgreSQL goes down under a running review app: a 503 with no store details, ``/health``
says so, and the app answers again when the server is back."""

from __future__ import annotations

import os
from collections.abc import Iterator

import httpx
import pytest

from docket.review.auth import add_reviewer
from docket.review.web import create_app
from docket.store.base import open_store
from tests.browser_support import serve
from tests.pg_helpers import PgOutage, pg_schema_url

STORE_DETAILS = ("docket_test", "5432", "user", "host", "port", "psycopg", "connection", "t_")


@pytest.fixture
def outage() -> Iterator[PgOutage]:
    """A fresh PostgreSQL schema reached through a relay the test can take down."""
    base = os.environ.get("DOCKET_TEST_POSTGRES_URL")
    if not base:
        pytest.skip("DOCKET_TEST_POSTGRES_URL not set (run scripts/test-services.sh)")
    relay = PgOutage(pg_schema_url(base))
    yield relay
    relay.close()


def _no_store_details(response: httpx.Response, relay: PgOutage) -> None:
    text = response.text.lower()
    leaked = [word for word in STORE_DETAILS if word in text]
    assert not leaked, (leaked, response.text)
    assert str(relay.url.split("@")[1].split("/")[0]) not in response.text  # 127.0.0.1:port


def test_an_outage_is_a_503_without_store_details_and_health_reports_it(
    outage: PgOutage,
) -> None:
    store = open_store(outage.url)
    with store.session() as session:
        token = add_reviewer(session, "ann")[1]
    with serve(create_app(store)) as url, httpx.Client(base_url=url) as client:
        bearer = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
        assert client.get("/queue", headers=bearer).status_code == 200
        assert client.get("/health").json()["status"] == "ok"
        outage.stop()
        for headers, cookies in ((bearer, {}), ({"Accept": "application/json"},
                                                {"docket_review_session": "x" * 40})):  # fmt: skip
            client.cookies.clear()
            for name, value in cookies.items():
                client.cookies.set(name, value)
            response = client.get("/queue", headers=headers)
            assert response.status_code == 503, response.text
            assert response.json()["error"] == "the store is unavailable"
            _no_store_details(response, outage)
        client.cookies.clear()
        posted = client.post("/tasks/1/decision", data={"x": "1"}, headers=bearer)  # the gate
        assert posted.status_code == 503, posted.text
        _no_store_details(posted, outage)
        health = client.get("/health")
        assert health.status_code == 503 and health.json()["status"] == "unavailable"
        _no_store_details(health, outage)
        outage.start()
        assert client.get("/health").json()["status"] == "ok"
        assert client.get("/queue", headers=bearer).status_code == 200
    store.close()
