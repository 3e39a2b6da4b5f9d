"""Who is asking, and may they: sessions, bearer tokens, CSRF and Origin checks.

A request is authenticated by ``Authorization: Bearer <token>`` (scripts) or by the
session cookie (browsers). Cookie-authenticated POSTs must carry the session's CSRF
token (form field ``csrf_token`` or header ``X-CSRF-Token``); every POST whose Origin
(or Referer) names another site is refused. Bearer requests need no CSRF token because
browsers never attach that header on their own.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from urllib.parse import urlsplit

from fastapi import Request

from docket.review.auth import reviewer_for_token, session_for_cookie
from docket.review.errors import ForeignTaskError
from docket.store.base import Store

COOKIE = "docket_review_session"


class NotAuthenticated(Exception):
    """No valid session or token: JSON callers get 401, browsers the login page."""


class CsrfError(ForeignTaskError):
    """A state-changing request without the right CSRF token or from another origin."""


@dataclass(frozen=True)
class Viewer:
    """The authenticated reviewer of one request (a value, safe to pass around)."""

    id: int
    name: str
    is_admin: bool
    csrf: str | None  # None for bearer-token requests
    via: str  # "cookie" or "bearer"


def wants_json(request: Request) -> bool:
    """JSON when the path ends in ``.json`` or the client asks for JSON over HTML."""
    if request.url.path.endswith(".json"):
        return True
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


def _bearer(request: Request) -> str | None:
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def current_viewer(request: Request) -> Viewer | None:
    """The viewer behind the request's bearer token or session cookie, if valid."""
    store: Store = request.app.state.store
    token, cookie = _bearer(request), request.cookies.get(COOKIE)
    with store.session() as session:
        if token is not None:
            reviewer = reviewer_for_token(session, token)
            if reviewer is None:
                return None
            return Viewer(reviewer.id, reviewer.name, reviewer.is_admin, None, "bearer")
        found = session_for_cookie(session, cookie) if cookie else None
        if found is None:
            return None
        reviewer, web = found
        return Viewer(reviewer.id, reviewer.name, reviewer.is_admin, web.csrf_token, "cookie")


def require_viewer(request: Request) -> Viewer:
    """The authenticated viewer, or raise :class:`NotAuthenticated`."""
    viewer = current_viewer(request)
    if viewer is None:
        raise NotAuthenticated()
    return viewer


def require_admin(viewer: Viewer, what: str) -> None:
    """Refuse non-admins with a 403 that says what needed the role."""
    if not viewer.is_admin:
        raise ForeignTaskError(f"{what} is for admins", hint="ask an admin reviewer")


def check_origin(request: Request) -> None:
    """Refuse a POST whose Origin or Referer is another site (or the opaque ``null``)."""
    own = f"{request.url.scheme}://{request.url.netloc}"
    origin = request.headers.get("origin")
    if origin is None and request.headers.get("referer"):
        parts = urlsplit(request.headers["referer"])
        origin = f"{parts.scheme}://{parts.netloc}"
    if origin is not None and origin != own:
        raise CsrfError(f"request from another origin ({origin}) refused")


def check_csrf(request: Request, viewer: Viewer, submitted: str | None) -> None:
    """Check Origin, and the CSRF token for cookie sessions."""
    check_origin(request)
    if viewer.via == "bearer":
        return
    token = submitted or request.headers.get("x-csrf-token") or ""
    if viewer.csrf is None or not hmac.compare_digest(token.encode(), viewer.csrf.encode()):
        raise CsrfError(
            "missing or wrong CSRF token", hint="reload the page and submit the form again"
        )
