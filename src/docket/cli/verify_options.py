"""Options shared by the ``docket verify`` commands, and the verifier they build."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from docket.cli.common import model_factory
from docket.config import load_settings
from docket.errors import ConfigError

if TYPE_CHECKING:
    from docket.adherence.verify import Verifier

RulesOpt = Annotated[
    Path, typer.Option("--rules", "-r", help="rules file (YAML), see `docket rules`")
]
SimOpt = Annotated[
    str | None, typer.Option("--sim-model", help="model for sim rules (default: --model)")
]
SubOpt = Annotated[
    str | None,
    typer.Option("--sub-model", help="model for sub rules and holistic mode (default: --model)"),
]
ModelOpt = Annotated[str | None, typer.Option("--model", help="default model for both LLM tiers")]
ModeOpt = Annotated[
    str, typer.Option("--mode", help="atomic (one call per rule) or holistic (one call)")
]
TimeoutOpt = Annotated[
    float, typer.Option("--timeout", help="seconds per LLM check before needs_review")
]
OverflowOpt = Annotated[
    str, typer.Option("--overflow", help="over the prompt budget: truncate or review")
]
DbOpt = Annotated[
    str | None, typer.Option("--db", help="store path or SQLAlchemy URL (default docket.db)")
]
CacheOpt = Annotated[str | None, typer.Option("--cache", help="LLM response cache file, or 'off'")]


def build_verifier(
    rules: Path,
    model: str | None,
    sim_model: str | None,
    sub_model: str | None,
    mode: str,
    timeout: float,
    overflow: str,
    cache: str | None,
) -> Verifier:
    """Load the rules and make a verifier with one model per LLM tier."""
    from docket.adherence.rules import load_rules
    from docket.adherence.verify import Verifier, VerifierConfig

    if mode not in ("atomic", "holistic"):
        raise ConfigError(f"unknown mode '{mode}'", hint="use --mode atomic or --mode holistic")
    if overflow not in ("truncate", "review"):
        raise ConfigError(f"unknown overflow policy '{overflow}'", hint="use truncate or review")
    ruleset = load_rules(rules)
    settings = load_settings(model=model, cache=cache)
    get_model = model_factory(settings)
    tiers = {rule.tier for rule in ruleset.rules}
    holistic = mode == "holistic"
    config = VerifierConfig(mode=mode, timeout_s=timeout, overflow=overflow)  # type: ignore[arg-type]
    return Verifier(
        ruleset,
        sim_model=get_model(sim_model) if "sim" in tiers and not holistic else None,
        sub_model=get_model(sub_model) if "sub" in tiers or (holistic and tiers) else None,
        config=config,
    )
