"""One error shape for both apps: ``{"error": "...", "hint": "..."}`` with a status.

Browsers asking for HTML get the app's error page instead (when the app has one);
everything else gets this JSON. Unexpected exceptions become a 500 in the same shape
(the traceback goes to the server log, never to the client).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from docket.errors import StoreError, UserError

log = logging.getLogger(__name__)
HtmlErrorPage = Callable[[Request, int, dict[str, Any]], Response | None]
Headers = Mapping[str, str] | None
# The hint when the refusal brings none of its own: every error answer has one.
STATUS_HINTS = {
    400: "fix the value named in the message and send it again",
    401: "log in again, or send Authorization: Bearer <token>",
    403: "this needs another account or role",
    404: "check the address",
    405: "this address does not take that method",
    409: "reload to see the current state",
    413: "send less data per request",
    422: "fix the request body",
    429: "wait, then try again",
    503: "try again later",
}


class HttpError(Exception):
    """A refusal with an HTTP status, a message, a hint and optional headers."""

    def __init__(
        self, status: int, message: str, hint: str = "", headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.hint = status, message, hint
        self.headers = headers or {}


class NotAuthenticated(HttpError):
    """No valid session or token: JSON callers get 401, browsers the login page."""

    def __init__(self, message: str = "login required", bearer: bool = True) -> None:
        hint = "log in again, or send Authorization: Bearer <token>"
        super().__init__(401, message, hint, {"WWW-Authenticate": "Bearer"} if bearer else None)


class Forbidden(HttpError):
    """The caller may not do this (403)."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(403, message, hint)


def error_body(message: str, hint: str = "") -> dict[str, str]:
    """The JSON body of every error answer."""
    return {"error": message, "hint": hint}


def error_response(
    status: int, message: str, hint: str = "", headers: Headers = None
) -> JSONResponse:
    """A JSON error answer in the one shape."""
    return JSONResponse(error_body(message, hint), status_code=status, headers=dict(headers or {}))


def _validation_message(exc: RequestValidationError) -> str:
    first = exc.errors()[0] if exc.errors() else {}
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
    return f"field '{where}': {first.get('msg', 'invalid')}"


def answer(
    request: Request, status: int, message: str, hint: str = "", headers: Headers = None
) -> Response:
    """A refusal in the one shape, or the app's HTML error page for browsers."""
    hint = hint or STATUS_HINTS.get(status, "")
    html_page: HtmlErrorPage | None = getattr(request.app.state, "html_errors", None)
    page = html_page(request, status, error_body(message, hint)) if html_page else None
    if page is not None:
        page.headers.update(headers or {})
        return page
    return error_response(status, message, hint, headers)


STORE_DOWN = "the store is unavailable"


def store_unavailable(request: Request, exc: StoreError, headers: Headers = None) -> Response:
    """503 for a database that failed under a request: no store details go to the client.

    Not the caller's fault, so never a 400; its user, host, port and name stay in the log.
    """
    log.error("%s %s: %s (%s)", request.method, request.url.path, exc.message, exc.hint)
    return answer(
        request, 503, STORE_DOWN, "try again in a minute", {**(headers or {}), "Retry-After": "30"}
    )


def install_error_handlers(app: FastAPI, html_page: HtmlErrorPage | None = None) -> None:
    """Answer every refusal of ``app`` in the one shape (or the HTML page for browsers)."""
    app.state.html_errors = html_page  # read by :func:`answer`, also outside the handlers

    async def on_http_error(request: Request, exc: HttpError) -> Response:
        return answer(request, exc.status, exc.message, exc.hint, exc.headers)

    async def on_starlette(request: Request, exc: StarletteHTTPException) -> Response:
        hint = STATUS_HINTS.get(exc.status_code, "")
        return answer(request, exc.status_code, str(exc.detail), hint, exc.headers)

    async def on_validation(request: Request, exc: RequestValidationError) -> Response:
        return error_response(422, _validation_message(exc), "fix the request body")

    async def on_user_error(request: Request, exc: UserError) -> Response:
        if isinstance(exc, StoreError):
            return store_unavailable(request, exc)
        status = int(getattr(exc, "status_code", 400))
        return answer(request, status, exc.message, exc.hint)

    handlers: dict[type[Exception], Callable[..., Awaitable[Response]]] = {
        HttpError: on_http_error,
        StarletteHTTPException: on_starlette,
        RequestValidationError: on_validation,
        UserError: on_user_error,
    }
    for kind, handler in handlers.items():
        app.add_exception_handler(kind, handler)
