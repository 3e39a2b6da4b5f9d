"""The ``docket`` command: one sub-app per verb group, user errors as one line."""

from __future__ import annotations

import importlib
import logging
import sys
from typing import Annotated

import typer

from docket.errors import UserError
from docket.version import __version__

app = typer.Typer(
    name="docket",
    help="Trustworthy LLM-assisted annotation: relevance by debate, requirement adherence.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
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


# (module, attribute, name or None to merge its commands at top level)
SUBCOMMANDS: list[tuple[str, str, str | None]] = [
    ("docket.cli.judge", "app", None),
    ("docket.cli.plan", "app", None),
    ("docket.cli.export", "app", None),
    ("docket.cli.show", "app", None),
    ("docket.cli.eval", "app", "eval"),
    ("docket.cli.holes", "app", "holes"),
    ("docket.cli.review", "app", "review"),
    ("docket.cli.rules", "app", "rules"),
    ("docket.cli.verify", "app", "verify"),
    ("docket.cli.bench", "app", "bench"),
]


def _register() -> None:
    for module_name, attribute, name in SUBCOMMANDS:
        sub = getattr(importlib.import_module(module_name), attribute)
        if name is None:
            for command in sub.registered_commands:
                app.registered_commands.append(command)
        else:
            app.add_typer(sub, name=name)


_register()


def main() -> None:
    """Entry point: run the app, turning user errors into one line and exit code 2."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        app()
    except UserError as exc:
        typer.secho(f"error: {exc.one_line()}", err=True, fg=typer.colors.RED)
        sys.exit(2)
