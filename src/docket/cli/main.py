"""The ``docket`` command: one sub-app per verb group, user errors as one line.

Start-up is lazy: a verb group's module (and what it imports: the store, the job API,
FastAPI, numpy) is imported only when that command runs or its own help is asked for.
``docket --help`` lists every command from :data:`SUBCOMMANDS` without importing one, so
it and ``docket --version`` start in a fraction of a second (``benchmarks/startup.py``;
``tests/cli/test_startup.py`` checks that the listing matches the loaded commands).
"""

from __future__ import annotations

import importlib
import logging
import sys
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from docket.errors import DocketError
from docket.version import __version__

# (command name, module, short help shown by ``docket --help``); the module's ``app`` is a
# Typer with this one command (judge, export, show) or a verb group.
SUBCOMMANDS: tuple[tuple[str, str, str], ...] = (
    ("judge", "docket.cli.judge",
     "Judge query-chunk pairs (DREAM debate by default); resumable, results in the store."),
    ("plan", "docket.cli.plan",
     "What judging PAIRS would cost: calls, tokens, USD, time and reviewer hours; no LLM call."),
    ("export", "docket.cli.export",
     "Export a job's labels as TREC qrels or JSONL with provenance, or completed qrels."),
    ("jobs", "docket.cli.jobs",
     "List every job in a store: method, model, pairs judged and escalated, review, spend."),
    ("show", "docket.cli.show",
     "Show how a judged pair was decided: every turn's label, evidence and reasoning."),
    ("eval", "docket.cli.eval",
     "Evaluate relevance methods or label files against gold labels, or retrieval systems."),
    ("holes", "docket.cli.holes",
     "Holes in IR benchmarks: find, fill and simulate unjudged documents."),
    ("review", "docket.cli.review",
     "Human review of escalated items: web app, reviewers, assignment, agreement."),
    ("rules", "docket.cli.rules",
     "SOP to rules: extract, check stability, validate, schema, checkers."),
    ("verify", "docket.cli.verify",
     "Verify records against SOP rules (fmt by code, sim/sub by LLM); feedback stats; API server."),
    ("audit", "docket.cli.audit",
     "Audit a job's automatic labels: draw a random sample, plan it, certify the labels."),
    ("bench", "docket.cli.bench", "Benchmarks of docket's methods."),
)  # fmt: skip


def load_command(name: str) -> Any:
    """Import the module of command ``name`` and return its (typer's click) command."""
    module = next(m for n, m, _ in SUBCOMMANDS if n == name)
    command = typer.main.get_command(importlib.import_module(module).app)
    command.name = name
    return command


class LazyGroup(TyperGroup):
    """The root group: a command's module is imported when the command is asked for;
    the root's own help lists every command from the table without importing one."""

    listing = False

    def list_commands(self, ctx: typer.Context) -> list[str]:
        """Every command, in the table's order."""
        return [name for name, _, _ in SUBCOMMANDS]

    def get_command(self, ctx: typer.Context, cmd_name: str) -> Any:
        """The command (imported on first use); while the root help is written, a
        placeholder with its short help."""
        short = next((h for n, _, h in SUBCOMMANDS if n == cmd_name), None)
        if short is None:
            return None
        if cmd_name not in self.commands:
            if self.listing:
                return TyperCommand(cmd_name, help=short)
            self.add_command(load_command(cmd_name), cmd_name)
        return self.commands[cmd_name]

    def format_help(self, ctx: typer.Context, formatter: Any) -> None:
        """The root help, from the table."""
        self.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.listing = False


app = typer.Typer(
    name="docket",
    help="Trustworthy LLM-assisted annotation: relevance by debate, requirement adherence.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    cls=LazyGroup,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"docket {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Trustworthy LLM-assisted annotation: relevance by debate, requirement adherence."""
    from docket.cli.outputs import notes_to_stderr  # not at start-up: `--help` stays light

    notes_to_stderr(False)  # until an output flag of this command says ``-``


def main() -> None:
    """Entry point: run the app, turning user errors into one line and their exit code."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        app()
    except DocketError as exc:
        from docket.cli.exits import exit_code  # not at start-up: `docket --help` stays light

        code = exit_code(exc)
        if code is None:
            raise
        typer.secho(f"error: {exc.one_line()}", err=True, fg=typer.colors.RED)
        sys.exit(code)
