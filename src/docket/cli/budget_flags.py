"""Flags of budgeted hole filling, declared once for ``holes fill`` and ``holes simulate``."""

from __future__ import annotations

from typing import Annotated

import typer

BudgetOpt = Annotated[
    str | None,
    typer.Option(help="judge only N holes, or P% of them (e.g. 200 or 20%), in --order"),
]
OrderOpt = Annotated[
    str,
    typer.Option(
        help="which holes first under a budget: depth | mtf | bandit | fusion | hedge, +yield"
    ),
]
OrderSeedOpt = Annotated[int, typer.Option(help="seed of the order's ties (mtf, bandit)")]
BatchOpt = Annotated[int, typer.Option(min=1, help="holes judged between two updates of the order")]
