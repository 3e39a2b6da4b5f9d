"""How a review error answers a browser: the login page for a 401 on GET, else the error page.

Pages answer through the kit's :func:`docket.web.respond` (JSON for scripts, a template
for browsers).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import Request
from fastapi.responses import RedirectResponse, Response

from docket.web import respond, wants_json


def html_error(request: Request, status: int, data: dict[str, Any]) -> Response | None:
    """Browsers: the login page for 401 on GET, the error page otherwise; JSON: None."""
    if wants_json(request):
        return None
    if status == 401 and request.method == "GET":
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"/login?next={quote(target, safe='/')}", status_code=303)
    viewer = getattr(request.state, "viewer", None)
    return respond(request, "error.html", data, viewer=viewer, status=status)
