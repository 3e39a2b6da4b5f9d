"""The annotator page: write a dialogue turn by turn and see per-rule feedback live.

Server-rendered with Jinja2 (autoescaped) plus one vanilla script that builds every piece
of annotator or model text with ``textContent``, never ``innerHTML``. Login takes a token
and opens a session cookie (HttpOnly, SameSite=Strict); every POST needs the session's
CSRF token in ``X-CSRF-Token`` (or the form) and a same-origin Origin header. A strict
Content-Security-Policy forbids inline scripts as a second line of defence.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import Depends, FastAPI, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from docket.adherence.verify.history import record_feedback
from docket.adherence.verify.service import FeedbackRequest, VerifyRequest
from docket.adherence.web_auth import (
    SESSION_COOKIE,
    SESSION_LIFETIME,
    Authenticator,
    Caller,
    csrf_ok,
)

HERE = Path(__file__).parent
LOGIN_COOKIE = "docket_verify_login"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
templates = Jinja2Templates(directory=str(HERE / "templates"))


def _harden(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"  # "no-referrer" makes Origin "null"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Cache-Control"] = "no-store"
    return response


def _same_origin(request: Request) -> bool:
    origin = request.headers.get("origin")
    if origin is None and request.headers.get("referer"):
        parts = urlsplit(request.headers["referer"])
        origin = f"{parts.scheme}://{parts.netloc}"
    return origin is None or origin == f"{request.url.scheme}://{request.url.netloc}"


def page_caller(request: Request) -> Caller | None:
    """The annotator behind the session cookie, or None."""
    auth: Authenticator = request.app.state.auth
    return auth.session_caller(request.cookies.get(SESSION_COOKIE))


def require_post(request: Request) -> Caller:
    """A logged-in annotator whose POST carries the CSRF token from the same origin."""
    caller = page_caller(request)
    if caller is None:
        raise HTTPException(401, "not logged in (or the session expired); log in again")
    if not _same_origin(request) or not csrf_ok(caller, request.headers.get("x-csrf-token")):
        raise HTTPException(403, "missing or wrong CSRF token; reload the page")
    return caller


def _set_cookie(response: Response, request: Request, name: str, value: str, max_age: int) -> None:
    # HTTP-only and same-site strict; Secure when the server was started with --secure-cookies.
    response.set_cookie(
        name,
        value,
        httponly=True,
        samesite="strict",
        secure=request.app.state.secure_cookies,
        max_age=max_age,
    )


def _login_page(request: Request, error: str = "", status: int = 200) -> Response:
    nonce = secrets.token_urlsafe(24)
    response = templates.TemplateResponse(
        request, "verify_login.html", {"csrf": nonce, "error": error}, status_code=status
    )
    _set_cookie(response, request, LOGIN_COOKIE, nonce, max_age=3600)
    return _harden(response)


def _register_login(app: FastAPI) -> None:
    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse("/annotate", status_code=303)

    @app.get("/login", response_class=HTMLResponse, include_in_schema=False)
    def login_form(request: Request) -> Response:
        return _login_page(request)

    @app.post("/login", include_in_schema=False)
    def login(request: Request, token: str = Form(""), csrf_token: str = Form("")) -> Response:
        expected = request.cookies.get(LOGIN_COOKIE, "")
        if not (
            _same_origin(request) and expected and secrets.compare_digest(expected, csrf_token)
        ):
            return _login_page(request, "The form expired; please try again.", 403)
        auth: Authenticator = request.app.state.auth
        name = auth.token_owner(token.strip())
        if name is None:
            return _login_page(request, "Unknown or revoked token.", 401)
        cookie, _csrf = auth.start_session(name)
        response = RedirectResponse("/annotate", status_code=303)
        max_age = int(SESSION_LIFETIME.total_seconds())
        _set_cookie(response, request, SESSION_COOKIE, cookie, max_age=max_age)
        response.delete_cookie(LOGIN_COOKIE)
        return response

    @app.post("/logout", include_in_schema=False)
    def logout(request: Request, csrf_token: str = Form("")) -> Response:
        caller = page_caller(request)
        if caller is not None and _same_origin(request) and csrf_ok(caller, csrf_token):
            request.app.state.auth.end_session(request.cookies.get(SESSION_COOKIE))
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(SESSION_COOKIE)
        return response


def _register_annotate(app: FastAPI) -> None:
    from docket.adherence.api import need_store, rule_infos, stats_payload, stream_verdict

    @app.get("/annotate", response_class=HTMLResponse, include_in_schema=False)
    def annotate(request: Request) -> Response:
        caller = page_caller(request)
        if caller is None:
            return RedirectResponse("/login", status_code=303)
        verifier = request.app.state.verifier
        context = {
            "annotator": caller.name,
            "csrf": caller.csrf,
            "rules": rule_infos(verifier),
            "ruleset": verifier.ruleset.name,
            "ruleset_version": verifier.ruleset.version,
        }
        return _harden(templates.TemplateResponse(request, "verify_annotate.html", context))

    @app.post("/annotate/verify/stream", include_in_schema=False)
    async def stream(
        body: VerifyRequest, request: Request, caller: Annotated[Caller, Depends(require_post)]
    ):  # type: ignore[no-untyped-def]
        return stream_verdict(body, request, "page", caller.name)

    @app.post("/annotate/feedback", include_in_schema=False)
    def feedback(
        body: FeedbackRequest, request: Request, caller: Annotated[Caller, Depends(require_post)]
    ) -> dict[str, Any]:
        store = need_store(request)
        record_feedback(
            store, body.result_id, body.action, caller.name, body.reason, body.fixed_text
        )
        return stats_payload(store).model_dump()

    @app.get("/annotate/stats", include_in_schema=False)
    def stats(request: Request) -> dict[str, Any]:
        if page_caller(request) is None:
            raise HTTPException(401, "not logged in")
        return stats_payload(need_store(request)).model_dump()


def register_page(app: FastAPI) -> None:
    """Add the login, the annotator page, its JSON endpoints and static files to ``app``."""
    app.mount("/static/verify", StaticFiles(directory=str(HERE / "static")), name="verify-static")
    _register_login(app)
    _register_annotate(app)
