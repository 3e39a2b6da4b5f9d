"""Cross-site request forgery: the Origin check, session CSRF tokens, the login nonce.

One scheme, the synchronizer token: each session has a random CSRF token, kept in the
session row, which every state-changing request made with the session cookie must send
(form field ``csrf_token`` or header ``X-CSRF-Token``). Before login there is no
session, so the login form carries a random nonce that must match a short-lived,
HttpOnly, SameSite=Strict cookie set with the form (login CSRF). Every POST whose Origin
(or Referer) names another site, or the opaque ``null``, is refused. Bearer-token
requests need no CSRF token: browsers never add that header on their own.
"""

from __future__ import annotations

import hmac
from urllib.parse import urlsplit

from fastapi import Request

from docket.web.errors import Forbidden


def same_origin(request: Request) -> bool:
    """False when the Origin (or Referer) header names another site than this one."""
    origin = request.headers.get("origin")
    if origin is None and request.headers.get("referer"):
        parts = urlsplit(request.headers["referer"])
        origin = f"{parts.scheme}://{parts.netloc}"
    return origin is None or origin == f"{request.url.scheme}://{request.url.netloc}"


def check_origin(request: Request) -> None:
    """Refuse (403) a request from another origin."""
    if not same_origin(request):
        origin = request.headers.get("origin") or request.headers.get("referer")
        raise Forbidden(
            f"request from another origin ({origin}) refused", "use the app's own pages"
        )


def tokens_match(expected: str | None, submitted: str | None) -> bool:
    """Constant-time comparison of two secrets; False when either is missing."""
    if not expected or not submitted:
        return False
    return hmac.compare_digest(expected.encode(), submitted.encode())


def check_csrf(request: Request, expected: str | None, submitted: str | None) -> None:
    """Refuse (403) a cookie-session request without the session's CSRF token."""
    check_origin(request)
    token = submitted or request.headers.get("x-csrf-token")
    if not tokens_match(expected, token):
        raise Forbidden("missing or wrong CSRF token", "reload the page and submit the form again")
