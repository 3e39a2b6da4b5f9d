"""The review web app: routers and templates over the web kit (:mod:`docket.web`).

Every page answers as HTML or JSON (``.json`` suffix or ``Accept: application/json``).
All text from payloads is escaped by Jinja's autoescape; the kit's Content-Security-Policy
also forbids inline scripts, so even a missed escape could not run injected code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from jinja2 import Environment

from docket.review.auth import APP, ReviewerTokens
from docket.review.facets import backfill
from docket.store.base import Store
from docket.web import Viewer, WebKit, WebSettings, create_web_app, templates, wants_json

HERE = Path(__file__).resolve().parent.parent


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


def _html_error(request: Request, status: int, data: dict[str, Any]) -> Response | None:
    """Browsers: the login page for 401 on GET, the error page otherwise; JSON: None."""
    if wants_json(request):
        return None
    if status == 401 and request.method == "GET":
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"/login?next={quote(target, safe='/')}", status_code=303)
    viewer = getattr(request.state, "viewer", None)
    return respond(request, "error.html", data, viewer=viewer, status=status)


def create_app(store: Store, settings: WebSettings | None = None) -> FastAPI:
    """Build the review app over an opened store.

    Args:
        store: the database (see :func:`docket.store.base.open_store`).
        settings: the web kit's limits and policy (default: :class:`WebSettings`).
    """
    from docket.review.web import actions, pages

    with store.session() as session:
        backfill(session)  # facets of tasks enqueued before the queue had filters
    kit = WebKit(APP, store, ReviewerTokens(), settings or WebSettings())
    app = create_web_app(
        kit, title="docket review", static={"/static": HERE / "static"}, html_errors=_html_error
    )
    app.state.templates = templates(HERE / "templates")
    app.include_router(pages.router)
    app.include_router(actions.router)
    return app
