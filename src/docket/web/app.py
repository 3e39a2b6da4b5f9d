"""The app factory: a FastAPI app wrapped in the kit's whole security policy.

Both apps are built here, so the policy is written once: security headers on every
response, the Host check, credentials before any body is read (:func:`stranger_gate`),
the body-size and JSON-depth limits (before any parsing), the one error shape, and the :class:`~docket.web.kit.WebKit` on
``app.state.kit``, the templates and the one login flow (:mod:`docket.web.pages`). The apps
only add their own routers, templates and static files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from starlette.concurrency import run_in_threadpool

from docket.errors import StoreError
from docket.version import __version__
from docket.web.errors import (
    STORE_DOWN,
    HtmlErrorPage,
    HttpError,
    NotAuthenticated,
    answer,
    install_error_handlers,
    store_unavailable,
)
from docket.web.kit import WebKit
from docket.web.middleware import ASGIApp, BodyLimits, Gate, HostCheck, Scope, SecurityHeaders
from docket.web.pages import login_router

PUBLIC_BODY_PATHS = ("/login",)
# The unread body of a refused stranger is not drained: the server closes the connection.
CLOSE = {"Connection": "close"}
"""Paths that take a body from callers without credentials (the login form)."""


def templates(folder: Path) -> Environment:
    """A Jinja environment: autoescape on for every template, undefined is an error."""
    return Environment(
        loader=FileSystemLoader(folder),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def stranger_gate(kit: WebKit, public: tuple[str, ...] = PUBLIC_BODY_PATHS) -> Gate:
    """The credential check that :class:`BodyLimits` runs before it reads a body.

    A request with a body to any path but ``public`` needs a valid session cookie or
    bearer token first; a stranger gets the app's 401 (or the lockout's 429) and their
    body is never read. Routes still check which kind of credential they accept.
    """

    async def gate(scope: Scope) -> ASGIApp | None:
        if scope["path"] in public:
            return None
        request = Request(scope)
        try:
            found = await run_in_threadpool(kit.viewer, request)
        except HttpError as exc:
            return answer(request, exc.status, exc.message, exc.hint, {**exc.headers, **CLOSE})
        except StoreError as exc:  # the database is down: no one can be checked
            return store_unavailable(request, exc, CLOSE)
        if found is not None:
            return None
        refusal = NotAuthenticated()
        return answer(request, 401, refusal.message, refusal.hint, {**refusal.headers, **CLOSE})

    return gate


def create_web_app(
    kit: WebKit,
    *,
    title: str,
    pages: Path | None,
    home: str = "/",
    login_template: str = "login.html",
    static: dict[str, Path] | None = None,
    html_errors: HtmlErrorPage | None = None,
    api_docs: bool = False,
    health_status: str = "ok",
    **fastapi: Any,
) -> FastAPI:
    """Build a FastAPI app under the kit's policy, with the kit's login flow mounted.

    Args:
        kit: authentication, sessions and settings of the app.
        title: the app's title (OpenAPI).
        pages: the folder of the app's templates (:func:`docket.web.pages.respond`); None
            for an app without pages (no login flow, no path takes a stranger's body).
        home: where a browser goes after logging in (and from ``/login`` when logged in).
        login_template: the template of the login form, rendered with ``data.next``,
            ``data.error`` and ``data.nonce`` (the form's ``csrf_token``).
        static: URL prefix -> folder of static files to mount.
        html_errors: renders an error page for browsers (None: JSON only).
        api_docs: serve the OpenAPI schema at ``/openapi.json`` (the interactive ``/docs``
            page is not served: it loads scripts from a CDN, which the CSP forbids).
        health_status: what ``GET /health`` says while the app is up (Label Studio's ML
            backend protocol expects ``UP``).
        **fastapi: further FastAPI arguments (version, description).
    """
    docs: dict[str, Any] = {"docs_url": None, "redoc_url": None}
    if not api_docs:
        docs["openapi_url"] = None
    app = FastAPI(title=title, **docs, **fastapi)
    app.state.kit = kit
    app.state.store = kit.store
    app.state.home, app.state.login_template = home, login_template
    if pages is not None:
        app.state.templates = templates(pages)
        app.include_router(login_router)
    install_error_handlers(app, html_errors)
    _add_health(app, kit, health_status)
    for prefix, folder in (static or {}).items():
        app.mount(prefix, StaticFiles(directory=folder), name=prefix.strip("/").replace("/", "-"))
    settings = kit.settings
    # add_middleware puts each new one outside the previous ones: headers end up outermost.
    app.add_middleware(
        BodyLimits,
        max_bytes=settings.max_body_bytes,
        max_depth=settings.max_json_depth,
        gate=stranger_gate(kit, PUBLIC_BODY_PATHS if pages is not None else ()),
    )
    app.add_middleware(HostCheck, allowed=settings.allowed_hosts)
    app.add_middleware(SecurityHeaders)
    return app


def _add_health(app: FastAPI, kit: WebKit, status: str) -> None:
    @app.get("/health", tags=["meta"], response_model=None)
    def health() -> dict[str, str] | Response:
        """``ok`` while the store answers (or there is none); 503 while it does not."""
        if kit.store is not None and not kit.store.reachable():
            body = {"status": "unavailable", "error": STORE_DOWN, "hint": "try again later"}
            return JSONResponse(body, status_code=503, headers={"Retry-After": "30"})
        return {"status": status, "version": __version__}
