"""How a page of either app answers, and the one login flow both apps mount.

Every page is a template rendered with ``data`` (and the viewer, the path and the query)
for browsers, and the same ``data`` as JSON for scripts (:func:`~docket.web.kit.wants_json`).
The app factory keeps the app's templates, its home page and its login template on
``app.state``; the routes here read them from the request, so one module-level
:data:`login_router` serves both apps.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from jinja2 import Environment
from starlette.concurrency import run_in_threadpool

from docket.web.body import read_fields
from docket.web.errors import HttpError
from docket.web.kit import Viewer, WebKit, wants_json

login_router = APIRouter()


def kit_of(request: Request) -> WebKit:
    """The web kit of the app serving ``request``."""
    return request.app.state.kit


def respond(
    request: Request,
    template: str,
    data: dict[str, Any],
    *,
    viewer: Viewer | None = None,
    status: int = 200,
) -> Response:
    """Answer with ``data`` as JSON, or rendered into the app's ``template`` for browsers."""
    if wants_json(request):
        return JSONResponse(data, status_code=status)
    env: Environment = request.app.state.templates
    page = env.get_template(template).render(
        data=data, viewer=viewer, path=request.url.path, query=dict(request.query_params)
    )
    return HTMLResponse(page, status_code=status)


def safe_next(target: str, home: str) -> str:
    """``target`` when it is a path on this site, else ``home``."""
    # Only local paths: "//evil.example" or "https://..." would leave the site.
    ok = target.startswith("/") and not target.startswith("//") and "\\" not in target
    return target if ok else home


def login_form(
    request: Request, error: str = "", status: int = 200, target: str | None = None
) -> Response:
    """The login form with a fresh login nonce (its cookie is set on the answer)."""
    kit, nonce, home = kit_of(request), WebKit.new_login_nonce(), request.app.state.home
    target = safe_next(target or request.query_params.get("next", home), home)
    data = {"next": target, "error": error, "nonce": nonce}
    response = respond(request, request.app.state.login_template, data, status=status)
    kit.set_login_nonce(response, request, nonce)
    return response


def _text(value: Any) -> str:
    return "" if value is None else str(value)


@login_router.get("/login", include_in_schema=False)
def login_page(request: Request) -> Response:
    """The login form: paste the token an admin gave you."""
    if kit_of(request).viewer(request) is not None and not wants_json(request):
        return RedirectResponse(request.app.state.home, status_code=303)
    return login_form(request)


@login_router.post("/login", include_in_schema=False)
async def login(request: Request) -> Response:
    """Exchange a login token for a session cookie (see :meth:`WebKit.login`)."""
    body = await read_fields(request)
    target = safe_next(_text(body.get("next")), request.app.state.home)
    token, nonce = _text(body.get("token")), _text(body.get("csrf_token")) or None
    kit = kit_of(request)
    try:
        viewer, cookie = await run_in_threadpool(kit.login, request, token, nonce)
    except HttpError as exc:
        if wants_json(request):
            raise
        page = login_form(request, exc.message, exc.status, target)
        page.headers.update(exc.headers)
        return page
    response: Response = (
        JSONResponse({"user": viewer.name, "csrf_token": viewer.csrf})
        if wants_json(request)
        else RedirectResponse(target, status_code=303)
    )
    kit.set_session(response, request, cookie)
    return response


@login_router.post("/logout", include_in_schema=False)
async def logout(request: Request) -> Response:
    """End the browser session (needs the session's CSRF token)."""
    kit = kit_of(request)
    await run_in_threadpool(kit.require, request, bearer=False)
    body = await read_fields(request)
    await run_in_threadpool(kit.logout, request, _text(body.get("csrf_token")) or None)
    response = RedirectResponse("/login", status_code=303)
    kit.clear_session(response)
    return response
