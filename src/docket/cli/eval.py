"""``docket eval``: compare relevance methods (``methods``) or retrieval systems (``systems``)."""

from __future__ import annotations

import typer

from docket.cli import eval_methods, eval_systems

app = typer.Typer(
    help="Evaluate relevance methods against gold labels, or retrieval systems.",
    no_args_is_help=True,
)

eval_methods.register(app)
eval_systems.register(app)
