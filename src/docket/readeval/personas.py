"""Annotator personas of RE-AD-Eval and the seeded draws of persona, tier and rule.

The RE-AD paper simulates three annotator personas with tier-specific error probabilities
(fmt 5-25%, sim 8-35%, sub 12-50%). Every sample holds exactly one violation, so the
probabilities are used as relative weights: the tier of a sample's violation is drawn in
proportion to the persona's error probabilities of the tiers that can be injected.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator

from docket.adherence.rules.model import TIERS, Tier

PAPER_RANGES: dict[str, tuple[float, float]] = {
    "fmt": (0.05, 0.25),
    "sim": (0.08, 0.35),
    "sub": (0.12, 0.50),
}
"""The per-tier error-probability ranges reported in the RE-AD paper."""


class Persona(BaseModel):
    """An annotator persona.

    Attributes:
        name: e.g. ``expert``.
        errors: error probability per tier (``fmt``, ``sim``, ``sub``), each in [0, 1].
        weight: relative frequency of the persona among samples.
        style: how the persona's mistakes look (goes into the generator's prompt).
        excess: how far past a limit a deterministic mutation goes, as (low, high) units.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    errors: dict[Tier, float]
    weight: float = Field(1.0, gt=0)
    style: str = ""
    excess: tuple[int, int] = (1, 3)

    @model_validator(mode="after")
    def _probabilities(self) -> Persona:
        for tier in TIERS:
            value = self.errors.get(tier)
            if value is None or not 0.0 <= value <= 1.0:
                raise ValueError(f"persona '{self.name}': errors['{tier}'] must be in [0, 1]")
        return self


DEFAULT_PERSONAS: tuple[Persona, ...] = (
    Persona(
        name="expert",
        errors={"fmt": 0.05, "sim": 0.08, "sub": 0.12},
        style="an experienced annotator: the mistake is rare, subtle and easy to overlook",
        excess=(1, 2),
    ),
    Persona(
        name="intermediate",
        errors={"fmt": 0.15, "sim": 0.20, "sub": 0.30},
        style="a competent but sometimes careless annotator: the mistake is noticeable",
        excess=(2, 8),
    ),
    Persona(
        name="novice",
        errors={"fmt": 0.25, "sim": 0.35, "sub": 0.50},
        style="an annotator new to the guidelines: the mistake is obvious",
        excess=(8, 25),
    ),
)
"""Expert, intermediate and novice, with values inside the paper's ranges."""


def outside_paper_ranges(personas: Sequence[Persona]) -> list[str]:
    """Warnings for error probabilities outside the paper's per-tier ranges."""
    notes = []
    for persona in personas:
        for tier, (low, high) in PAPER_RANGES.items():
            value = persona.errors[tier]  # type: ignore[index]
            if not low <= value <= high:
                notes.append(
                    f"persona '{persona.name}': {tier} error probability {value:g} is outside "
                    f"the paper's range {low:g}-{high:g}"
                )
    return notes


def parse_persona(text: str) -> Persona:
    """Parse ``NAME=FMT,SIM,SUB`` (the CLI's ``--persona`` option).

    Raises:
        ValueError: the text does not have that shape or a value is not a probability.
    """
    name, sep, values = text.partition("=")
    parts = values.split(",")
    if not sep or not name.strip() or len(parts) != 3:
        raise ValueError(f"'{text}' is not NAME=FMT,SIM,SUB (e.g. novice=0.25,0.35,0.5)")
    try:
        errors = dict(zip(TIERS, (float(p) for p in parts), strict=True))
    except ValueError as exc:
        raise ValueError(f"'{text}': the probabilities must be numbers") from exc
    known = {p.name: p for p in DEFAULT_PERSONAS}.get(name.strip())
    base = {"style": known.style, "excess": known.excess} if known else {}
    return Persona(name=name.strip(), errors=errors, **base)  # type: ignore[arg-type]


def draw_persona(rng: random.Random, personas: Sequence[Persona]) -> Persona:
    """One persona, in proportion to the personas' weights."""
    return rng.choices(list(personas), weights=[p.weight for p in personas])[0]


def draw_tier(rng: random.Random, persona: Persona, tiers: Sequence[Tier]) -> Tier | None:
    """The tier of the violation, in proportion to the persona's error probabilities.

    Only ``tiers`` (those with an injectable rule for the record) take part; None when
    none of them has a positive probability.
    """
    weights = [persona.errors[tier] for tier in tiers]
    if not tiers or sum(weights) <= 0:
        return None
    return rng.choices(list(tiers), weights=weights)[0]


def sample_rng(seed: int, index: int) -> random.Random:
    """The random generator of sample ``index``: independent of the other samples' outcomes."""
    return random.Random(f"readeval:{seed}:{index}")
