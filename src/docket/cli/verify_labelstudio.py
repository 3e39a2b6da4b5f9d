"""``docket verify labelstudio``: serve the rule checks as a Label Studio ML backend."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from docket.cli import web_flags
from docket.cli.common import console
from docket.cli.verify_options import (
    CacheOpt,
    DbOpt,
    ModelOpt,
    ModeOpt,
    OverflowOpt,
    RulesOpt,
    SimOpt,
    SubOpt,
    build_verifier,
)
from docket.config import load_settings

TokenFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--token-file",
        help="file of start-up bearer tokens, one NAME=TOKEN a line (also read: "
        "$DOCKET_VERIFY_TOKEN); or `docket verify token add`",
    ),
]
MapOpt = Annotated[
    Path | None,
    typer.Option(
        "--map", help="mapping of the labelling config (YAML); default: read the template"
    ),
]


def labelstudio(
    rules: RulesOpt,
    mapping: MapOpt = None,
    model: ModelOpt = None,
    sim_model: SimOpt = None,
    sub_model: SubOpt = None,
    mode: ModeOpt = "atomic",
    timeout: Annotated[
        float,
        typer.Option("--timeout", help="seconds the LLM checks of one task may take"),
    ] = 20.0,
    overflow: OverflowOpt = "truncate",
    db: DbOpt = None,
    cache: CacheOpt = None,
    host: Annotated[str, typer.Option("--host", help="interface to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="port to listen on")] = 9090,
    token_file: TokenFileOpt = None,
    allowed_host: web_flags.AllowedHost = None,
    max_body_bytes: web_flags.MaxBody = None,
    max_json_depth: web_flags.MaxDepth = None,
) -> None:
    """Serve the rules as a Label Studio ML backend: feedback as predictions, verdicts saved.

    Connect it in the project's Model settings with Basic auth, a token as the password.
    """
    from docket.adherence.labelstudio import load_mapping
    from docket.adherence.web.labelstudio import DEFAULT_SETTINGS, create_labelstudio_app
    from docket.adherence.web.tokens import startup_tokens
    from docket.store.base import open_store
    from docket.web.serve import bind, serve

    settings = web_flags.web_settings(
        DEFAULT_SETTINGS,
        host,
        allowed_host,
        max_body_bytes=max_body_bytes,
        max_json_depth=max_json_depth,
    )
    bind(host, port).close()  # a bad --host or --port is refused before the model loads
    loaded = load_mapping(mapping) if mapping is not None else None
    tokens = startup_tokens(token_file)
    verifier = build_verifier(rules, model, sim_model, sub_model, mode, timeout, overflow, cache)
    store = open_store(load_settings(db=db).db)
    app = create_labelstudio_app(
        verifier, store=store, tokens=tokens, mapping=loaded, settings=settings
    )

    def announce(url: str) -> None:
        console.print(f"Label Studio ML backend: {url}", soft_wrap=True)

    serve(app, host, port, announce)
