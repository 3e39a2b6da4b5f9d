"""Read-only pages (GET). Each is also served as JSON at the same path plus ``.json``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from sqlalchemy import select
from starlette.convertors import Convertor, register_url_convertor

from docket.errors import InputError
from docket.review.assign import open_load
from docket.review.item import item_view
from docket.review.listing import QueueQuery, next_task, queue_view
from docket.review.models import Reviewer
from docket.review.stats import by_job, job_counts, review_stats
from docket.store.base import Store
from docket.web import Viewer, kit_of, require_admin, respond, wants_json

router = APIRouter()
MAX_DIGITS = 18
"""Most digits of a task number or count a URL or form may give: 10**18 fits the store's
64-bit integers, so a longer number is refused (or not found) instead of overflowing."""


class TaskNumber(Convertor[int]):
    """The ``{task_id:task}`` path parameter: at most :data:`MAX_DIGITS` ASCII digits,
    so ``/tasks/<a 30-digit number>`` is a 404 like any task that does not exist."""

    regex = f"[0-9]{{1,{MAX_DIGITS}}}"

    def convert(self, value: str) -> int:
        """The task id."""
        return int(value)

    def to_string(self, value: int) -> str:
        """The path segment."""
        return str(value)


register_url_convertor("task", TaskNumber())


def whole_number(raw: str, name: str, message: str = "must be a whole number") -> int:
    """``raw`` as an int: only ASCII digits, at most :data:`MAX_DIGITS` (else a 400)."""
    if not (raw.isascii() and raw.isdigit() and len(raw) <= MAX_DIGITS):
        raise InputError(message, field=name)
    return int(raw)


def page(path: str) -> Callable:
    """Register a GET handler at ``path`` and at ``path.json``."""

    def register(handler: Callable) -> Callable:
        router.add_api_route(path, handler, methods=["GET"], include_in_schema=False)
        router.add_api_route(path + ".json", handler, methods=["GET"], include_in_schema=False)
        return handler

    return register


def _viewer(request: Request) -> Viewer:
    return kit_of(request).require(request)


def _store(request: Request) -> Store:
    return request.app.state.store


def _int_param(request: Request, name: str) -> int | None:
    raw = request.query_params.get(name, "")
    if not raw:
        return None
    return whole_number(raw, name, "must be a task number")


@router.get("/", include_in_schema=False)
def home(request: Request) -> Response:
    """Go to the queue (or the login page when not logged in)."""
    _viewer(request)
    return RedirectResponse("/queue", status_code=303)


@page("/queue")
def queue(request: Request) -> Response:
    """Tasks for the logged-in reviewer, with counts per status and filters."""
    viewer = _viewer(request)
    params = request.query_params
    query = QueueQuery(
        job=params.get("job") or None,
        status=params.get("status") or "todo",
        reviewer=params.get("reviewer") or None,
        disagreement=params.get("disagreement") or None,
        search=params.get("q") or None,
        after=_int_param(request, "after"),
        before=_int_param(request, "before"),
    )
    with _store(request).session() as session:
        data = queue_view(session, session.get(Reviewer, viewer.id), query)
    data["saved"] = _int_param(request, "saved")
    data["links"] = _page_links(data)
    return respond(request, "queue.html", data, viewer=viewer)


def _page_links(data: dict[str, Any]) -> dict[str, Any]:
    """Query strings of the older/newer pages and of each status, keeping the filters."""
    filters = {("q" if k == "search" else k): v for k, v in data["filters"].items() if v}
    after, before = data["next_after"], data["prev_before"]
    return {
        "next": urlencode({**filters, "after": after}) if after is not None else "",
        "prev": urlencode({**filters, "before": before}) if before is not None else "",
        "status": {s: urlencode({**filters, "status": s}) for s in data["statuses"]},
    }


@page("/tasks/{task_id:task}")
def task_page(request: Request) -> Response:
    """One item: query, numbered sentences with evidence, debate, decision form."""
    viewer = _viewer(request)
    task_id = request.path_params["task_id"]
    with _store(request).session() as session:
        data = item_view(session, session.get(Reviewer, viewer.id), task_id)
    data["saved"] = _int_param(request, "saved")
    data["job_filter"] = request.query_params.get("job", "")
    return respond(request, "item.html", data, viewer=viewer)


@page("/next")
def next_page(request: Request) -> Response:
    """Jump to the reviewer's next open task (JSON: its id, or null)."""
    viewer = _viewer(request)
    after, job = _int_param(request, "after"), request.query_params.get("job") or None
    with _store(request).session() as session:
        found = next_task(session, session.get(Reviewer, viewer.id), after=after, job=job)
    if wants_json(request):
        return JSONResponse({"next": found})
    suffix = f"?{urlencode({'job': job})}" if job else ""
    target = f"/tasks/{found}" if found is not None else "/queue"
    return RedirectResponse(target + suffix, status_code=303)


@page("/stats")
def stats_page(request: Request) -> Response:
    """Progress, time per decision and agreement (admins only)."""
    viewer = _viewer(request)
    require_admin(viewer, "the statistics page")
    job = request.query_params.get("job") or None
    kind = request.query_params.get("kind") or None
    with _store(request).session() as session:
        data = review_stats(session, job=job, kind=kind)
    return respond(request, "stats.html", data, viewer=viewer)


@page("/admin")
def admin_page(request: Request) -> Response:
    """Reviewers and their open load, jobs, and the form to assign work (admins only)."""
    viewer = _viewer(request)
    require_admin(viewer, "the admin page")
    with _store(request).session() as session:
        load = open_load(session)
        reviewers = [_reviewer_row(r, load[r.id]) for r in session.scalars(select(Reviewer))]
        jobs = by_job(job_counts(session))
    return respond(request, "admin.html", {"reviewers": reviewers, "jobs": jobs}, viewer=viewer)


def _reviewer_row(reviewer: Reviewer, load: int) -> dict[str, Any]:
    return {
        "name": reviewer.name,
        "is_admin": reviewer.is_admin,
        "blind": reviewer.blind,
        "active": reviewer.active,
        "open_assigned": load,
    }
