"""``docket eval``: compare relevance methods (``methods``) or retrieval systems (``systems``)."""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    help="Evaluate relevance methods against gold labels, or retrieval systems.",
    no_args_is_help=True,
)

for _module in ("docket.cli.eval_methods", "docket.cli.eval_systems"):
    try:
        importlib.import_module(_module).register(app)
    except ModuleNotFoundError as exc:
        if exc.name != _module:
            raise
