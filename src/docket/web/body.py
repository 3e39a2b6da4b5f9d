"""Reading a request body after the credentials were checked, parsed off the event loop.

Routes that must authenticate before the body is touched take the :class:`Request`
and call these instead of declaring a FastAPI body parameter (which FastAPI parses
before any dependency runs). Parsing runs in a worker thread, so a large body never
holds the event loop; the middleware has already bounded its size and depth.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool

from docket.errors import InputError
from docket.reading import surrogate_problem

M = TypeVar("M", bound=BaseModel)


async def read_json(request: Request) -> Any:
    """The body parsed as JSON (400 ``field 'body'`` when it is not JSON)."""
    raw = await request.body()
    try:
        data = await run_in_threadpool(json.loads, raw)
    except ValueError as exc:
        raise InputError("the body is not valid JSON", field="body") from exc
    # A lone surrogate ("\\ud800") parses, but no store can save it: refused here, not a 500.
    if (problem := surrogate_problem(raw, data)) is not None:
        raise InputError(problem, field="body")
    return data


async def read_model(request: Request, model: type[M]) -> M:
    """The body validated as ``model`` (422 in the one error shape when it does not fit)."""
    raw = await request.body()
    try:
        return await run_in_threadpool(model.model_validate_json, raw)
    except ValidationError as exc:
        raise RequestValidationError(exc.errors(include_url=False)) from exc


async def read_fields(request: Request) -> dict[str, Any]:
    """A form or a JSON object body as a dict (repeated form fields become lists)."""
    if request.headers.get("content-type", "").startswith("application/json"):
        data = await read_json(request)  # parsed in a worker thread
        if not isinstance(data, dict):
            raise InputError("expected a JSON object", field="body")
        return data
    form = await request.form()
    return {k: (v[0] if len(v) == 1 else v) for k in form for v in [form.getlist(k)]}
