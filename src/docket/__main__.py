"""``python -m docket`` runs the CLI."""

from docket.cli.main import main

main()
