"""Fixtures for the web kit tests: both apps over one store, with small limits."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from docket.adherence.verify import Verifier
from docket.adherence.web.api import create_app as create_verify_app
from docket.llm.fake import register_fake
from docket.review.auth import add_reviewer
from docket.review.web import create_app as create_review_app
from docket.store.base import Store
from docket.web import WebSettings
from tests.adherence.verify_helpers import ruleset

VERIFY_TOKENS = {"ann-token-0123456789abcdef": "ann", "bob-token-0123456789abcdef": "bob"}
ADMIN_TOKEN = "root-token-0123456789abcdef"
JSON = {"Accept": "application/json"}


@pytest.fixture
def reviewer_tokens(store: Store) -> dict[str, str]:
    """Reviewers ann and bob, and root (admin), by name -> login token."""
    with store.session() as session:
        return {
            name: add_reviewer(session, name, admin=name == "root")[1]
            for name in ("ann", "bob", "root")
        }


def verifier() -> Verifier:
    """A verifier over the test rule set with always-passing fake models."""
    return Verifier(
        ruleset(),
        sim_model=register_fake("web-sim", lambda r: "FAIL: mentions a rival"),
        sub_model=register_fake("web-sub", lambda r: "REASONING: fine.\nVERDICT: PASS"),
    )


def review_app(store: Store, **settings: Any):  # type: ignore[no-untyped-def]
    """The review app with the given web settings."""
    return create_review_app(store, WebSettings(**settings))


def verify_app(store: Store | None, **settings: Any):  # type: ignore[no-untyped-def]
    """The verify app (ann, bob; root is admin) with the given web settings."""
    tokens = {**VERIFY_TOKENS, ADMIN_TOKEN: "root"}
    base = WebSettings(max_body_bytes=8 * 1024 * 1024)
    return create_verify_app(
        verifier(), store=store, tokens=tokens, admins={"root"}, settings=base.with_(**settings)
    )


def nonce(client: httpx.Client | Any) -> str:
    """Open a login form; the client keeps the nonce cookie; return the form's nonce."""
    page = client.get("/login", headers=JSON)
    if page.headers["content-type"].startswith("application/json"):
        return page.json()["nonce"]
    marker = 'name="csrf_token" value="'
    return page.text.split(marker, 1)[1].split('"', 1)[0]


def login(client: httpx.Client | Any, token: str, **headers: str):  # type: ignore[no-untyped-def]
    """POST the login form with a fresh nonce; return the response (redirects not followed)."""
    data = {"token": token, "csrf_token": nonce(client)}
    return client.post("/login", data=data, headers={**JSON, **headers}, follow_redirects=False)
