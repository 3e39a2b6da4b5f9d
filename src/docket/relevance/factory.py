"""Build the judge for a set of options."""

from __future__ import annotations

from collections.abc import Callable

from docket.errors import ConfigError
from docket.llm.model import Model
from docket.relevance.baselines import MajorityJudge, SingleJudge
from docket.relevance.debate import Agent, DreamJudge, agent_names, agent_stances
from docket.relevance.lara import LaraJudge
from docket.relevance.options import JudgeOptions
from docket.relevance.types import Judge

GetModel = Callable[[str | None], Model]
"""``get_model(None)`` is the main model; ``get_model(name)`` another one by name."""


def build_judge(options: JudgeOptions, get_model: GetModel) -> Judge:
    """Return the judge for ``options.method``.

    Args:
        options: validated judge options.
        get_model: resolves model names; called once per distinct role here, so the
            caller may share Model instances (and their caches and limits).

    Raises:
        ConfigError: an option combination the method cannot run.
    """
    main = get_model(None)
    if options.method == "dream":
        return _dream(options, get_model, main)
    if options.method == "single":
        return SingleJudge(options, main)
    if options.method == "majority":
        return MajorityJudge(options, main)
    if options.method == "lara":
        return LaraJudge(options, main)
    raise ConfigError(  # pragma: no cover - the Literal type already refuses it
        f"unknown method '{options.method}'", hint="use dream, single, lara or majority"
    )


def _dream(options: JudgeOptions, get_model: GetModel, main: Model) -> DreamJudge:
    if options.agent_models and len(options.agent_models) != options.agents:
        raise ConfigError(
            f"{len(options.agent_models)} agent models for {options.agents} agents",
            hint="give one model per agent, or none to use the main model for all",
        )
    models = [get_model(name) for name in options.agent_models] or [main] * options.agents
    agents = [
        Agent(name, stance, model)
        for name, stance, model in zip(
            agent_names(options.agents),
            agent_stances(options.stances, options.agents),
            models,
            strict=True,
        )
    ]
    adjudicator = get_model(options.adjudicator) if options.adjudicator else None
    return DreamJudge(options, agents, adjudicator, model_name=main.name)
