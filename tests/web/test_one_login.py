"""Both web apps mount the kit's one login flow and answer pages through its one helper."""

from __future__ import annotations

from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from docket.store.base import Store
from docket.web import pages
from tests.web.conftest import JSON, VERIFY_TOKENS, login, review_app, verify_app


def _endpoints(app) -> dict[tuple[str, str], object]:  # type: ignore[no-untyped-def]
    """(method, path) -> handler of every route, through included routers."""
    found, stack = {}, list(app.routes)
    while stack:
        route = stack.pop()
        if hasattr(route, "original_router"):  # FastAPI's included router
            stack.extend(route.original_router.routes)
        elif isinstance(route, APIRoute):
            found.update({(method, route.path): route.endpoint for method in route.methods})
    return found


def test_both_apps_serve_the_same_login_and_logout_handlers(store: Store) -> None:
    for app in (review_app(store), verify_app(store)):
        found = _endpoints(app)
        assert found[("GET", "/login")] is pages.login_page
        assert found[("POST", "/login")] is pages.login
        assert found[("POST", "/logout")] is pages.logout


def test_a_script_logs_in_to_either_app_with_json(store: Store, reviewer_tokens: dict) -> None:
    for app, token, home in (
        (review_app(store), reviewer_tokens["ann"], "/queue"),
        (verify_app(store), next(iter(VERIFY_TOKENS)), "/annotate"),
    ):
        with TestClient(app, base_url="http://127.0.0.1") as client:
            answer = login(client, token)
            assert answer.status_code == 200 and answer.json()["user"] == "ann"
            assert client.get("/login", headers=JSON).json()["next"] == home
            browser = login(client, token, Accept="text/html")
            assert browser.status_code == 303 and browser.headers["location"] == home
