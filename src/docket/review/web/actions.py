"""State-changing endpoints (POST): decide, close, assign (login and logout are the kit's).

Each accepts a form (browsers) or a JSON body (scripts). Database work runs in the
thread pool so a write waiting for SQLite's lock never blocks the event loop.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from sqlalchemy.exc import OperationalError
from starlette.concurrency import run_in_threadpool

from docket.errors import InputError, UserError
from docket.review.assign import assign_job
from docket.review.errors import UnknownTaskError
from docket.review.item import item_view
from docket.review.listing import next_task
from docket.review.models import Reviewer
from docket.review.queue import close_task, record_decision
from docket.review.web.pages import whole_number
from docket.store.base import Store
from docket.web import HttpError, Viewer, kit_of, require_admin, respond, wants_json
from docket.web.body import read_fields

router = APIRouter()
T = TypeVar("T")
LOCK_RETRIES = 5


def _write(store: Store, work: Callable[[Any], T]) -> T:
    """Run ``work(session)`` in one transaction, retrying if SQLite stays locked."""
    for attempt in range(LOCK_RETRIES):
        try:
            with store.session() as session:
                return work(session)
        except OperationalError as exc:
            if "locked" not in str(exc.orig) or attempt == LOCK_RETRIES - 1:
                raise
            time.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")  # the loop returns or raises


async def _authorised_body(request: Request) -> tuple[Viewer, dict[str, Any]]:
    """Credentials first, then the body, then the CSRF token from it (do no work for strangers)."""
    kit = kit_of(request)
    viewer = await run_in_threadpool(kit.require, request)
    body = await read_fields(request)
    return kit.check_post(request, viewer, _text(body.get("csrf_token")) or None), body


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _int_field(body: dict[str, Any], name: str, *, required: bool) -> int | None:
    raw = _text(body.get(name)).strip()
    if not raw:
        if required:
            raise InputError("is required", field=name)
        return None
    return whole_number(raw, name)


def _seconds(body: dict[str, Any]) -> float | None:
    for name in ("seconds", "shown_at"):
        raw = _text(body.get(name)).strip()
        if raw:
            try:
                value = float(raw)
            except ValueError as exc:
                raise InputError("must be a number", field=name) from exc
            return value if name == "seconds" else time.time() - value
    return None


@router.post("/tasks/{task_id:task}/decision", include_in_schema=False)
async def decide(request: Request) -> Response:
    """Record the viewer's decision; browsers go on to their next task."""
    viewer, body = await _authorised_body(request)
    task_id = request.path_params["task_id"]
    note, job = _text(body.get("note")), _text(body.get("job")) or None

    def work(session):  # type: ignore[no-untyped-def]
        decision = record_decision(
            session,
            task_id,
            viewer.name,
            label,
            grade,
            note,
            seconds=seconds,
            source="web" if viewer.via == "cookie" else "api",
        )
        return decision.id, decision.blind, decision.task_id

    try:
        label = _int_field(body, "label", required=True)
        grade = _int_field(body, "grade", required=False)
        seconds = _seconds(body)
        decision_id, blind, _ = await run_in_threadpool(_write, request.app.state.store, work)
    except (UserError, HttpError) as exc:
        if wants_json(request) or isinstance(exc, UnknownTaskError):
            raise
        # A browser stays on the item, with the reason and what they typed, instead of a
        # dead-end error page.
        typed = {"note": note, "grade": _text(body.get("grade")).strip()}
        return await run_in_threadpool(_item_with_refusal, request, viewer, task_id, exc, typed)
    found = await run_in_threadpool(_next, request.app.state.store, viewer, task_id, job)
    if wants_json(request):
        data = {"decision": decision_id, "task": task_id, "blind": blind, "next": found}
        return JSONResponse(data, status_code=201)
    query = {"saved": task_id, **({"job": job} if job else {})}
    target = f"/tasks/{found}" if found is not None else "/queue"
    return RedirectResponse(f"{target}?{urlencode(query)}", status_code=303)


def _item_with_refusal(
    request: Request, viewer: Viewer, task_id: int, exc: Exception, typed: dict[str, str]
) -> Response:
    """The item page again, saying why the decision was refused (with the refusal's status),
    with the note and grade the reviewer typed still filled in."""
    message = getattr(exc, "message", str(exc))
    hint = getattr(exc, "hint", "")
    status = int(getattr(exc, "status", getattr(exc, "status_code", 400)))
    with request.app.state.store.session() as session:
        data = item_view(session, session.get(Reviewer, viewer.id), task_id)
    data["saved"], data["job_filter"] = None, request.query_params.get("job", "")
    data["typed"] = typed
    data["decision_error"] = f"Your decision was not saved: {message}" + (
        f" ({hint})" if hint else ""
    )
    return respond(request, "item.html", data, viewer=viewer, status=status)


def _next(store: Store, viewer: Viewer, task_id: int, job: str | None) -> int | None:
    with store.session() as session:
        return next_task(session, session.get(Reviewer, viewer.id), after=task_id, job=job)


@router.post("/tasks/{task_id:task}/close", include_in_schema=False)
async def close(request: Request) -> Response:
    """Close a task so that it accepts no more decisions (admins only)."""
    viewer, body = await _authorised_body(request)
    require_admin(viewer, "closing a task")
    task_id = request.path_params["task_id"]
    status = await run_in_threadpool(
        _write, request.app.state.store, lambda s: close_task(s, task_id).status
    )
    if wants_json(request):
        return JSONResponse({"task": task_id, "status": status})
    return RedirectResponse(f"/tasks/{task_id}", status_code=303)


@router.post("/admin/assign", include_in_schema=False)
async def assign(request: Request) -> Response:
    """Spread a job's open tasks over the chosen reviewers (admins only)."""
    viewer, body = await _authorised_body(request)
    require_admin(viewer, "assigning work")
    job = _text(body.get("job")).strip()
    if not job:
        raise InputError("is required", field="job")
    names = body.get("reviewers") or []
    names = [names] if isinstance(names, str) else [str(n) for n in names]
    per_task = _int_field(body, "per_task", required=False)

    def work(session):  # type: ignore[no-untyped-def]
        return assign_job(session, job, names, per_task=per_task or None, assigned_by=viewer.name)

    added = await run_in_threadpool(_write, request.app.state.store, work)
    if wants_json(request):
        return JSONResponse({"job": job, "assigned": added})
    return RedirectResponse(f"/admin?{urlencode({'assigned': added})}", status_code=303)
