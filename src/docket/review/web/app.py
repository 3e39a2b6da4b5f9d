"""The review web app: FastAPI, server-rendered Jinja pages, a little vanilla JS.

Every page answers as HTML or JSON (``.json`` suffix or ``Accept: application/json``).
All text from payloads is escaped by Jinja's autoescape; the Content-Security-Policy
also forbids inline scripts, so even a missed escape could not run injected code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from starlette.middleware.trustedhost import TrustedHostMiddleware

from docket.errors import UserError
from docket.review.web.security import NotAuthenticated, Viewer, wants_json
from docket.store.base import Store

HERE = Path(__file__).resolve().parent.parent
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}


def make_templates() -> Environment:
    """The Jinja environment: autoescape on for every template, undefined is an error."""
    return Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def respond(
    request: Request,
    template: str,
    data: dict[str, Any],
    *,
    viewer: Viewer | None = None,
    status: int = 200,
) -> Response:
    """Answer with ``data`` as JSON, or rendered into ``template`` for browsers."""
    if wants_json(request):
        return JSONResponse(data, status_code=status)
    env: Environment = request.app.state.templates
    page = env.get_template(template).render(
        data=data, viewer=viewer, path=request.url.path, query=dict(request.query_params)
    )
    return HTMLResponse(page, status_code=status)


async def _not_authenticated(request: Request, _exc: Exception) -> Response:
    if wants_json(request) or request.method != "GET":
        return JSONResponse({"error": "login required"}, status_code=401)
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/login?next={quote(target, safe='/')}", status_code=303)


async def _user_error(request: Request, exc: Exception) -> Response:
    status = getattr(exc, "status_code", 400)
    data = {"error": getattr(exc, "message", str(exc)), "hint": getattr(exc, "hint", "")}
    viewer = getattr(request.state, "viewer", None)
    return respond(request, "error.html", data, viewer=viewer, status=status)


def create_app(store: Store, *, allowed_hosts: list[str] | None = None) -> FastAPI:
    """Build the review app over an opened store.

    Args:
        store: the database (see :func:`docket.store.base.open_store`).
        allowed_hosts: Host header values to accept (guards against DNS rebinding);
            None accepts any.
    """
    from docket.review.web import actions, pages

    app = FastAPI(title="docket review", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.store = store
    app.state.templates = make_templates()
    if allowed_hosts:
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts)

    @app.middleware("http")
    async def security_headers(request: Request, call_next):  # type: ignore[no-untyped-def]
        response = await call_next(request)
        response.headers.update(SECURITY_HEADERS)
        if not request.url.path.startswith("/static/"):
            response.headers["Cache-Control"] = "no-store"
        return response

    app.add_exception_handler(NotAuthenticated, _not_authenticated)
    app.add_exception_handler(UserError, _user_error)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    app.include_router(pages.router)
    app.include_router(actions.router)
    return app
