"""How every review page answers: JSON for API clients, a rendered template for browsers.

Errors too: a browser gets the login page for a 401 on GET and the error page otherwise.
Pages and the app import this module, so the app can import its routers at the top.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from jinja2 import Environment

from docket.web import Viewer, wants_json


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


def html_error(request: Request, status: int, data: dict[str, Any]) -> Response | None:
    """Browsers: the login page for 401 on GET, the error page otherwise; JSON: None."""
    if wants_json(request):
        return None
    if status == 401 and request.method == "GET":
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"/login?next={quote(target, safe='/')}", status_code=303)
    viewer = getattr(request.state, "viewer", None)
    return respond(request, "error.html", data, viewer=viewer, status=status)
