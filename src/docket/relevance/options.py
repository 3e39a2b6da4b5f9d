"""Options for every relevance method, serialised into each judgment record."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from docket.errors import ConfigError
from docket.reading import first_problem
from docket.relevance.prompts import split_instructions

Method = Literal["dream", "single", "lara", "majority"]
METHODS: tuple[str, ...] = ("dream", "single", "lara", "majority")
METHOD_FIELDS: dict[str, tuple[str, ...]] = {
    "dream": ("rounds", "stances", "agents", "agent_models", "adjudicator"),
    "single": ("scale",),
    "majority": ("samples", "majority_temperature"),
    "lara": ("lara_budget", "top_logprobs"),
}
"""The options only one method reads; every other field applies to every method."""
FLAG_NAMES = {"agent_models": "agent-model"}
"""Command-line flags whose name is not the field's name with dashes."""


class JudgeOptions(BaseModel):
    """How to judge relevance; one field per CLI flag.

    Attributes:
        method: ``dream`` (debate), ``single`` (one judge call), ``lara`` (logprob confidence
            with budgeted human escalation) or ``majority`` (k sampled votes).
        rounds: maximum debate rounds R (DREAM).
        stances: ``opposing`` (A relevant, B irrelevant), ``swapped`` (A irrelevant, B
            relevant) or ``neutral`` (no stance).
        agents: number of debating agents; consensus means all labels agree.
        agent_models: one model name per agent; empty means the main model for all.
        adjudicator: model name of an LLM that decides disagreements from the transcript
            instead of a human; None escalates to a human.
        scale: single judge scale, ``binary`` or ``graded`` (0-3, relevant at grade >= 2).
        samples: number of votes for ``majority``.
        lara_budget: share of pairs LARA sends to humans (its human budget).
        max_tokens: cap on generated tokens for debate turns, adjudicator and single judge.
        temperature: sampling temperature for debate, adjudicator, single judge and LARA.
        majority_temperature: sampling temperature of the ``majority`` votes (must be > 0).
        seed: the run's seed. ``majority`` vote i uses seed + i; with ``temperature`` > 0
            every other call is sampled with it; a job's ``sample`` draws its pairs with it.
        top_logprobs: alternatives requested per token by LARA.
        instructions: the collection's own definition of relevance (Markdown, optionally
            with a ``## Grades`` section for the graded scale) in place of docket's; see
            :func:`docket.relevance.prompts.split_instructions`. Empty: docket's.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    method: Method = "dream"
    rounds: int = Field(2, ge=1, le=10, description="debate rounds R")
    stances: Literal["opposing", "swapped", "neutral"] = Field(
        "opposing", description="opposing | swapped | neutral"
    )
    agents: int = Field(2, ge=2, le=8, description="debating agents, consensus = unanimous")
    agent_models: list[str] = Field(
        default_factory=list, description="model per agent (repeat the flag)"
    )
    adjudicator: str | None = Field(None, description="LLM adjudicator model instead of a human")
    scale: Literal["binary", "graded"] = Field("binary", description="binary | graded")
    samples: int = Field(5, ge=1, le=50, description="votes per pair")
    lara_budget: float = Field(0.035, ge=0.0, le=1.0, description="share of pairs sent to humans")
    max_tokens: int = Field(200, ge=8, le=4096)
    temperature: float = Field(
        0.0, ge=0.0, le=2.0, description="sampling temperature of every call"
    )
    majority_temperature: float = Field(0.7, gt=0.0, le=2.0)
    seed: int = Field(
        0,
        description="the run's seed: --sample, majority votes (seed + i), calls at --temperature > 0",
    )
    top_logprobs: int = Field(10, ge=1, le=20)
    instructions: str = ""

    @model_validator(mode="after")
    def _instructions_read(self) -> JudgeOptions:
        if self.instructions.strip():
            split_instructions(self.instructions)  # a malformed text fails here, not mid-run
        return self

    @model_validator(mode="after")
    def _agent_models_match(self) -> JudgeOptions:
        if self.agent_models and len(self.agent_models) != self.agents:
            raise ValueError(
                f"agent_models names {len(self.agent_models)} models for {self.agents} agents"
            )
        return self

    @classmethod
    def checked(cls, **values: Any) -> JudgeOptions:
        """Build options, turning validation errors into a :class:`ConfigError` with a hint."""
        try:
            return cls(**values)
        except ValidationError as exc:
            where, message, _ = first_problem(exc)
            raise ConfigError(
                f"invalid judge option {where or 'options'}: {message}",
                hint="see `docket judge --help` for the allowed values",
            ) from exc

    @property
    def call_seed(self) -> int | None:
        """The sampling seed of every non-majority call: ``seed`` when sampling, else None.

        Greedy calls (temperature 0) send no seed, so their cached replies stay valid.
        """
        return self.seed if self.temperature > 0 else None

    def record(self) -> dict[str, Any]:
        """The options this method reads, as a JSON-ready dict (``Judgment.config``, jobs).

        Options of other methods are left out: a LARA job does not record debate rounds.
        """
        others = {f for m, fields in METHOD_FIELDS.items() if m != self.method for f in fields}
        if self.call_seed is None and self.method != "majority":
            others.add("seed")  # greedy calls ignore the seed
        if not self.instructions.strip():
            others.add("instructions")  # jobs without them resume as before
        return {k: v for k, v in self.model_dump(mode="json").items() if k not in others}


def check_applicable(methods: str | Sequence[str], options: JudgeOptions) -> None:
    """Refuse options set away from their default that none of ``methods`` reads.

    ``--method dream --scale graded`` or ``--method single --rounds 3`` would otherwise be
    accepted and silently ignored.

    Raises:
        ConfigError: one line naming the option and the methods it belongs to.
    """
    applies = METHOD_FIELDS
    names = [methods] if isinstance(methods, str) else list(methods)
    used = {field for name in names for field in applies.get(name, ())}
    defaults = JudgeOptions()
    for field in (f for fields in applies.values() for f in fields):
        if field in used or getattr(options, field) == getattr(defaults, field):
            continue
        flag = FLAG_NAMES.get(field, field.replace("_", "-"))
        owners = [m for m, fields in applies.items() if field in fields]
        raise ConfigError(
            f"--{flag} does not apply to --method {','.join(names)}",
            hint=f"it is an option of --method {' or '.join(owners)}; drop it",
        )
