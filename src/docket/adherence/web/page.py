"""The annotator page: write a dialogue turn by turn and see per-rule feedback live.

Server-rendered with Jinja2 (autoescaped) plus one vanilla script that builds every piece
of annotator or model text with ``textContent``, never ``innerHTML``. Login, sessions,
CSRF (``X-CSRF-Token`` on every POST), headers and limits are the web kit's
(:mod:`docket.web`); the page only adds its routes and templates.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from docket.adherence.verify.requests import FeedbackRequest, VerifyRequest
from docket.adherence.web.handlers import (
    need_store,
    rule_infos,
    save_feedback,
    stats_payload,
    stream_verdict,
)
from docket.web import NotAuthenticated, Viewer, kit_of, respond
from docket.web.body import read_model

HERE = Path(__file__).parent
PAGES = HERE / "templates"
SCENARIO = "scenario"
router = APIRouter()


def require_post(request: Request) -> Viewer:
    """A logged-in annotator whose POST carries the CSRF token from the same origin."""
    return kit_of(request).require_post(request, None, bearer=False)


def field_names(verifier: Any) -> list[str]:
    """The record fields the page asks for: ``scenario`` and every field a rule reads."""
    named = {r.scope.field for r in verifier.ruleset.rules if r.scope.kind == "field"}
    return sorted({SCENARIO, *(n for n in named if n)})


@router.get("/", include_in_schema=False)
def root() -> RedirectResponse:
    """Go to the annotator page."""
    return RedirectResponse("/annotate", status_code=303)


@router.get("/annotate", include_in_schema=False)
def annotate(request: Request) -> Response:
    """The annotator page (the login page without a session)."""
    viewer = kit_of(request).viewer(request, bearer=False)
    if viewer is None:
        return RedirectResponse("/login", status_code=303)
    verifier = request.app.state.verifier
    data = {
        "annotator": viewer.name,
        "csrf": viewer.csrf,
        "rules": [r.model_dump() for r in rule_infos(verifier)],
        "fields": field_names(verifier),
        "ruleset": verifier.ruleset.name,
        "ruleset_version": verifier.ruleset.version,
    }
    return respond(request, "verify_annotate.html", data, viewer=viewer)


# Both take the Request, not a body parameter: the session is checked before the body
# is parsed (FastAPI parses body parameters before any dependency runs).
@router.post("/annotate/verify/stream", include_in_schema=False)
async def stream(request: Request):  # type: ignore[no-untyped-def]
    """Verify the page's record, streaming each rule's result."""
    viewer = await run_in_threadpool(require_post, request)
    body = await read_model(request, VerifyRequest)
    return stream_verdict(body, request, "page", viewer.name)


@router.post("/annotate/feedback", include_in_schema=False)
async def feedback(request: Request) -> dict[str, Any]:
    """Record the annotator's answer to a flag; return the updated statistics."""
    viewer = await run_in_threadpool(require_post, request)
    body = await read_model(request, FeedbackRequest)
    store = need_store(request)
    await run_in_threadpool(save_feedback, store, body, viewer)
    return (await run_in_threadpool(stats_payload, store)).model_dump()


@router.get("/annotate/stats", include_in_schema=False)
def stats(request: Request) -> dict[str, Any]:
    """Feedback statistics for the page's side panel."""
    if kit_of(request).viewer(request, bearer=False) is None:
        raise NotAuthenticated(bearer=False)
    return stats_payload(need_store(request)).model_dump()


STATIC = {"/static/verify": HERE / "static"}
"""The page's static files, mounted by the app factory."""
