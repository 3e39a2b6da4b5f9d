"""The one web kit under both web apps (review and verify).

Tokens and password-less login, sessions with expiry, purge and revocation, CSRF
(synchronizer token + Origin check + login nonce), the Host check, security headers on
every response, cookies, body and JSON limits, login rate limits and lockout, one JSON
error shape, the app factory, the page helper and the login flow. See docs/web.md.
"""

from docket.web.app import create_web_app, templates
from docket.web.errors import Forbidden, HttpError, NotAuthenticated, error_response
from docket.web.kit import Viewer, WebKit, require_admin, wants_json
from docket.web.pages import kit_of, login_form, respond
from docket.web.settings import WebSettings, allowed_hosts_for
from docket.web.tokens import Principal, TokenBackend, new_token, sha256

__all__ = [
    "Forbidden",
    "HttpError",
    "NotAuthenticated",
    "Principal",
    "TokenBackend",
    "Viewer",
    "WebKit",
    "WebSettings",
    "allowed_hosts_for",
    "create_web_app",
    "error_response",
    "kit_of",
    "login_form",
    "new_token",
    "require_admin",
    "respond",
    "sha256",
    "templates",
    "wants_json",
]
