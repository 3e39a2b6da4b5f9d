"""Mutation operators for record-level checkers: turn counts, role order, repeats, fields."""

from __future__ import annotations

import math
from typing import Any

from docket.adherence.record import Record, Turn
from docket.readeval.operators import MutationContext, has_high, has_positive_low, operator

EXTRA_EXCHANGES = (
    ("I have one more small question about this.", "Of course, please go ahead and ask."),
    ("Could you also tell me what happens next?", "Certainly, I will explain the next step."),
    ("Is there anything I need to bring with me?", "No, you do not need to bring anything."),
    ("Will I get a confirmation of this?", "Yes, you will receive a confirmation shortly."),
    ("Can I change my mind about this later?", "Yes, you can change it later if you need to."),
    ("Do I need to do anything else today?", "No, there is nothing else to do today."),
    ("How will I know that it has worked?", "You will see the change in your account soon."),
    ("Is this the same for every journey?", "Yes, it works the same way for every journey."),
    ("Sorry, could you say that once more?", "Of course, I am happy to repeat it."),
    ("And who should I ask if it goes wrong?", "You can come back to us here at any time."),
    ("Does that apply to my partner as well?", "Yes, the same applies to your partner."),
    (
        "Okay, and is there a deadline for that?",
        "There is no strict deadline, but sooner is better.",
    ),
)
"""Neutral (first speaker, second speaker) exchanges inserted to lengthen a dialogue."""


def _with_turns(record: Record, turns: list[Turn]) -> Record:
    return record.model_copy(update={"turns": turns})


def role_cycle(record: Record) -> list[str]:
    """The speakers in the order of their first turns (the dialogue's cycle)."""
    roles: list[str] = []
    for turn in record.turns:
        if turn.role in roles:
            break
        roles.append(turn.role)
    return roles


def _cycle_starts(record: Record, width: int, inner: bool) -> list[int]:
    """Positions at the start of a cycle; ``inner`` keeps the first and last cycle in place."""
    length = len(record.turns)
    starts = list(range(0, length + 1, width))
    middle = [p for p in starts if width <= p <= length - width] if inner else []
    return middle or starts


def _exchange(roles: list[str], texts: tuple[str, str]) -> list[Turn]:
    return [Turn(role=role, text=texts[min(i, 1)]) for i, role in enumerate(roles)]


def _counted(record: Record, role: str | None) -> int:
    return sum(1 for turn in record.turns if role in (None, turn.role))


@operator("turn_count", "add-turns", when=has_high)
def turn_count_add(record: Record, params: Any, ctx: MutationContext) -> Record | None:
    """Insert whole exchanges in the middle of the dialogue, past the maximum number of turns."""
    roles = role_cycle(record)
    per_cycle = 1 if params.role else len(roles)
    if not roles or (params.role and params.role not in roles):
        return None
    over = params.high - _counted(record, params.role)
    needed = max(1, math.ceil((over + 1) / per_cycle))
    wanted = max(needed, math.ceil((over + ctx.excess()) / per_cycle))
    cycles = min(wanted, len(EXTRA_EXCHANGES))
    if cycles < needed:
        return None
    at = ctx.rng.choice(_cycle_starts(record, len(roles), inner=True))
    block = [
        t for texts in ctx.rng.sample(EXTRA_EXCHANGES, cycles) for t in _exchange(roles, texts)
    ]
    return _with_turns(record, record.turns[:at] + block + record.turns[at:])


@operator("turn_count", "remove-turns", when=has_positive_low)
def turn_count_remove(record: Record, params: Any, ctx: MutationContext) -> Record | None:
    """Delete whole exchanges from the dialogue, below the minimum number of turns."""
    roles = role_cycle(record)
    per_cycle = 1 if params.role else len(roles)
    count = _counted(record, params.role)
    cycles = math.ceil((count - params.low + 1) / per_cycle) if roles else 0
    width = cycles * len(roles)
    if cycles <= 0 or width > len(record.turns):
        return None
    starts = [p for p in _cycle_starts(record, len(roles), False) if p + width <= len(record.turns)]
    at = ctx.rng.choice(starts)
    return _with_turns(record, record.turns[:at] + record.turns[at + width :])


@operator("role_alternation", "relabel")
def alternation_relabel(record: Record, params: Any, ctx: MutationContext) -> Record | None:
    """Give one turn to the wrong speaker."""
    if not record.turns:
        return None
    index = ctx.rng.randrange(len(record.turns))
    others = [role for role in params.roles if role != record.turns[index].role]
    turns = list(record.turns)
    turns[index] = Turn(role=ctx.rng.choice(others), text=turns[index].text)
    return _with_turns(record, turns)


@operator("role_alternation", "swap")
def alternation_swap(record: Record, params: Any, ctx: MutationContext) -> Record | None:
    """Swap two neighbouring turns of different speakers."""
    pairs = [
        i for i in range(len(record.turns) - 1) if record.turns[i].role != record.turns[i + 1].role
    ]
    if not pairs:
        return None
    index = ctx.rng.choice(pairs)
    turns = list(record.turns)
    turns[index], turns[index + 1] = turns[index + 1], turns[index]
    return _with_turns(record, turns)


@operator("role_alternation", "drop-turn")
def alternation_drop(record: Record, params: Any, ctx: MutationContext) -> Record | None:
    """Delete one turn in the middle, so that one speaker talks twice in a row."""
    if len(record.turns) < 3:
        return None
    index = ctx.rng.randrange(1, len(record.turns) - 1)
    return _with_turns(record, record.turns[:index] + record.turns[index + 1 :])


@operator("no_repeated_turns", "copy-turn")
def repeat_copy(record: Record, params: Any, ctx: MutationContext) -> Record | None:
    """Replace a later turn's text by an earlier turn of the same speaker."""
    pairs = [
        (i, j)
        for j, later in enumerate(record.turns)
        for i, earlier in enumerate(record.turns[:j])
        if earlier.role == later.role and params.role in (None, later.role)
    ]
    if not pairs:
        return None
    earlier, later = ctx.rng.choice(pairs)
    turns = list(record.turns)
    turns[later] = Turn(role=turns[later].role, text=turns[earlier].text)
    return _with_turns(record, turns)


@operator("no_repeated_turns", "repeat-exchange")
def repeat_exchange(record: Record, params: Any, ctx: MutationContext) -> Record | None:
    """Insert a copy of one whole exchange right after it."""
    roles = role_cycle(record)
    width = len(roles)
    starts = [p for p in range(0, len(record.turns) - width + 1, width)]
    if not roles or not starts:
        return None
    at = ctx.rng.choice(starts)
    block = [t.model_copy() for t in record.turns[at : at + width]]
    return _with_turns(record, record.turns[: at + width] + block + record.turns[at + width :])


@operator("fields_required", "drop-field")
def fields_drop(record: Record, params: Any, ctx: MutationContext) -> Record | None:
    """Delete one of the required fields."""
    present = [name for name in params.names if name in record.fields]
    if not present:
        return None
    name = ctx.rng.choice(present)
    return record.model_copy(
        update={"fields": {k: v for k, v in record.fields.items() if k != name}}
    )


@operator("fields_required", "blank-field", when=lambda p: p.non_empty)
def fields_blank(record: Record, params: Any, ctx: MutationContext) -> Record | None:
    """Empty one of the required fields."""
    present = [name for name in params.names if record.fields.get(name, "").strip()]
    if not present:
        return None
    return record.model_copy(update={"fields": {**record.fields, ctx.rng.choice(present): ""}})
