"""The Label Studio ML backend: docket's rule checks as predictions and as stored verdicts.

Five endpoints of Label Studio's ML-backend protocol, on the web kit (:mod:`docket.web`):

- ``GET /health`` (and ``/``): ``{"status": "UP"}`` (503 while the store is down);
  ``GET /metrics``: ``{}``.
- ``POST /setup``: the project's labelling config (``schema``) is checked against the
  mapping; a config missing a mapped field is refused in one line (and logged).
- ``POST /predict``: each task (and, in interactive mode, the annotator's current result
  in ``params.context``) is verified; flagged rules come back as read-only TextArea
  regions with a score, the share of rules passed. ``?shape=errors`` answers in the
  shape of Label Studio issue #8065 (``global-errors``, ``per-result-errors``).
- ``POST /webhook``: ``ANNOTATION_CREATED`` / ``ANNOTATION_UPDATED`` verify the submitted
  annotation after the answer is sent, and save it with every other verification run
  (``source = labelstudio``), so ``docket verify stats`` covers Label Studio annotators.

Every POST needs a token, as a bearer token or as the password of HTTP Basic auth (what
Label Studio's model connection sends); strangers are refused before their body is read.
Predictions are not saved: they are drafts; the submitted annotation is what counts.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from docket.adherence.labelstudio.convert import annotation_errors, prediction, request_of
from docket.adherence.labelstudio.mapping import Mapping
from docket.adherence.labelstudio.projects import (
    MappingResolver,
    Resolved,
    annotation_record_id,
    annotator_of,
    task_record_id,
)
from docket.adherence.verify import Verifier
from docket.adherence.verify.saved_runs import RunWriter, verify_and_save
from docket.adherence.web.handlers import need_store, submission_of
from docket.adherence.web.tokens import VerifyTokens
from docket.errors import InputError
from docket.fanout import bounded_map
from docket.store.base import Store
from docket.version import __version__
from docket.web import Viewer, WebKit, WebSettings, create_web_app
from docket.web.body import read_model

log = logging.getLogger(__name__)
APP = "labelstudio"
DEFAULT_MAX_CHARS = 1_000_000
DEFAULT_SETTINGS = WebSettings(max_body_bytes=8 * 1024 * 1024)
VERIFIED_ACTIONS = ("ANNOTATION_CREATED", "ANNOTATION_UPDATED")
TASKS_AT_ONCE = 4
"""Tasks of one /predict batch verified at the same time."""


class SetupBody(BaseModel):
    """``POST /setup``: the project (``"<id>.<created>"``) and its labelling config."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    project: str = ""
    label_config: str = Field("", alias="schema")


class PredictBody(BaseModel):
    """``POST /predict``: tasks, the labelling config, and ``params.context`` (interactive)."""

    model_config = ConfigDict(extra="allow")

    tasks: list[dict[str, Any]] = Field(max_length=1000)
    label_config: str
    project: str = ""
    params: dict[str, Any] | None = None

    def context_result(self) -> list[dict[str, Any]] | None:
        """The annotator's current result in interactive mode, else None."""
        context = (self.params or {}).get("context")
        result = context.get("result") if isinstance(context, dict) else None
        return result if isinstance(result, list) else None


class WebhookBody(BaseModel):
    """``POST /webhook``: an event, with the annotation, task and project it is about."""

    model_config = ConfigDict(extra="allow")

    action: str
    annotation: dict[str, Any] | None = None
    task: dict[str, Any] | None = None
    project: dict[str, Any] | None = None


def _state(request: Request) -> tuple[Verifier, MappingResolver, int]:
    state = request.app.state
    return state.verifier, state.resolver, state.max_chars


async def _authorised(request: Request, model: type[Any]) -> tuple[Viewer, Any]:
    """Credentials first (bearer or Basic), then the body (do no work for strangers)."""
    kit: WebKit = request.app.state.kit
    viewer = await run_in_threadpool(kit.require, request, cookie=False)
    return viewer, await read_model(request, model)


async def _resolve(resolver: MappingResolver, label_config: str, project: Any) -> Resolved:
    try:
        return await run_in_threadpool(resolver.resolve, label_config)
    except InputError as exc:
        log.warning("Label Studio project %s: %s", project, exc.one_line())
        raise


def model_version(verifier: Verifier) -> str:
    """What predictions are tagged with: the rule set's name and content version."""
    return f"docket-{verifier.ruleset.name}-{verifier.ruleset.version}"


def _register_meta(app: FastAPI) -> None:
    # GET /health is the kit's (with health_status "UP"); Label Studio also asks "/".
    @app.get("/", include_in_schema=False)
    def root() -> dict[str, str]:
        return {"status": "UP", "model_class": "docket", "version": __version__}

    @app.get("/metrics", tags=["labelstudio"])
    def metrics() -> dict[str, Any]:
        return {}

    @app.post("/setup", tags=["labelstudio"])
    async def setup(request: Request) -> dict[str, str]:
        """Check the project's labelling config against the mapping; name the model version."""
        _viewer, body = await _authorised(request, SetupBody)
        verifier, resolver, _ = _state(request)
        await _resolve(resolver, body.label_config, body.project)
        return {"model_version": model_version(verifier)}


def _register_predict(app: FastAPI) -> None:
    @app.post("/predict", tags=["labelstudio"])
    async def predict(
        request: Request, shape: Literal["predictions", "errors"] = "predictions"
    ) -> dict[str, Any]:
        """Verify each task (with the annotator's current result); flagged rules as regions."""
        _viewer, body = await _authorised(request, PredictBody)
        verifier, resolver, max_chars = _state(request)
        resolved = await _resolve(resolver, body.label_config, body.project)
        result = body.context_result()
        version = model_version(verifier)

        async def one(task: dict[str, Any]) -> dict[str, Any]:
            record_id = task_record_id(body.project, task)
            wanted = request_of(task, result, resolved.mapping, record_id)
            verdict = await verifier.verify(submission_of(wanted, max_chars))
            rules = verifier.ruleset
            if shape == "errors":
                return annotation_errors(verdict, rules, resolved.mapping, result)
            return prediction(verdict, rules, resolved.mapping, resolved.to_name, version)

        results = await bounded_map(body.tasks, one, limit=TASKS_AT_ONCE)
        return {"results": results, "model_version": version}


def _register_webhook(app: FastAPI) -> None:
    @app.post("/webhook", tags=["labelstudio"])
    async def webhook(request: Request) -> JSONResponse:
        """Verify a submitted or updated annotation in the background and save the verdict."""
        _viewer, body = await _authorised(request, WebhookBody)
        annotation, task, project = body.annotation, body.task, body.project
        if body.action not in VERIFIED_ACTIONS or not (annotation and task and project):
            return JSONResponse({"status": "ignored", "action": body.action})
        if annotation.get("was_cancelled"):
            return JSONResponse({"status": "ignored", "action": "skipped task"})
        store = need_store(request)
        verifier, resolver, max_chars = _state(request)
        resolved = await _resolve(resolver, str(project.get("label_config", "")), project)
        record_id = annotation_record_id(project, task, annotation)
        wanted = request_of(task, annotation.get("result"), resolved.mapping, record_id)
        submission = submission_of(wanted, max_chars)
        writer = RunWriter(store, source="labelstudio", annotator=annotator_of(annotation))
        # Label Studio waits for the answer (1 s by default) while the annotator's save
        # waits for it: answer at once, verify after the answer is sent.
        work = BackgroundTask(_verify_logged, verifier, submission, writer, record_id)
        return JSONResponse({"status": "queued", "record_id": record_id}, background=work)


async def _verify_logged(
    verifier: Verifier, submission: Any, writer: RunWriter, record: str
) -> None:
    try:
        verdict = await verify_and_save(verifier, submission, writer)
        log.info("Label Studio annotation %s: %s", record, verdict.status)
    except Exception:  # after the answer is sent nobody else can report it
        log.exception("could not verify Label Studio annotation %s", record)


def create_labelstudio_app(
    verifier: Verifier,
    *,
    store: Store | None = None,
    tokens: dict[str, str] | None = None,
    mapping: Mapping | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
    settings: WebSettings | None = None,
) -> FastAPI:
    """Build the Label Studio ML backend around a verifier.

    Args:
        verifier: checks submissions; shared by all requests.
        store: where webhook verdicts are saved (and stored tokens are read); None: the
            webhook answers 503.
        tokens: start-up tokens mapped to their user's name (``docket verify token add``
            makes stored ones).
        mapping: the mapping file's content; None: :func:`default_mapping` per project.
        max_chars: largest submission (characters of text) per task, else 413.
        settings: the web kit's limits (default: :data:`DEFAULT_SETTINGS`).
    """
    backend = VerifyTokens(tokens)
    kit = WebKit(APP, store, backend, settings or DEFAULT_SETTINGS, basic_auth=True)
    app = create_web_app(
        kit,
        title="docket Label Studio backend",
        pages=None,
        api_docs=True,
        health_status="UP",
        version=__version__,
    )
    app.state.verifier, app.state.max_chars = verifier, max_chars
    app.state.resolver = MappingResolver(verifier.ruleset, mapping)
    _register_meta(app)
    _register_predict(app)
    _register_webhook(app)
    return app
