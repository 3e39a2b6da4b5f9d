"""The verification HTTP API (FastAPI) and, mounted on it, the annotator page.

``POST /v1/verify`` returns all rule results; ``POST /v1/verify/stream`` sends each rule's
result as a Server-Sent Event as soon as it is known (``fmt`` results within
milliseconds), then the verdict. Every ``/v1`` route needs ``Authorization: Bearer
<token>``. The OpenAPI schema is at ``/openapi.json``. Authentication, limits, headers
and the error shape are the web kit's (:mod:`docket.web`).

No request crashes the server: timeouts and model failures are needs_review results,
user errors are 4xx JSON, anything else a 500 JSON while the server keeps running.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.security import HTTPBearer

from docket.adherence.verify import Verifier
from docket.adherence.verify.requests import FeedbackRequest, VerifyRequest
from docket.adherence.verify.saved_runs import RunWriter, verify_and_save
from docket.adherence.verify.verdict import Verdict
from docket.adherence.web import page
from docket.adherence.web.handlers import (
    RuleInfo,
    StatsResponse,
    need_store,
    rule_infos,
    save_feedback,
    stats_payload,
    stream_verdict,
    submission_of,
)
from docket.adherence.web.page import PAGES, STATIC
from docket.adherence.web.tokens import APP, VerifyTokens
from docket.store.base import Store
from docket.version import __version__
from docket.web import Viewer, WebKit, WebSettings, create_web_app, kit_of

DEFAULT_MAX_CHARS = 1_000_000
# A submission of 1,000,000 characters is up to ~4 MB of UTF-8, plus JSON quoting.
DEFAULT_SETTINGS = WebSettings(max_body_bytes=8 * 1024 * 1024)

# Only documents the scheme in OpenAPI; the kit checks the token.
bearer = HTTPBearer(
    auto_error=False,
    description="a token given with --token-file or $DOCKET_VERIFY_TOKEN, or made by `docket verify token add`",
)


def require_token(request: Request, _scheme: Annotated[Any, Depends(bearer)]) -> Viewer:
    """The caller behind the bearer token; 401 without a valid one (cookies do not count)."""
    return kit_of(request).require(request, cookie=False)


router = APIRouter()


@router.get("/v1/rules", tags=["verify"], response_model=list[RuleInfo])
def rules(request: Request, caller: Annotated[Viewer, Depends(require_token)]) -> list[RuleInfo]:
    """The rules every submission is checked against."""
    return rule_infos(request.app.state.verifier)


@router.post("/v1/verify", tags=["verify"], response_model=Verdict)
async def verify(
    body: VerifyRequest, request: Request, caller: Annotated[Viewer, Depends(require_token)]
) -> Verdict:
    """Check a submission against every applicable rule; return all results at once."""
    submission = submission_of(body, request.app.state.max_chars)
    writer = RunWriter(request.app.state.store, source="api", annotator=caller.name)
    return await verify_and_save(request.app.state.verifier, submission, writer)


@router.post(
    "/v1/verify/stream",
    tags=["verify"],
    responses={
        200: {
            "description": "`result` events (a RuleResult each), then one `verdict` event",
            "content": {"text/event-stream": {}},
        }
    },
)
async def verify_stream(
    body: VerifyRequest, request: Request, caller: Annotated[Viewer, Depends(require_token)]
):  # type: ignore[no-untyped-def]
    """Stream each rule's result as a Server-Sent Event as soon as it is known."""
    return stream_verdict(body, request, "api", caller.name)


@router.post("/v1/feedback", tags=["feedback"])
def feedback(
    body: FeedbackRequest, request: Request, caller: Annotated[Viewer, Depends(require_token)]
) -> dict[str, Any]:
    """Record an annotator's response to a flag: accepted (and fixed) or dismissed."""
    row = save_feedback(need_store(request), body, caller)
    return {"id": row.id, "result_id": row.result_id, "action": row.action}


@router.get("/v1/stats", tags=["feedback"], response_model=StatsResponse)
def stats(request: Request, caller: Annotated[Viewer, Depends(require_token)]) -> StatsResponse:
    """Accepted-and-fixed rate per rule and tier."""
    return stats_payload(need_store(request))


def create_app(
    verifier: Verifier,
    *,
    store: Store | None = None,
    tokens: dict[str, str] | None = None,
    admins: set[str] | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
    settings: WebSettings | None = None,
) -> FastAPI:
    """Build the API and annotator page around a verifier.

    Args:
        verifier: checks submissions; shared by all requests (its cache too).
        store: where runs, results, feedback, tokens and sessions live (None: no
            persistence, no feedback, no page login).
        tokens: start-up bearer tokens mapped to their user's name.
        admins: user names that may answer flags on anyone's results.
        max_chars: largest submission accepted (characters of text), else 413.
        settings: the web kit's limits and policy (default: :data:`DEFAULT_SETTINGS`).
    """
    kit = WebKit(APP, store, VerifyTokens(tokens, admins), settings or DEFAULT_SETTINGS)
    app = create_web_app(
        kit,
        title="docket verify",
        pages=PAGES,
        home="/annotate",
        login_template="verify_login.html",
        static=STATIC,
        api_docs=True,
        version=__version__,
        description=__doc__,
    )
    app.state.verifier, app.state.max_chars = verifier, max_chars
    app.include_router(router)
    app.include_router(page.router)
    return app
