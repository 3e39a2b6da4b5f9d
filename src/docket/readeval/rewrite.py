"""LLM-written samples: sim/sub violations by rewriting one turn, and new clean dialogues.

Both run the verify-and-repair loop of the RE-AD paper: each answer of the generator is
checked independently (fmt rules by code, sim/sub rules by the judge); what went wrong is
fed back, for at most ``max_iterations`` rounds, after which the sample is dropped.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from docket.adherence.record import Record
from docket.adherence.rules import Rule
from docket.errors import DocketError
from docket.llm import Message, Model, Parsed, Request
from docket.readeval.mutations import Mutation, replace_text
from docket.readeval.operators import MutationContext
from docket.readeval.prompts_bench import (
    Target,
    dialogue_messages,
    feedback,
    parse_dialogue,
    parse_rewrite,
    rewrite_messages,
)
from docket.readeval.truth import Dropped, GroundTruth, Injected, Problem, drop_reason

T = TypeVar("T")
LLM_OPERATOR = "llm-rewrite"


@dataclass(frozen=True)
class Generation:
    """The generator model and how to call it."""

    model: Model
    temperature: float = 0.7
    max_tokens: int = 768
    max_iterations: int = 3


def llm_target(rule: Rule, record: Record, rng: random.Random) -> Target | None:
    """What to rewrite for ``rule``: a drawn turn of its scope, any turn, or its field."""
    scope = rule.scope
    if scope.kind == "field":
        return Target("field", field=scope.field) if scope.field in record.fields else None
    if scope.kind == "record":
        return Target("turn", tuple(range(len(record.turns)))) if record.turns else None
    turns = [target.turn for target in scope.targets(record)]
    return Target("turn", (rng.choice(turns),)) if turns else None


async def _ask(
    generation: Generation, messages: list[Message], seed: int, parse: Callable[[str], T]
) -> Parsed[T] | str:
    """The parsed answer, or the reason there is none (a failed call, an unreadable reply)."""
    request = Request(
        messages=tuple(messages),
        max_tokens=generation.max_tokens,
        temperature=generation.temperature,
        seed=seed,
    )
    try:
        parsed = await generation.model.generate_parsed(request, parse)
    except DocketError:
        return "generator call failed"
    return parsed if parsed.ok else "generator reply unreadable"


async def _repair_loop(
    generation: Generation,
    messages: list[Message],
    seed: int,
    parse: Callable[[str], T],
    check: Callable[[T], Any],
) -> tuple[Any, int] | Dropped:
    """Ask, check, feed back the problems; ``check`` returns (candidate, problems)."""
    problems: list[Problem] = []
    for iteration in range(1, generation.max_iterations + 1):
        parsed = await _ask(generation, messages, seed, parse)
        if isinstance(parsed, str):
            return Dropped(parsed, iteration)
        candidate, problems = await check(parsed.value)  # type: ignore[arg-type]
        if not problems:
            return candidate, iteration
        messages = [
            *messages,
            Message("assistant", parsed.raw[-1]),
            Message("user", feedback(problems)),
        ]
    detail = "; ".join(p.short() for p in problems)
    return Dropped(drop_reason(problems), generation.max_iterations, detail)


async def inject_llm(
    rule: Rule, record: Record, truth: GroundTruth, ctx: MutationContext, generation: Generation
) -> Injected | Dropped:
    """Have the generator break ``rule`` (sim or sub) in one turn; verify and repair."""
    target = llm_target(rule, record, ctx.rng)
    if target is None:
        return Dropped("rule does not apply", 0)
    messages = rewrite_messages(truth.ruleset, rule, record, target, ctx.persona)

    async def check(answer: tuple[str, str, str]) -> tuple[Mutation, list[Problem]]:
        kind, where, text = answer
        slot = (kind, int(where) if kind == "turn" else where)
        turn = int(where) if kind == "turn" else None
        mutation = Mutation(replace_text(record, slot, text), LLM_OPERATOR, turn)
        return mutation, await truth.problems(mutation.record, rule.id)

    outcome = await _repair_loop(
        generation,
        messages,
        ctx.rng.randrange(2**31),
        lambda text: parse_rewrite(text, target, record),
        check,
    )
    return outcome if isinstance(outcome, Dropped) else Injected(*outcome)


async def write_dialogue(
    scenario: Record,
    truth: GroundTruth,
    generation: Generation,
    roles: Sequence[str],
    seed: int,
) -> Record | Dropped:
    """A new dialogue for ``scenario`` (a record with fields) that passes every rule."""
    messages = dialogue_messages(truth.ruleset, scenario, roles)

    async def check(turns: list[Any]) -> tuple[Record, list[Problem]]:
        record = scenario.model_copy(update={"turns": turns})
        return record, await truth.problems(record, None)

    outcome = await _repair_loop(generation, messages, seed, parse_dialogue, check)
    return outcome if isinstance(outcome, Dropped) else outcome[0]
