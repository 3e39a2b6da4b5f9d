"""The registry of deterministic mutation operators for ``fmt`` rules, and text helpers.

A mutation operator breaks one catalogue checker on purpose: ``word_count`` with a
``max`` is broken by padding a turn past the limit, ``urls`` with ``present: false`` by
inserting a URL, and so on. Operators are plain functions registered per checker; a
text-level operator gets one text (a turn or a field) and returns the changed text, a
record-level operator gets the whole record. Either returns None when it does not apply
(e.g. there is no keyword to remove). Whether the mutation really broke the intended rule,
and only that rule, is checked afterwards by running every ``fmt`` rule.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from docket.adherence.checks import CATALOGUE
from docket.readeval.personas import Persona
from docket.text import sentence_ends

Level = Literal["text", "record"]

FILLER = (
    "I just want to be sure that everything here is clear.",
    "Thank you for taking the time to look at this.",
    "That should cover the main part of the question.",
    "Please take a moment to read this through.",
    "There is nothing else unusual about the situation.",
    "Everything else stays exactly the same as before.",
    "This is simply how the process usually works.",
    "It only takes a little while to sort out.",
)
"""Neutral sentences used to pad a text (no numbers, links, brackets or capitals inside)."""


@dataclass(frozen=True)
class MutationContext:
    """What an operator may draw on: the sample's random generator and its persona."""

    rng: random.Random
    persona: Persona

    def excess(self) -> int:
        """How far past a limit to go (a persona's mistakes range from slight to gross)."""
        low, high = self.persona.excess
        return self.rng.randint(low, high)


@dataclass(frozen=True)
class Operator:
    """One mutation operator.

    Attributes:
        name: ``checker.operation``, e.g. ``word_count.pad``; stored with each sample.
        checker: the catalogue checker it breaks.
        level: ``text`` (gets one text) or ``record`` (gets the whole record).
        fn: ``fn(text_or_record, params, ctx)`` returning the mutated value or None.
        applies: whether the operator fits the rule's parameters (e.g. needs a ``max``).
        doc: what it does, in a few words.
    """

    name: str
    checker: str
    level: Level
    fn: Callable[[Any, Any, MutationContext], Any]
    applies: Callable[[Any], bool]
    doc: str


OPERATORS: dict[str, list[Operator]] = {}
"""Operators by checker name; filled by ``ops_text`` and ``ops_record`` at import."""


def operator(
    checker: str, operation: str, *, when: Callable[[Any], bool] | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as operator ``checker.operation``."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        doc = (fn.__doc__ or "").strip().split("\n")[0]
        level = CATALOGUE[checker].level
        found = Operator(
            f"{checker}.{operation}", checker, level, fn, when or (lambda _p: True), doc
        )
        OPERATORS.setdefault(checker, []).append(found)
        return fn

    return register


def has_high(params: Any) -> bool:
    """The bounds have an upper limit (``max`` or ``exact``)."""
    return params.high is not None


def has_positive_low(params: Any) -> bool:
    """The bounds have a lower limit above zero (``min`` or ``exact``)."""
    return bool(params.low)


def boundaries(text: str) -> list[int]:
    """Offsets after each sentence (never 0), where a sentence can be inserted."""
    ends = [match.end() for match in sentence_ends(text)]
    return sorted({*ends, len(text.rstrip())} - {0}) or [len(text)]


def splice(text: str, position: int, insert: str) -> str:
    """``insert`` at ``position`` with single spaces around it."""
    head, tail = text[:position].rstrip(), text[position:].lstrip()
    return " ".join(part for part in (head, insert, tail) if part)


def insert_sentence(text: str, sentence: str, ctx: MutationContext) -> str:
    """``sentence`` inserted at a random sentence boundary of ``text``."""
    return splice(text, ctx.rng.choice(boundaries(text)), sentence)


def pad(
    text: str,
    done: Callable[[str], bool],
    ctx: MutationContext,
    pieces: tuple[str, ...] = FILLER,
    limit: int = 400,
) -> str | None:
    """Insert filler sentences at one random boundary until ``done(text)``; None if never."""
    position = ctx.rng.choice(boundaries(text))
    order = list(pieces)
    ctx.rng.shuffle(order)
    block: list[str] = []
    for index in range(limit):
        if block:
            candidate = splice(text, position, " ".join(block))
            if done(candidate):
                return candidate
        block.append(order[index % len(order)])
    return None


def tidy(text: str) -> str:
    """Collapse the double spaces and space-before-punctuation a deletion leaves behind."""
    lines = [" ".join(line.split()) for line in text.split("\n")]
    out = "\n".join(lines)
    for mark in (".", ",", "!", "?", ";", ":"):
        out = out.replace(f" {mark}", mark)
    return out.strip()
