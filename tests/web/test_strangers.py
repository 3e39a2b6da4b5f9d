"""Do no work for strangers: credentials are checked before a body is read or parsed.

A caller without valid credentials who posts a large or deeply nested body gets 401
(JSON, or the error page for a browser), and the body is never read from the socket's
stream, never depth-scanned and never parsed. Token holders still get the depth limit.
"""

from __future__ import annotations

import json

import httpx
import pytest

import docket.web.middleware as middleware
from docket.store.base import Store
from tests.browser_support import serve
from tests.web.conftest import JSON, VERIFY_TOKENS, review_app, verify_app

ANN = next(iter(VERIFY_TOKENS))
DEEP = b"[" * 5_000 + b"]" * 5_000
ROUTES = {
    "review": ["/tasks/1/decision", "/tasks/1/close", "/admin/assign", "/logout"],
    "verify": ["/v1/verify", "/v1/verify/stream", "/v1/feedback", "/annotate/verify/stream"],
}


@pytest.fixture
def no_parsing(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every depth scan and JSON parse (both must stay empty for strangers)."""
    calls: list[str] = []
    scan, loads = middleware.json_depth, json.loads

    def counted_scan(body: bytes) -> int:
        calls.append("scan")
        return scan(body)

    def counted_loads(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append("loads")
        return loads(*args, **kwargs)

    monkeypatch.setattr(middleware, "json_depth", counted_scan)
    monkeypatch.setattr(json, "loads", counted_loads)
    return calls


def _app(which: str, store: Store, **settings):  # type: ignore[no-untyped-def]
    return (review_app if which == "review" else verify_app)(store, **settings)


@pytest.mark.parametrize("which", ["review", "verify"])
def test_a_stranger_posting_a_deep_body_gets_401_and_nothing_is_parsed(
    store: Store, which: str, no_parsing: list[str]
) -> None:
    headers = {**JSON, "Content-Type": "application/json"}
    with serve(_app(which, store, max_json_depth=8)) as url:
        for path in ROUTES[which]:
            for extra in ({}, {"Authorization": "Bearer not-a-token-0123456789"}):
                answer = httpx.post(url + path, content=DEEP, headers={**headers, **extra})
                assert answer.status_code == 401, (path, answer.text)
                assert no_parsing == [], path  # checked before the client parses the answer
                assert answer.headers["connection"] == "close"  # the body is not drained
                assert answer.json()["error"] and answer.json()["hint"]
                no_parsing.clear()


@pytest.mark.parametrize("which", ["review", "verify"])
def test_a_strangers_body_is_never_read(store: Store, which: str) -> None:
    # Straight through the ASGI app: count how often the body is asked for.
    import anyio

    app, reads, sent = _app(which, store), [], []

    async def receive():  # type: ignore[no-untyped-def]
        reads.append(1)
        return {"type": "http.request", "body": DEEP, "more_body": False}

    async def send(message) -> None:  # type: ignore[no-untyped-def]
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": ROUTES[which][0],
        "raw_path": ROUTES[which][0].encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"accept", b"application/json"),
            (b"content-length", str(len(DEEP)).encode()),
        ],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 80),
    }
    anyio.run(app, scope, receive, send)
    assert sent[0]["status"] == 401 and reads == []


def test_a_browser_stranger_gets_the_error_page(store: Store) -> None:
    with serve(review_app(store)) as url:
        answer = httpx.post(url + "/tasks/1/decision", data={"label": "1"})
    assert answer.status_code == 401 and answer.headers["content-type"].startswith("text/html")


@pytest.mark.parametrize("which", ["review", "verify"])
def test_token_holders_still_get_the_depth_limit(
    store: Store, which: str, reviewer_tokens: dict, no_parsing: list[str]
) -> None:
    token = reviewer_tokens["ann"] if which == "review" else ANN
    headers = {**JSON, "Content-Type": "application/json", "Authorization": f"Bearer {token}"}
    with serve(_app(which, store, max_json_depth=8)) as url:
        answer = httpx.post(url + ROUTES[which][0], content=DEEP, headers=headers)
    assert no_parsing == ["scan"]  # scanned, refused, never parsed
    assert answer.status_code == 400 and "deeper than 8" in answer.json()["error"]


def test_the_annotator_stream_checks_the_session_before_the_body(store: Store) -> None:
    # Not JSON at all: a stranger still hears 401 (login), not 422 (bad body).
    with serve(verify_app(store)) as url:
        answer = httpx.post(
            url + "/annotate/verify/stream",
            content=b"not json",
            headers={"Content-Type": "application/json"},
        )
    assert answer.status_code == 401
