"""``docket eval``: relevance methods (``methods``), label files (``labels``), retrieval systems."""

from __future__ import annotations

import typer

from docket.cli import eval_labels, eval_methods, eval_systems

app = typer.Typer(
    help="Evaluate relevance methods or label files against gold labels, or retrieval systems.",
    no_args_is_help=True,
)

eval_methods.register(app)
eval_labels.register(app)
eval_systems.register(app)
