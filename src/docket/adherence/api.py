"""The verification HTTP API (FastAPI) and, mounted on it, the annotator page.

``POST /v1/verify`` returns all rule results; ``POST /v1/verify/stream`` sends each rule's
result as a Server-Sent Event as soon as it is known (``fmt`` results within
milliseconds), then the verdict. Every ``/v1`` route needs ``Authorization: Bearer
<token>``. The OpenAPI schema is at ``/openapi.json``, interactive docs at ``/docs``.

No request crashes the server: timeouts and model failures are needs_review results,
user errors are 4xx JSON, anything else a 500 JSON while the server keeps running.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel
from sse_starlette.sse import EventSourceResponse

from docket.adherence.verify.history import RateRow, feedback_stats, record_feedback
from docket.adherence.verify.service import (
    FeedbackRequest,
    RunWriter,
    VerifyRequest,
    sse_events,
    verify_and_save,
)
from docket.adherence.verify.verdict import Verdict
from docket.adherence.verify.verifier import Submission, Verifier
from docket.adherence.web_auth import Authenticator, Caller
from docket.errors import InputError, UserError
from docket.store.base import Store
from docket.version import __version__

log = logging.getLogger(__name__)
DEFAULT_MAX_CHARS = 1_000_000

bearer = HTTPBearer(
    auto_error=False, description="a token given with --token or made by `docket verify token add`"
)


def require_token(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
) -> Caller:
    """The caller behind the bearer token; 401 without a valid one."""
    auth: Authenticator = request.app.state.auth
    name = auth.token_owner(credentials.credentials) if credentials else None
    if name is None:
        raise HTTPException(
            401, "missing or invalid bearer token", headers={"WWW-Authenticate": "Bearer"}
        )
    return Caller(name)


class RuleInfo(BaseModel):
    """A rule as the API lists it."""

    id: str
    tier: str
    scope: str
    text: str
    version: str


class StatsResponse(BaseModel):
    """Accepted-and-fixed counts per rule and per tier."""

    by_rule: list[dict[str, Any]]
    by_tier: list[dict[str, Any]]


def stats_payload(store: Store) -> StatsResponse:
    """Feedback statistics with the accepted-and-fixed rate included."""
    by_rule, by_tier = feedback_stats(store)

    def dump(row: RateRow) -> dict[str, Any]:
        return {**row.model_dump(), "responses": row.responses, "accepted_rate": row.accepted_rate}

    return StatsResponse(by_rule=[dump(r) for r in by_rule], by_tier=[dump(r) for r in by_tier])


def submission_of(request: VerifyRequest, max_chars: int) -> Submission:
    """Validate size and turn index; 413 / 422 on bad input."""
    if request.size() > max_chars:
        raise HTTPException(413, f"the submission has more than {max_chars} characters of text")
    try:
        return request.submission()
    except InputError as exc:
        raise HTTPException(422, exc.one_line()) from exc


def need_store(request: Request) -> Store:
    """The app's store; 503 when the server runs without one."""
    store = request.app.state.store
    if store is None:
        raise HTTPException(503, "this server runs without a store", headers={"Retry-After": "0"})
    return store


def stream_verdict(
    body: VerifyRequest, request: Request, source: str, annotator: str
) -> EventSourceResponse:
    """Verify ``body``, sending each rule's result as a Server-Sent Event; save the run.

    Args:
        body: the submission to verify (413 / 422 on bad input, see :func:`submission_of`).
        request: the HTTP request; its app holds the verifier, store and size limit.
        source: where the run came from, as saved (``api`` or ``page``).
        annotator: the caller's name, as saved.
    """
    submission = submission_of(body, request.app.state.max_chars)
    writer = RunWriter(request.app.state.store, source=source, annotator=annotator)
    return EventSourceResponse(sse_events(request.app.state.verifier, submission, writer), ping=15)


def _register_v1(app: FastAPI) -> None:
    @app.get("/health", tags=["meta"])
    def health() -> dict[str, str]:
        return {"status": "ok", "version": __version__}

    @app.get("/v1/rules", tags=["verify"], response_model=list[RuleInfo])
    def rules(
        request: Request, caller: Annotated[Caller, Depends(require_token)]
    ) -> list[RuleInfo]:
        return rule_infos(request.app.state.verifier)

    @app.post("/v1/verify", tags=["verify"], response_model=Verdict)
    async def verify(
        body: VerifyRequest, request: Request, caller: Annotated[Caller, Depends(require_token)]
    ) -> Verdict:
        """Check a submission against every applicable rule; return all results at once."""
        submission = submission_of(body, request.app.state.max_chars)
        writer = RunWriter(request.app.state.store, source="api", annotator=caller.name)
        return await verify_and_save(request.app.state.verifier, submission, writer)

    @app.post(
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
        body: VerifyRequest, request: Request, caller: Annotated[Caller, Depends(require_token)]
    ):  # type: ignore[no-untyped-def]
        """Stream each rule's result as a Server-Sent Event as soon as it is known."""
        return stream_verdict(body, request, "api", caller.name)

    @app.post("/v1/feedback", tags=["feedback"])
    def feedback(
        body: FeedbackRequest, request: Request, caller: Annotated[Caller, Depends(require_token)]
    ) -> dict[str, Any]:
        """Record an annotator's response to a flag: accepted (and fixed) or dismissed."""
        store = need_store(request)
        row = record_feedback(
            store, body.result_id, body.action, caller.name, body.reason, body.fixed_text
        )
        return {"id": row.id, "result_id": row.result_id, "action": row.action}

    @app.get("/v1/stats", tags=["feedback"], response_model=StatsResponse)
    def stats(request: Request, caller: Annotated[Caller, Depends(require_token)]) -> StatsResponse:
        """Accepted-and-fixed rate per rule and tier."""
        return stats_payload(need_store(request))


def rule_infos(verifier: Verifier) -> list[RuleInfo]:
    """The verifier's rules for listing."""
    return [
        RuleInfo(
            id=r.id, tier=r.tier, scope=r.scope.describe(), text=r.text, version=str(r.version)
        )
        for r in verifier.ruleset.rules
    ]


def _register_errors(app: FastAPI) -> None:
    @app.exception_handler(UserError)
    async def user_error(request: Request, exc: UserError) -> JSONResponse:
        return JSONResponse({"detail": exc.one_line()}, status_code=400)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error on %s", request.url.path)
        return JSONResponse({"detail": f"internal error: {type(exc).__name__}"}, status_code=500)


def create_app(
    verifier: Verifier,
    *,
    store: Store | None = None,
    tokens: dict[str, str] | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
    secure_cookies: bool = False,
) -> FastAPI:
    """Build the API and annotator page around a verifier.

    Args:
        verifier: checks submissions; shared by all requests (its cache too).
        store: where runs, results, feedback, tokens and sessions live (None: no
            persistence, no feedback, no page login).
        tokens: start-up bearer tokens mapped to their user's name.
        max_chars: largest submission accepted (characters of text), else 413.
        secure_cookies: mark the session cookie Secure (serve behind HTTPS).
    """
    from docket.adherence.page import register_page

    app = FastAPI(title="docket verify", version=__version__, description=__doc__)
    app.state.verifier, app.state.store, app.state.max_chars = verifier, store, max_chars
    app.state.auth = Authenticator(store, tokens)
    app.state.secure_cookies = secure_cookies
    _register_v1(app)
    _register_errors(app)
    register_page(app)
    return app
