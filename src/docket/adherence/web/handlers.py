"""What the verification API and the annotator page both do with a request.

Size checks, streaming a verdict, saving feedback (only on the caller's own results unless
they are an admin), feedback statistics and the rule list. The page takes them from here,
not from the API, so imports run one way: ``api`` -> ``page`` -> ``handlers``.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from pydantic import BaseModel
from sqlalchemy import select
from sse_starlette.sse import EventSourceResponse

from docket.adherence.models import VerificationResult, VerificationRun
from docket.adherence.verify import Submission, Verifier
from docket.adherence.verify.history import RateRow, feedback_stats, record_feedback
from docket.adherence.verify.requests import FeedbackRequest, VerifyRequest
from docket.adherence.verify.run_stats import FlagRow, flag_stats
from docket.adherence.verify.saved_runs import RunWriter, sse_events
from docket.errors import InputError
from docket.store.base import Store
from docket.web import Forbidden, HttpError, Viewer


def check_feedback_owner(store: Store, result_id: str, viewer: Viewer) -> None:
    """Refuse (403) feedback on another user's result unless the caller is an admin."""
    if viewer.is_admin:
        return
    with store.session() as session:
        query = (
            select(VerificationRun.annotator)
            .join(VerificationResult, VerificationResult.run_id == VerificationRun.id)
            .where(VerificationResult.id == result_id)
        )
        owner = session.scalars(query).first()
    if owner is not None and owner != viewer.name:
        raise Forbidden("this result belongs to another user", "answer flags on your own results")


def save_feedback(store: Store, body: FeedbackRequest, viewer: Viewer) -> Any:
    """Record feedback after the ownership check (see :func:`check_feedback_owner`)."""
    check_feedback_owner(store, body.result_id, viewer)
    return record_feedback(
        store, body.result_id, body.action, viewer.name, body.reason, body.fixed_text
    )


class RuleInfo(BaseModel):
    """A rule as the API lists it."""

    id: str
    tier: str
    scope: str
    text: str
    version: str


class StatsResponse(BaseModel):
    """Accepted-and-fixed counts per rule and per tier; flag rates per rule and annotator."""

    by_rule: list[dict[str, Any]]
    by_tier: list[dict[str, Any]]
    flags_by_rule: list[dict[str, Any]] = []
    flags_by_annotator: list[dict[str, Any]] = []


def stats_payload(store: Store) -> StatsResponse:
    """Feedback statistics with the accepted-and-fixed rate, and the flag rates of all runs."""
    by_rule, by_tier = feedback_stats(store)
    flag_rules, flag_people = flag_stats(store)

    def dump(row: RateRow) -> dict[str, Any]:
        return {**row.model_dump(), "responses": row.responses, "accepted_rate": row.accepted_rate}

    def dump_flags(row: FlagRow) -> dict[str, Any]:
        return {**row.model_dump(), "flag_rate": row.flag_rate}

    return StatsResponse(
        by_rule=[dump(r) for r in by_rule],
        by_tier=[dump(r) for r in by_tier],
        flags_by_rule=[dump_flags(r) for r in flag_rules],
        flags_by_annotator=[dump_flags(r) for r in flag_people],
    )


def submission_of(request: VerifyRequest, max_chars: int) -> Submission:
    """Validate size and turn index; 413 / 422 on bad input."""
    if request.size() > max_chars:
        raise HttpError(
            413, f"the submission has more than {max_chars} characters of text", "send less text"
        )
    try:
        return request.submission()
    except InputError as exc:
        raise HttpError(422, exc.message, exc.hint) from exc


def need_store(request: Request) -> Store:
    """The app's store; 503 when the server runs without one."""
    store = request.app.state.store
    if store is None:
        raise HttpError(503, "this server runs without a store", "start the server with --db")
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


def rule_infos(verifier: Verifier) -> list[RuleInfo]:
    """The verifier's rules for listing."""
    return [
        RuleInfo(
            id=r.id, tier=r.tier, scope=r.scope.describe(), text=r.text, version=str(r.version)
        )
        for r in verifier.ruleset.rules
    ]
