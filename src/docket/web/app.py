"""The app factory: a FastAPI app wrapped in the kit's whole security policy.

Both apps are built here, so the policy is written once: security headers on every
response, the Host check, the body-size and JSON-depth limits (before any parsing or
authentication), the one error shape, and the :class:`~docket.web.kit.WebKit` on
``app.state.kit``. The apps only add routers, templates and static files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from docket.web.errors import HtmlErrorPage, install_error_handlers
from docket.web.kit import WebKit
from docket.web.middleware import BodyLimits, HostCheck, SecurityHeaders


def templates(folder: Path) -> Environment:
    """A Jinja environment: autoescape on for every template, undefined is an error."""
    return Environment(
        loader=FileSystemLoader(folder),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def create_web_app(
    kit: WebKit,
    *,
    title: str,
    static: dict[str, Path] | None = None,
    html_errors: HtmlErrorPage | None = None,
    api_docs: bool = False,
    **fastapi: Any,
) -> FastAPI:
    """Build a FastAPI app under the kit's policy.

    Args:
        kit: authentication, sessions and settings of the app.
        title: the app's title (OpenAPI).
        static: URL prefix -> folder of static files to mount.
        html_errors: renders an error page for browsers (None: JSON only).
        api_docs: serve the OpenAPI schema at ``/openapi.json`` (the interactive ``/docs``
            page is not served: it loads scripts from a CDN, which the CSP forbids).
        **fastapi: further FastAPI arguments (version, description).
    """
    docs: dict[str, Any] = {"docs_url": None, "redoc_url": None}
    if not api_docs:
        docs["openapi_url"] = None
    app = FastAPI(title=title, **docs, **fastapi)
    app.state.kit = kit
    app.state.store = kit.store
    install_error_handlers(app, html_errors)
    for prefix, folder in (static or {}).items():
        app.mount(prefix, StaticFiles(directory=folder), name=prefix.strip("/").replace("/", "-"))
    settings = kit.settings
    # add_middleware puts each new one outside the previous ones: headers end up outermost.
    app.add_middleware(
        BodyLimits, max_bytes=settings.max_body_bytes, max_depth=settings.max_json_depth
    )
    app.add_middleware(HostCheck, allowed=settings.allowed_hosts)
    app.add_middleware(SecurityHeaders)
    return app
