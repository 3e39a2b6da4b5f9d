"""The annotator page: write a dialogue turn by turn and see per-rule feedback live.

Server-rendered with Jinja2 (autoescaped) plus one vanilla script that builds every piece
of annotator or model text with ``textContent``, never ``innerHTML``. Login, sessions,
CSRF (``X-CSRF-Token`` on every POST), headers and limits are the web kit's
(:mod:`docket.web`); the page only adds its routes and templates.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from docket.adherence.verify.requests import FeedbackRequest, VerifyRequest
from docket.adherence.web.handlers import (
    need_store,
    rule_infos,
    save_feedback,
    stats_payload,
    stream_verdict,
)
from docket.web import HttpError, NotAuthenticated, Viewer, WebKit, templates
from docket.web.body import read_model

HERE = Path(__file__).parent
SCENARIO = "scenario"
pages = templates(HERE / "templates")


def _kit(request: Request) -> WebKit:
    return request.app.state.kit


def require_post(request: Request) -> Viewer:
    """A logged-in annotator whose POST carries the CSRF token from the same origin."""
    return _kit(request).require_post(request, None, bearer=False)


def _render(template: str, context: dict[str, Any], status: int = 200) -> HTMLResponse:
    return HTMLResponse(pages.get_template(template).render(**context), status_code=status)


def _login_page(request: Request, error: str = "", status: int = 200) -> Response:
    kit, nonce = _kit(request), WebKit.new_login_nonce()
    response = _render("verify_login.html", {"csrf": nonce, "error": error}, status)
    kit.set_login_nonce(response, request, nonce)
    return response


def field_names(verifier: Any) -> list[str]:
    """The record fields the page asks for: ``scenario`` and every field a rule reads."""
    named = {r.scope.field for r in verifier.ruleset.rules if r.scope.kind == "field"}
    return sorted({SCENARIO, *(n for n in named if n)})


def _register_login(app: FastAPI) -> None:
    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse("/annotate", status_code=303)

    @app.get("/login", response_class=HTMLResponse, include_in_schema=False)
    def login_form(request: Request) -> Response:
        return _login_page(request)

    @app.post("/login", include_in_schema=False)
    def login(request: Request, token: str = Form(""), csrf_token: str = Form("")) -> Response:
        kit = _kit(request)
        try:
            _viewer, cookie = kit.login(request, token, csrf_token)
        except HttpError as exc:
            page = _login_page(request, exc.message, exc.status)
            page.headers.update(exc.headers)
            return page
        response = RedirectResponse("/annotate", status_code=303)
        kit.set_session(response, request, cookie)
        return response

    @app.post("/logout", include_in_schema=False)
    def logout(request: Request, csrf_token: str = Form("")) -> Response:
        kit = _kit(request)
        kit.logout(request, csrf_token)
        response = RedirectResponse("/login", status_code=303)
        kit.clear_session(response)
        return response


def _register_annotate(app: FastAPI) -> None:
    @app.get("/annotate", response_class=HTMLResponse, include_in_schema=False)
    def annotate(request: Request) -> Response:
        viewer = _kit(request).viewer(request, bearer=False)
        if viewer is None:
            return RedirectResponse("/login", status_code=303)
        verifier = request.app.state.verifier
        context = {
            "annotator": viewer.name,
            "csrf": viewer.csrf,
            "rules": rule_infos(verifier),
            "fields": field_names(verifier),
            "ruleset": verifier.ruleset.name,
            "ruleset_version": verifier.ruleset.version,
        }
        return _render("verify_annotate.html", context)

    # Both take the Request, not a body parameter: the session is checked before the body
    # is parsed (FastAPI parses body parameters before any dependency runs).
    @app.post("/annotate/verify/stream", include_in_schema=False)
    async def stream(request: Request):  # type: ignore[no-untyped-def]
        viewer = await run_in_threadpool(require_post, request)
        body = await read_model(request, VerifyRequest)
        return stream_verdict(body, request, "page", viewer.name)

    @app.post("/annotate/feedback", include_in_schema=False)
    async def feedback(request: Request) -> dict[str, Any]:
        viewer = await run_in_threadpool(require_post, request)
        body = await read_model(request, FeedbackRequest)
        store = need_store(request)
        await run_in_threadpool(save_feedback, store, body, viewer)
        return (await run_in_threadpool(stats_payload, store)).model_dump()

    @app.get("/annotate/stats", include_in_schema=False)
    def stats(request: Request) -> dict[str, Any]:
        if _kit(request).viewer(request, bearer=False) is None:
            raise NotAuthenticated(bearer=False)
        return stats_payload(need_store(request)).model_dump()


STATIC = {"/static/verify": HERE / "static"}


def register_page(app: FastAPI) -> None:
    """Add the login, the annotator page and its JSON endpoints to ``app``.

    Its static files (:data:`STATIC`) are mounted by the app factory.
    """
    _register_login(app)
    _register_annotate(app)
