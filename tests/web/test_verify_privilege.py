"""Least privilege in the verify app, and revocation ending live sessions (real HTTP)."""

from __future__ import annotations

import httpx
import pytest

from docket.adherence.web.tokens import add_token, revoke_tokens
from docket.store.base import Store
from tests.browser_support import serve
from tests.web.conftest import ADMIN_TOKEN, VERIFY_TOKENS, login, verify_app

ANN, BOB = list(VERIFY_TOKENS)
BODY = {
    "record": {"id": "d1", "turns": [{"role": "user", "text": "I need a ticket to Leeds"}]},
    "turn": {"role": "assistant", "text": "Happy to help, see www.example.com for times."},
}


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def url(store: Store):  # type: ignore[no-untyped-def]
    with serve(verify_app(store)) as base:
        yield base


def _flag_of(url: str, token: str) -> str:
    verdict = httpx.post(url + "/v1/verify", json=BODY, headers=_bearer(token), timeout=20)
    return next(r["id"] for r in verdict.json()["results"] if r["rule_id"] == "F2")


def test_feedback_only_on_ones_own_results_unless_admin(url: str) -> None:
    flag = _flag_of(url, ANN)
    answer = {"result_id": flag, "action": "dismissed", "reason": "the URL is the brand"}
    foreign = httpx.post(url + "/v1/feedback", json=answer, headers=_bearer(BOB))
    assert foreign.status_code == 403 and "another user" in foreign.json()["error"]
    assert httpx.post(url + "/v1/feedback", json=answer, headers=_bearer(ANN)).status_code == 200
    admin = httpx.post(url + "/v1/feedback", json=answer, headers=_bearer(ADMIN_TOKEN))
    assert admin.status_code == 200


def test_the_page_applies_the_same_ownership_rule(url: str) -> None:
    flag = _flag_of(url, ANN)
    with httpx.Client(base_url=url) as bob:
        assert login(bob, BOB, Accept="text/html").status_code == 303  # a browser
        csrf = bob.get("/annotate").text.split('name="csrf-token" content="')[1].split('"')[0]
        answer = {"result_id": flag, "action": "accepted"}
        refused = bob.post("/annotate/feedback", json=answer, headers={"X-CSRF-Token": csrf})
        assert refused.status_code == 403


def test_logout_needs_the_csrf_token(url: str) -> None:
    with httpx.Client(base_url=url) as client:
        assert login(client, ANN, Accept="text/html").status_code == 303
        page = client.get("/annotate")
        csrf = page.text.split('name="csrf_token" value="')[1].split('"')[0]
        forged = client.post("/logout", data={"csrf_token": "forged"}, follow_redirects=False)
        assert forged.status_code == 403
        assert client.get("/annotate/stats").status_code == 200  # still logged in
        done = client.post("/logout", data={"csrf_token": csrf}, follow_redirects=False)
        assert done.status_code == 303 and done.headers["location"] == "/login"
        assert client.get("/annotate/stats").status_code == 401


def test_revoking_a_token_ends_its_live_sessions(url: str, store: Store) -> None:
    token = add_token(store, "carol")
    with httpx.Client(base_url=url) as client:
        assert login(client, token, Accept="text/html").status_code == 303
        assert client.get("/annotate/stats").status_code == 200
        assert revoke_tokens(store, "carol") == 1
        assert client.get("/annotate/stats").status_code == 401
        again = client.get("/annotate", follow_redirects=False)
        assert again.status_code == 303 and again.headers["location"] == "/login"
