"""Who is asking, and may they: one :class:`WebKit` per app, shared by its routes.

A request is authenticated by ``Authorization: Bearer <token>`` (scripts) or by the
session cookie (browsers); an app whose callers can only send HTTP Basic auth (Label
Studio's ML-backend connection) also takes the token as a Basic password. Logging in exchanges a token for a session cookie, under
the login nonce, the Origin check and the login rate limits. See :mod:`docket.web.csrf`
for the CSRF policy and :mod:`docket.web.sessions` for expiry and revocation.
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Callable
from dataclasses import dataclass

from fastapi import Request
from fastapi.responses import Response

from docket.store.base import Store
from docket.web import sessions
from docket.web.csrf import check_csrf, check_origin, tokens_match
from docket.web.errors import Forbidden, HttpError, NotAuthenticated
from docket.web.limiter import LoginLimiter
from docket.web.settings import WebSettings
from docket.web.tokens import Principal, TokenBackend, new_secret, sha256

LOGIN_NONCE_SECONDS = 3600


@dataclass(frozen=True)
class Viewer:
    """The authenticated caller of one request (a value, safe to pass around)."""

    name: str
    is_admin: bool
    csrf: str | None  # None for bearer-token requests
    via: str  # "cookie" or "bearer"
    id: int | None = None


def wants_json(request: Request) -> bool:
    """JSON when the path ends in ``.json``, the client asks for JSON over HTML, or it
    sends JSON or a bearer token without asking for HTML (a script: answer JSON to JSON).
    """
    if request.url.path.endswith(".json"):
        return True
    accept = request.headers.get("accept", "")
    if "text/html" in accept:
        return False
    sent_json = "json" in request.headers.get("content-type", "").lower()
    return "application/json" in accept or sent_json or bearer_token(request) is not None


def bearer_token(request: Request) -> str | None:
    """The token of an ``Authorization: Bearer`` header, if any."""
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def basic_password(request: Request) -> str | None:
    """The password of an ``Authorization: Basic`` header, if any (the user name is ignored)."""
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic" or not value.strip():
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    _user, sep, password = decoded.partition(":")
    return password if sep and password else None


def client_address(request: Request) -> str:
    """The peer address the login limits count against."""
    return request.client.host if request.client else "unknown"


def _too_many(wait: int) -> HttpError:
    hint = f"wait {wait} s before the next attempt"
    return HttpError(429, "too many login attempts", hint, {"Retry-After": str(wait)})


def _viewer(principal: Principal, csrf: str | None, via: str) -> Viewer:
    return Viewer(principal.name, principal.is_admin, csrf, via, principal.id)


class WebKit:
    """Authentication, sessions, CSRF and login limits of one app.

    Args:
        app: the app's name (``review`` or ``verify``); it names cookies and sessions.
        store: where sessions live (None: bearer tokens only, no browser login).
        backend: says who owns a token and whether it is still valid.
        settings: the app's limits and cookie policy.
        clock: monotonic seconds for the login limits (tests pass a fake clock).
        basic_auth: also take a token as the password of ``Authorization: Basic`` (for
            callers that cannot send a bearer token); off for the browser apps.
    """

    def __init__(
        self,
        app: str,
        store: Store | None,
        backend: TokenBackend,
        settings: WebSettings,
        clock: Callable[[], float] = time.monotonic,
        *,
        basic_auth: bool = False,
    ) -> None:
        self.app, self.store, self.backend, self.settings = app, store, backend, settings
        self.basic_auth = basic_auth
        self.limiter = LoginLimiter(settings, clock)
        self.session_cookie = f"docket_{app}_session"
        self.login_cookie = f"docket_{app}_login"

    def viewer(
        self, request: Request, *, cookie: bool = True, bearer: bool = True
    ) -> Viewer | None:
        """The caller behind the bearer token (or Basic password) or the session cookie."""
        token = self.request_token(request) if bearer else None
        if token is not None:
            return self._bearer_viewer(request, token)
        value = request.cookies.get(self.session_cookie) if cookie else None
        if not value or self.store is None:
            return None
        with self.store.session() as session:
            live = sessions.find_session(session, self.app, value, self.backend)
            return None if live is None else _viewer(live.principal, live.csrf, "cookie")

    def request_token(self, request: Request) -> str | None:
        """The token a request carries: a bearer token, or (if allowed) a Basic password."""
        found = bearer_token(request)
        if found is None and self.basic_auth:
            found = basic_password(request)
        return found

    def _bearer_viewer(self, request: Request, token: str) -> Viewer | None:
        """The owner of a bearer token; failures count towards the login lockout."""
        client = client_address(request)
        wait = self.limiter.locked_seconds(client, token)
        if wait > 0:
            raise _too_many(wait)
        if self.store is None:
            found = self.backend.owner(None, sha256(token))
        else:
            with self.store.session() as session:
                found = self.backend.owner(session, sha256(token))
        if found is None:
            self.limiter.record(client, token, ok=False)
            return None
        return _viewer(found, None, "bearer")

    def require(self, request: Request, *, cookie: bool = True, bearer: bool = True) -> Viewer:
        """The authenticated caller, or raise :class:`NotAuthenticated` (401)."""
        found = self.viewer(request, cookie=cookie, bearer=bearer)
        if found is None:
            raise NotAuthenticated(bearer=bearer)
        request.state.viewer = found
        return found

    def require_post(
        self, request: Request, submitted: str | None, *, cookie: bool = True, bearer: bool = True
    ) -> Viewer:
        """An authenticated caller whose state-changing request passes the CSRF policy."""
        found = self.require(request, cookie=cookie, bearer=bearer)
        self.check_post(request, found, submitted)
        return found

    @staticmethod
    def check_post(request: Request, found: Viewer, submitted: str | None) -> Viewer:
        """The CSRF policy for ``found``'s state-changing request (call after :meth:`require`).

        Routes whose CSRF token is in the body call :meth:`require` first, then read the
        body, then this: credentials before body.
        """
        if found.via == "cookie":
            check_csrf(request, found.csrf, submitted)
        else:
            check_origin(request)
        return found

    @staticmethod
    def new_login_nonce() -> str:
        """A fresh nonce for a login form (set it with :meth:`set_login_nonce` too)."""
        return new_secret()

    def set_login_nonce(self, response: Response, request: Request, nonce: str) -> None:
        """Set the short-lived login cookie that a login form's nonce must match."""
        self._cookie(response, request, self.login_cookie, nonce, LOGIN_NONCE_SECONDS)

    def login(self, request: Request, token: str, nonce: str | None) -> tuple[Viewer, str]:
        """Check origin, nonce and limits, then exchange a token for a session.

        Returns:
            The new viewer and the session cookie value (set it with :meth:`set_session`).

        Raises:
            Forbidden: another origin or a missing/wrong login nonce (403).
            HttpError: too many attempts (429 with ``Retry-After``) or no store (503).
            NotAuthenticated: unknown, revoked or disabled token (401).
        """
        check_origin(request)
        if not tokens_match(request.cookies.get(self.login_cookie), nonce):
            raise Forbidden("the login form expired", "reload the login page and try again")
        if self.store is None:
            raise HttpError(503, "browser login needs a store", "start the server with --db")
        client, token = client_address(request), token.strip()
        wait = self.limiter.wait_seconds(client, token)
        if wait > 0:
            raise _too_many(wait)
        with self.store.session() as session:
            principal = self.backend.owner(session, sha256(token)) if token else None
            self.limiter.record(client, token, principal is not None)
            if principal is None:
                raise NotAuthenticated("unknown, revoked or disabled token", bearer=False)
            hours = self.settings.session_hours
            cookie, csrf = sessions.start_session(
                session, self.app, principal, sha256(token), hours
            )
        return _viewer(principal, csrf, "cookie"), cookie

    def set_session(self, response: Response, request: Request, cookie: str) -> None:
        """Set the session cookie and drop the login nonce cookie."""
        max_age = int(self.settings.session_hours * 3600)
        self._cookie(response, request, self.session_cookie, cookie, max_age)
        response.delete_cookie(self.login_cookie, path="/")

    def logout(self, request: Request, submitted: str | None) -> None:
        """End the caller's session; needs the session's CSRF token (403 otherwise)."""
        found = self.require(request, bearer=False)
        check_csrf(request, found.csrf, submitted)
        if self.store is not None:
            with self.store.session() as session:
                sessions.end_session(session, request.cookies.get(self.session_cookie, ""))

    def clear_session(self, response: Response) -> None:
        """Remove the session cookie from the browser."""
        response.delete_cookie(self.session_cookie, path="/")

    def secure(self, request: Request) -> bool:
        """The one rule for Secure cookies: HTTPS requests, or the ``secure_cookies`` setting."""
        return self.settings.secure_cookies or request.url.scheme == "https"

    def _cookie(
        self, response: Response, request: Request, name: str, value: str, age: int
    ) -> None:
        # HttpOnly: scripts never read it; SameSite=Strict: other sites never send it.
        response.set_cookie(
            name,
            value,
            max_age=age,
            httponly=True,
            samesite="strict",
            secure=self.secure(request),
            path="/",
        )


def require_admin(viewer: Viewer, what: str) -> None:
    """Refuse non-admins with a 403 that says what needed the role."""
    if not viewer.is_admin:
        raise Forbidden(f"{what} is for admins", "ask an admin")
