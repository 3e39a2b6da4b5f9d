"""One rule for the Secure cookie flag, and the cookie attributes of both apps."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from docket.store.base import Store
from tests.web.conftest import JSON, VERIFY_TOKENS, login, review_app, verify_app


def _set_cookie(response, name: str) -> str:  # type: ignore[no-untyped-def]
    return next(v for k, v in response.headers.multi_items() if k == "set-cookie" and name in v)


@pytest.mark.parametrize(
    ("base_url", "flag", "secure"),
    [
        ("http://testserver", False, False),
        ("http://testserver", True, True),
        ("https://testserver", False, True),
    ],
)
@pytest.mark.parametrize("which", ["review", "verify"])
def test_secure_when_https_or_asked(
    store: Store, reviewer_tokens: dict, which: str, base_url: str, flag: bool, secure: bool
) -> None:
    app = (review_app if which == "review" else verify_app)(store, secure_cookies=flag)
    token = reviewer_tokens["ann"] if which == "review" else next(iter(VERIFY_TOKENS))
    with TestClient(app, base_url=base_url) as client:
        nonce_cookie = _set_cookie(client.get("/login", headers=JSON), "_login=")
        assert ("Secure" in nonce_cookie) is secure
        if flag:  # a plain-HTTP client never sends a Secure cookie back: the proxy case
            return
        response = login(client, token)
        assert response.status_code in (200, 303), response.text
        cookie = _set_cookie(response, "_session=")
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
        assert ("Secure" in cookie) is secure
