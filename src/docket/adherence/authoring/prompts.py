"""Prompts and tolerant reply parsers for the atomizer.

Replies are short JSON: one object per line for rule lists, one object for a
reflection verdict. Parsers raise :class:`ParseError` with a message the model can act
on when re-asked; they never make up a rule.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from docket.adherence.checks import catalogue_text
from docket.adherence.rules.model import TIERS, FmtSpec, Tier
from docket.adherence.rules.scope import Scope
from docket.errors import ParseError

PROMPT_VERSION = "atomize-v1"
_FENCE = re.compile(r"```[a-zA-Z]*\n?(.*?)```", re.S)
_LIST_PREFIX = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_TIER_ALIASES = {
    "format": "fmt",
    "formatting": "fmt",
    "simple": "sim",
    "lexical": "sim",
    "subjective": "sub",
}
_SCOPE_ALIASES = {
    "whole": "record", "dialogue": "record", "conversation": "record", "record": "record",
    "each_turn": "each_turn", "each turn": "each_turn", "turn": "each_turn", "every turn": "each_turn",
    "last_turn": "last_turn", "last turn": "last_turn",
}  # fmt: skip

RULE_FORMAT = (
    '{"text": "<one requirement, one sentence>", "tier": "fmt|sim|sub", '
    '"scope": "record|each_turn|last_turn|role:<role>|field:<name>", "lines": [<first>, <last>], '
    '"check": {"checker": "<name>", "params": {...}}}'
)


@dataclass(frozen=True)
class Candidate:
    """A proposed rule before it is kept: text, tier, scope, optional check, where it is from."""

    text: str
    tier: Tier
    scope: Scope
    check: FmtSpec | None
    section: str
    lines: tuple[int, int]
    note: str | None = None


def system_prompt() -> str:
    """Instructions shared by every atomizer call (tiers, scopes, the checker catalogue)."""
    return f"""You turn a Standard Operating Procedure (SOP) for data annotators into atomic, verifiable rules.
A rule states exactly one constraint. Never add requirements the SOP does not state.

Tiers:
- fmt: formatting that code can check exactly (lengths, counts, turn order, banned characters, links...). A fmt rule MUST have a "check" using one checker of the catalogue below with valid params. Never write code.
- sim: a simple lexical rule a small model can check (greetings, keywords, forbidden topics or words).
- sub: a subjective rule needing judgement (tone, helpfulness, naturalness, relevance).

Scopes: record (the whole record), each_turn, last_turn, role:<role> (every turn of one role, e.g. role:assistant), field:<name> (a named field).
Record-level checkers need scope record.

Checker catalogue (name [level] params -- meaning):
{catalogue_text()}

A rule is one JSON object on one line:
{RULE_FORMAT}"""


def propose_prompt(section_path: str, numbered_text: str) -> str:
    """Ask for the rules of one SOP section (lines are numbered so rules can cite them)."""
    return f"""SOP section: {section_path}
<section>
{numbered_text}
</section>

List every requirement stated in this section as rules, one JSON object per line, and nothing else.
Give "check" only for fmt rules. If the section states no requirement, reply NONE."""


def reflect_prompt(candidate: Candidate, kept: list[tuple[str, Candidate]]) -> str:
    """Ask whether a candidate is atomic and whether it overlaps a kept rule."""
    listing = (
        "\n".join(f"{key}: {c.text} [{c.tier}, {scope_text(c.scope)}]" for key, c in kept)
        or "(none yet)"
    )
    return f"""Rules kept so far:
{listing}

Candidate rule: {candidate.text} [{candidate.tier}, {scope_text(candidate.scope)}]

Reply with one JSON object:
{{"atomic": true|false, "parts": [<rules>], "overlaps": null|"<kept id>", "merged": <rule>|null}}
- atomic: true when the candidate states exactly one constraint.
- parts: only when not atomic: the candidate split into atomic rules, each a rule object as before.
- overlaps: the id of a kept rule that constrains the same thing (semantic overlap), else null.
- merged: only when it overlaps: one rule stating both without redundancy, or null when the kept rule already covers the candidate."""


def fix_check_prompt(text: str, scope: Scope, error: str) -> str:
    """Ask once more for a valid check of a fmt rule."""
    return f"""The fmt rule "{text}" (scope {scope_text(scope)}) has an invalid check: {error}
Reply with only the corrected JSON object {{"checker": "<name>", "params": {{...}}}} using the catalogue, or NONE if no catalogue checker can express this rule."""


def scope_text(scope: Scope) -> str:
    """``role:assistant``, ``field:summary`` or the kind."""
    return (
        f"{scope.kind}:{scope.role or scope.field}"
        if scope.kind in ("role", "field")
        else scope.kind
    )


def strip_fences(text: str) -> str:
    """The inside of Markdown code fences, or the text itself."""
    blocks = _FENCE.findall(text)
    return "\n".join(blocks) if blocks else text


def parse_rule_list(text: str, section: str, lines: tuple[int, int]) -> list[Candidate]:
    """Parse a rule list (JSON lines, a JSON array, or NONE) into candidates.

    Raises:
        ParseError: no rule objects and no NONE, or an object without a usable text,
            tier or scope.
    """
    body = strip_fences(text).strip()
    if body.strip(" .").upper() in ("NONE", "[]", ""):
        if not body:
            raise ParseError("the reply is empty; list the rules or reply NONE", raw=text)
        return []
    items = _json_items(body)
    if not items:
        raise ParseError(
            "no JSON rule objects found; reply with one JSON object per line, or NONE", raw=text
        )
    return [
        candidate_from(item, section, lines, number) for number, item in enumerate(items, start=1)
    ]


def _json_items(body: str) -> list[Any]:
    try:
        whole = json.loads(body)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, list):
        return whole
    if isinstance(whole, dict):
        return (
            whole.get("rules", [whole])
            if isinstance(whole.get("rules", [whole]), list)
            else [whole]
        )
    return _scanned_rules(body)


_DECODER = json.JSONDecoder()


def _scanned_rules(body: str) -> list[dict[str, Any]]:
    """Every complete JSON object with a ``text`` found in ``body``, in order.

    Tolerates what small models write: objects pretty-printed over several lines, list
    markers and prose around them, and an array cut off by the token limit (its complete
    objects are kept, the cut one is dropped).
    """
    items, position = [], body.find("{")
    while position >= 0:
        try:
            value, end = _DECODER.raw_decode(body, position)
        except json.JSONDecodeError:
            position = body.find("{", position + 1)
            continue
        if isinstance(value, dict) and "text" in value:
            items.append(value)
            position = body.find("{", end)
        else:
            position = body.find("{", position + 1)
    return items


def candidate_from(item: Any, section: str, lines: tuple[int, int], number: int = 1) -> Candidate:
    """Build a candidate from one parsed JSON object; ParseError names the object."""
    if not isinstance(item, dict):
        raise ParseError(f"rule {number} is not a JSON object")
    text = item.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ParseError(f"rule {number} has no 'text'")
    tier = _tier(item.get("tier"), number)
    scope = parse_scope(item.get("scope", "record"), number)
    check = item.get("check") if tier == "fmt" else None
    spec = _spec(check)
    return Candidate(
        " ".join(text.split()), tier, scope, spec, section, _lines(item.get("lines"), lines)
    )


def _tier(value: Any, number: int) -> Tier:
    tier = str(value or "").strip().lower()
    tier = _TIER_ALIASES.get(tier, tier)
    if tier not in TIERS:
        raise ParseError(f"rule {number} has tier {value!r}; use fmt, sim or sub")
    return tier  # type: ignore[return-value]


def parse_scope(value: Any, number: int = 1) -> Scope:
    """A scope from ``"role:assistant"``-style text or a ``{"kind": ...}`` object."""
    try:
        if isinstance(value, dict):
            return Scope.model_validate(value)
        text = str(value).strip()
        kind, _, arg = text.partition(":")
        kind = kind.strip().lower()
        if kind in ("role", "field") and arg.strip():
            return Scope(kind=kind, **{kind: arg.strip()})  # type: ignore[arg-type]
        return Scope(kind=_SCOPE_ALIASES[text.lower()])  # type: ignore[arg-type]
    except (KeyError, ValidationError, TypeError) as exc:
        raise ParseError(
            f"rule {number} has scope {value!r}; use record, each_turn, last_turn, role:<role> or field:<name>"
        ) from exc


def _spec(check: Any) -> FmtSpec | None:
    # An unusable spec is not a parse failure: the rule goes through the spec re-ask.
    if isinstance(check, dict) and isinstance(check.get("checker"), str):
        params = check.get("params") if isinstance(check.get("params"), dict) else {}
        return FmtSpec(checker=check["checker"], params=params)
    return None


def _lines(value: Any, section_lines: tuple[int, int]) -> tuple[int, int]:
    low, high = section_lines
    if isinstance(value, int):
        value = [value, value]
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) for v in value):
        start, end = value
        if low <= start <= end <= high:
            return start, end
    return section_lines


def parse_check(text: str) -> FmtSpec | None:
    """A check object from a fix reply; None for NONE. ParseError otherwise."""
    body = strip_fences(text).strip()
    if body.strip(" .").upper() == "NONE":
        return None
    start, end = body.find("{"), body.rfind("}")
    try:
        data = json.loads(body[start : end + 1]) if start >= 0 else None
    except json.JSONDecodeError as exc:
        raise ParseError(f"not a JSON object ({exc.msg})", raw=text) from exc
    spec = _spec(data)
    if spec is None:
        raise ParseError('expected {"checker": ..., "params": {...}} or NONE', raw=text)
    return spec


@dataclass(frozen=True)
class Verdict:
    """A parsed reflection: atomic or split into parts; overlapping a kept rule or not."""

    atomic: bool
    parts: tuple[Candidate, ...] = ()
    overlaps: str | None = None
    merged: Candidate | None = None


def parse_verdict(
    text: str, candidate: Candidate, kept_keys: set[str], section_lines: tuple[int, int]
) -> Verdict:
    """Parse a reflection reply; parts and merged rules inherit the candidate's section.

    Raises:
        ParseError: not one JSON object, ``atomic`` missing, parts missing for a
            non-atomic candidate, or ``overlaps`` naming no kept rule.
    """
    body = strip_fences(text)
    start, end = body.find("{"), body.rfind("}")
    try:
        data = json.loads(body[start : end + 1]) if start >= 0 else None
    except json.JSONDecodeError as exc:
        raise ParseError(f"not one JSON object ({exc.msg})", raw=text) from exc
    if not isinstance(data, dict) or not isinstance(data.get("atomic"), bool):
        raise ParseError('expected a JSON object with "atomic": true or false', raw=text)
    where = (candidate.section, section_lines)
    overlaps = data.get("overlaps")
    if overlaps is not None and str(overlaps) not in kept_keys:
        raise ParseError(
            f"'overlaps' must be null or one of the kept ids {sorted(kept_keys)}", raw=text
        )
    if not data["atomic"]:
        parts = data.get("parts")
        if not isinstance(parts, list) or not parts:
            raise ParseError("a non-atomic candidate needs 'parts'", raw=text)
        return Verdict(False, tuple(candidate_from(p, *where, n) for n, p in enumerate(parts, 1)))
    merged = data.get("merged")
    merged_candidate = candidate_from(merged, *where) if overlaps is not None and merged else None
    return Verdict(
        True, overlaps=str(overlaps) if overlaps is not None else None, merged=merged_candidate
    )
