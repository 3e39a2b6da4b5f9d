"""Set-up checks of a build: models, tiers to inject, warnings, dialogue roles."""

from __future__ import annotations

import re
from dataclasses import dataclass

from docket.adherence.rules import RuleSet
from docket.adherence.rules.model import TIERS, Tier
from docket.errors import ConfigError
from docket.llm import Model
from docket.readeval.dataset import BuildConfig
from docket.readeval.mutations import operators_for
from docket.readeval.personas import outside_paper_ranges


@dataclass(frozen=True)
class BuildModels:
    """The generator (writes sim/sub violations and new dialogues) and the judge(s)."""

    generator: Model | None = None
    judge_sim: Model | None = None
    judge_sub: Model | None = None

    def names(self) -> dict[str, str | None]:
        """Model names for the dataset header."""
        return {
            "generator": self.generator.name if self.generator else None,
            "judge_sim": self.judge_sim.name if self.judge_sim else None,
            "judge_sub": self.judge_sub.name if self.judge_sub else None,
        }


def model_family(name: str) -> str:
    """A rough family name (``openai:gpt-4o-mini`` -> ``gpt``), to spot self-preference."""
    tail = name.split("#")[-1].split(":")[-1].split("/")[-1].lower()
    found = re.match(r"[a-z]+", tail)
    return found.group() if found else tail


def resolve_tiers(config: BuildConfig, ruleset: RuleSet, models: BuildModels) -> list[Tier]:
    """The tiers to inject; ConfigError when an LLM tier lacks a generator or a judge."""
    tiers = list(config.tiers or (TIERS if models.generator else ("fmt",)))
    llm = [tier for tier in tiers if tier != "fmt"]
    if llm and models.generator is None:
        raise ConfigError(
            f"{'/'.join(llm)} violations are written by a generator model",
            hint="pass --generator-model, or --tiers fmt",
        )
    if llm and (models.judge_sim is None or models.judge_sub is None):
        raise ConfigError(
            "sim/sub violations need judge models for the independent check",
            hint="pass --judge-model (or --judge-sim-model and --judge-sub-model)",
        )
    return [tier for tier in TIERS if tier in tiers]


def build_warnings(config: BuildConfig, ruleset: RuleSet, models: BuildModels) -> list[str]:
    """Warnings about the set-up: self-preference, persona ranges, rules never injected."""
    notes = outside_paper_ranges(config.personas)
    names = models.names()
    judges = {names["judge_sim"], names["judge_sub"]} - {None}
    generator = names["generator"]
    for judge in sorted(judges):
        if generator and model_family(generator) == model_family(judge):  # type: ignore[arg-type]
            notes.append(
                f"the generator ({generator}) and the judge ({judge}) look like the same model "
                "family: the paper generates with one family and checks with another to avoid "
                "self-preference"
            )
    if not judges:
        notes.append(
            "no judge model: seeds and samples are checked by code for fmt rules only; that "
            "they break no sim/sub rule is assumed, not checked"
        )
    missing = sorted(
        {r.check.checker for r in ruleset.by_tier("fmt") if not operators_for(r)}  # type: ignore[union-attr]
    )
    if missing:
        notes.append(
            f"no mutation operator fits the rules using {', '.join(missing)}: never injected"
        )
    return notes


def dialogue_roles(ruleset: RuleSet) -> list[str]:
    """The speakers of a new dialogue: from a role_alternation rule, else user and assistant."""
    for rule in ruleset.by_tier("fmt"):
        if rule.check.checker == "role_alternation":
            return list(rule.fmt_params.roles)
    return ["user", "assistant"]
