"""The review web app: routers and templates over the web kit (:mod:`docket.web`).

Every page answers as HTML or JSON (``.json`` suffix or ``Accept: application/json``).
All text from payloads is escaped by Jinja's autoescape; the kit's Content-Security-Policy
also forbids inline scripts, so even a missed escape could not run injected code.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI

from docket.review.auth import APP, ReviewerTokens
from docket.review.facets import backfill
from docket.review.web import actions, pages
from docket.review.web.respond import html_error
from docket.store.base import Store
from docket.web import WebKit, WebSettings, create_web_app

HERE = Path(__file__).resolve().parent.parent


def create_app(store: Store, settings: WebSettings | None = None) -> FastAPI:
    """Build the review app over an opened store.

    Args:
        store: the database (see :func:`docket.store.base.open_store`).
        settings: the web kit's limits and policy (default: :class:`WebSettings`).
    """
    with store.session() as session:
        backfill(session)  # facets of tasks enqueued before the queue had filters
    kit = WebKit(APP, store, ReviewerTokens(), settings or WebSettings())
    app = create_web_app(
        kit,
        title="docket review",
        pages=HERE / "templates",
        home="/queue",
        static={"/static": HERE / "static"},
        html_errors=html_error,
    )
    app.include_router(pages.router)
    app.include_router(actions.router)
    return app
