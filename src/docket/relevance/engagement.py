"""Whether a debate turn after round 1 engaged with the debate or only repeated itself.

A debate is worth its calls only if agents read each other. Each parsed turn of round 2
or later is classed, in this order:

- ``answers``: its reasoning refers to another agent (``agent B``, ``B's``, ``the other
  agent``);
- ``cites``: it cites a sentence another agent cited in the previous round that it had
  not cited itself;
- ``changed``: its label, evidence or the words of its reasoning differ from its own
  previous turn;
- ``repeats``: none of these, i.e. its own previous turn again (case, spacing and
  punctuation aside).

The first three count as engaged. Counts are stored in each judgment's usage
(:data:`LATER_TURNS`, :data:`ENGAGED_TURNS`), so summaries read them without transcripts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

Engagement = Literal["answers", "cites", "changed", "repeats"]
ENGAGED: frozenset[str] = frozenset({"answers", "cites", "changed"})
LATER_TURNS = "later_turns"
"""Usage key: parsed debate turns after round 1."""
ENGAGED_TURNS = "engaged_turns"
"""Usage key: those of them that engaged (answered, cited or changed)."""

_WORDS = re.compile(r"\w+")
_OTHER_SIDE = re.compile(r"\b(?:the\s+other\s+(?:agents?|side|debaters?)|opponents?)\b", re.I)


def classify(
    turn: Mapping[str, Any], own: Mapping[str, Any], others: Sequence[Mapping[str, Any]]
) -> Engagement:
    """How a later-round ``turn`` relates to its agent's ``own`` previous turn and the
    ``others``' previous turns (transcript entries: agent, label, evidence, reasoning)."""
    reasoning = turn.get("reasoning") or ""
    if _refers_to(reasoning, [other["agent"] for other in others]):
        return "answers"
    taken_up = {e for other in others for e in other.get("evidence", ())}
    if taken_up & (set(turn.get("evidence", ())) - set(own.get("evidence", ()))):
        return "cites"
    if _differs(turn, own):
        return "changed"
    return "repeats"


def _refers_to(reasoning: str, names: Iterable[str]) -> bool:
    if _OTHER_SIDE.search(reasoning):
        return True
    for name in names:
        name = re.escape(name)
        mention = rf"\b[Aa]gents?\s+{name}\b|\b{name}['\u2019]s\b"
        if re.search(mention, reasoning):
            return True
    return False


def _differs(turn: Mapping[str, Any], own: Mapping[str, Any]) -> bool:
    if turn.get("label") != own.get("label"):
        return True
    if list(turn.get("evidence", ())) != list(own.get("evidence", ())):
        return True
    return _words(turn.get("reasoning")) != _words(own.get("reasoning"))


def _words(text: str | None) -> list[str]:
    return _WORDS.findall((text or "").casefold())


def engagement_counts(transcript: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """:data:`LATER_TURNS` and :data:`ENGAGED_TURNS` of a transcript's classed turns."""
    classes = [t["engagement"] for t in transcript if t.get("engagement")]
    return {LATER_TURNS: len(classes), ENGAGED_TURNS: sum(c in ENGAGED for c in classes)}


def engagement_share(usages: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
    """``(engaged, later)`` turns summed over judgments' usage dicts."""
    engaged = later = 0
    for usage in usages:
        engaged += usage.get(ENGAGED_TURNS, 0)
        later += usage.get(LATER_TURNS, 0)
    return engaged, later
