"""One declaration per relevance method: how its judge is built and how many calls a round
makes. The judge factory, the plan and the pilot read it here instead of testing the name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from docket.errors import ConfigError
from docket.llm.model import Model
from docket.relevance.baselines import MajorityJudge, SingleJudge
from docket.relevance.debate import Agent, DreamJudge, agent_names, agent_stances
from docket.relevance.lara import LaraJudge
from docket.relevance.options import METHOD_FIELDS, JudgeOptions
from docket.relevance.types import Judge

GetModel = Callable[[str | None], Model]
"""``get_model(None)`` is the main model; ``get_model(name)`` another one by name."""


@dataclass(frozen=True)
class MethodSpec:
    """What one relevance method is and does.

    Attributes:
        name: the method's name (``JudgeOptions.method``).
        fields: the options only this method reads.
        build: ``build(options, get_model, main)`` returns its judge.
        calls_per_round: model calls one round of one pair makes (the pairs' calls in
            flight at once are this many times the pairs).
    """

    name: str
    fields: tuple[str, ...]
    build: Callable[[JudgeOptions, GetModel, Model], Judge]
    calls_per_round: Callable[[JudgeOptions], int]


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


def _one(options: JudgeOptions) -> int:
    return 1


METHOD_SPECS: dict[str, MethodSpec] = {
    spec.name: spec
    for spec in (
        MethodSpec("dream", METHOD_FIELDS["dream"], _dream, lambda o: o.agents),
        MethodSpec("single", METHOD_FIELDS["single"], lambda o, g, m: SingleJudge(o, m), _one),
        MethodSpec("lara", METHOD_FIELDS["lara"], lambda o, g, m: LaraJudge(o, m), _one),
        MethodSpec(
            "majority",
            METHOD_FIELDS["majority"],
            lambda o, g, m: MajorityJudge(o, m),
            lambda o: o.samples,
        ),  # fmt: skip
    )
}
"""Every method by name, in :data:`~docket.relevance.options.METHODS` order."""


def method_spec(name: str) -> MethodSpec:
    """The declaration of method ``name``; ConfigError names the known ones."""
    spec = METHOD_SPECS.get(name)
    if spec is None:
        raise ConfigError(f"unknown method '{name}'", hint=f"use {', '.join(METHOD_SPECS)}")
    return spec
