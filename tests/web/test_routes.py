"""Every route of both apps, enumerated, against one table of headers, auth and CSRF policy.

A route added without an entry in the table fails ``test_the_table_names_every_route``.
Policies: ``public`` (no login), ``login`` (public, but needs the login nonce), ``any``
(bearer token or session cookie), ``bearer`` (API: token only), ``session`` (page:
cookie only). ``csrf`` marks state-changing routes that a cookie session may call only
with the session's CSRF token and from this origin.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from starlette.routing import Mount

from docket.review.queue import enqueue
from docket.store.base import Store
from docket.web.middleware import SECURITY_HEADERS
from tests.review.review_helpers import relevance_payload
from tests.web.conftest import JSON, VERIFY_TOKENS, login, review_app, verify_app

ANN_VERIFY = next(iter(VERIFY_TOKENS))
REVIEW = {
    ("GET", "/"): ("any", False),
    ("GET", "/health"): ("public", False),
    ("GET", "/login"): ("public", False),
    ("POST", "/login"): ("login", False),
    ("POST", "/logout"): ("session", True),
    ("GET", "/queue"): ("any", False),
    ("GET", "/queue.json"): ("any", False),
    ("GET", "/tasks/{task_id:task}"): ("any", False),
    ("GET", "/tasks/{task_id:task}.json"): ("any", False),
    ("GET", "/next"): ("any", False),
    ("GET", "/next.json"): ("any", False),
    ("GET", "/stats"): ("any", False),
    ("GET", "/stats.json"): ("any", False),
    ("GET", "/admin"): ("any", False),
    ("GET", "/admin.json"): ("any", False),
    ("POST", "/tasks/{task_id:task}/decision"): ("any", True),
    ("POST", "/tasks/{task_id:task}/close"): ("any", True),
    ("POST", "/admin/assign"): ("any", True),
    ("GET", "/static/{path}"): ("public", False),
}
VERIFY = {
    ("GET", "/health"): ("public", False),
    ("GET", "/openapi.json"): ("public", False),
    ("GET", "/v1/rules"): ("bearer", False),
    ("GET", "/v1/stats"): ("bearer", False),
    ("POST", "/v1/verify"): ("bearer", False),
    ("POST", "/v1/verify/stream"): ("bearer", False),
    ("POST", "/v1/feedback"): ("bearer", False),
    ("GET", "/"): ("public", False),
    ("GET", "/login"): ("public", False),
    ("POST", "/login"): ("login", False),
    ("POST", "/logout"): ("session", True),
    ("GET", "/annotate"): ("session", False),
    ("GET", "/annotate/stats"): ("session", False),
    ("POST", "/annotate/verify/stream"): ("session", True),
    ("POST", "/annotate/feedback"): ("session", True),
    ("GET", "/static/verify/{path}"): ("public", False),
}
STATIC = {
    "/static/{path}": "/static/review.css",
    "/static/verify/{path}": "/static/verify/annotate.js",
}
BODIES: dict[str, Any] = {
    "/v1/verify": {"record": {"id": "d", "turns": [{"role": "user", "text": "hi"}]}},
    "/v1/verify/stream": {"record": {"id": "d", "turns": [{"role": "user", "text": "hi"}]}},
    "/annotate/verify/stream": {"record": {"id": "d", "turns": [{"role": "user", "text": "hi"}]}},
    "/v1/feedback": {"result_id": "r", "action": "accepted"},
    "/annotate/feedback": {"result_id": "r", "action": "accepted"},
}


def routes(app: Any) -> Iterator[tuple[str, str]]:
    """(method, path) of every route and mount of an app, through included routers."""
    stack = list(app.routes)
    while stack:
        route = stack.pop()
        if hasattr(route, "original_router"):  # FastAPI's included router
            stack.extend(route.original_router.routes)
        elif isinstance(route, Mount):
            yield "GET", route.path + "/{path}"
        elif isinstance(route, APIRoute) or hasattr(route, "methods"):
            for method in route.methods - {"HEAD"}:
                yield method, route.path


def _url(path: str) -> str:
    return STATIC.get(path, path.replace("{task_id:task}", "1"))


def _send(client: TestClient, method: str, path: str, **kw: Any):  # type: ignore[no-untyped-def]
    body = BODIES.get(path)
    kwargs = {"json": body} if body is not None else {"data": {}}
    return client.request(method, _url(path), follow_redirects=False, **kwargs, **kw)


@pytest.fixture(params=["review", "verify"])
def app_and_policy(request, store: Store, reviewer_tokens: dict):  # type: ignore[no-untyped-def]
    with store.session() as session:
        enqueue(session, job="j", kind="relevance", item_key="k", payload=relevance_payload())
    if request.param == "review":
        return review_app(store), REVIEW, reviewer_tokens["ann"]
    return verify_app(store), VERIFY, ANN_VERIFY


def test_the_table_names_every_route(app_and_policy) -> None:  # type: ignore[no-untyped-def]
    app, policy, _ = app_and_policy
    assert sorted(routes(app)) == sorted(policy)


def test_every_route_sends_the_security_headers_and_needs_its_login(app_and_policy) -> None:  # type: ignore[no-untyped-def]
    app, policy, _ = app_and_policy
    with TestClient(app) as client:
        for (method, path), (kind, _csrf) in policy.items():
            response = _send(client, method, path, headers=JSON)
            for name, value in SECURITY_HEADERS.items():
                assert response.headers.get(name) == value, (method, path, name)
            if not path.startswith("/static/"):
                assert response.headers["cache-control"] == "no-store", (method, path)
            if kind in ("any", "bearer", "session"):
                redirected = response.status_code == 303 and response.headers[
                    "location"
                ].startswith("/login")
                assert response.status_code == 401 or redirected, (
                    method,
                    path,
                    response.status_code,
                )
            elif kind == "login":
                assert response.status_code == 403, (method, path)  # no login nonce
            else:
                assert response.status_code in (200, 303), (method, path, response.status_code)


def test_bearer_routes_ignore_sessions_and_session_routes_ignore_bearers(app_and_policy) -> None:  # type: ignore[no-untyped-def]
    app, policy, token = app_and_policy
    with TestClient(app) as client:
        assert login(client, token).status_code in (200, 303)
        for (method, path), (kind, _) in policy.items():
            if kind == "bearer":
                response = _send(client, method, path, headers=JSON)
                assert response.status_code == 401, (method, path)
    with TestClient(app) as client:
        bearer = {**JSON, "Authorization": f"Bearer {token}"}
        for (method, path), (kind, _) in policy.items():
            if kind == "session":
                response = _send(client, method, path, headers=bearer)
                redirected = response.status_code == 303
                assert response.status_code == 401 or redirected, (method, path)


def test_every_state_changing_route_needs_the_csrf_token_and_our_origin(app_and_policy) -> None:  # type: ignore[no-untyped-def]
    app, policy, token = app_and_policy
    with TestClient(app) as client:
        assert login(client, token).status_code in (200, 303)
        for (method, path), (_, csrf) in policy.items():
            if not csrf:
                continue
            missing = _send(client, method, path, headers=JSON)
            assert missing.status_code == 403 and "CSRF" in missing.json()["error"], path
            foreign = _send(
                client, method, path, headers={**JSON, "Origin": "https://evil.example"}
            )
            assert foreign.status_code == 403, path
        still = client.get("/queue.json" if policy is REVIEW else "/annotate/stats")
        assert still.status_code == 200  # none of the refused requests logged us out


def test_unknown_paths_and_methods_use_the_error_shape_and_headers(app_and_policy) -> None:  # type: ignore[no-untyped-def]
    app, _, _ = app_and_policy
    with TestClient(app) as client:
        for response in (client.get("/nope", headers=JSON), client.delete("/login", headers=JSON)):
            assert response.status_code in (404, 405)
            assert set(response.json()) == {"error", "hint"} and response.json()["hint"]
            assert response.headers["x-content-type-options"] == "nosniff"
