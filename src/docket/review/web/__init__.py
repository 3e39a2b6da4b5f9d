"""The review web app (FastAPI + Jinja); build it with :func:`create_app`."""

from __future__ import annotations

from docket.review.web.app import create_app

__all__ = ["create_app"]
