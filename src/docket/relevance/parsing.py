"""Tolerant readers for model replies, strict about the label.

The protocol asks for a JSON object. A reply may wrap it in a code fence or in prose (the
first JSON object is read), leave out evidence or reasoning, or, from a model that ignores
the format, give ``label: ...`` lines in any case and markdown. A reply cut off inside its
JSON still yields its label when the ``"label"`` member is complete, with the reasoning
written so far. A reply without exactly one recognisable label, or whose reasoning is
empty, raises :class:`ParseError`: it is never turned into a default label, and a turn
that gives no reason is no turn (the Model asks once more, as for a missing label).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from docket.errors import ParseError
from docket.relevance.evidence import parse_evidence_ids

_LABEL_WORDS = re.compile(r"not[\s_-]+relevant|non[\s_-]?relevant|irrelevant|relevant", re.I)
_LABEL_START = re.compile(rf"(?:{_LABEL_WORDS.pattern})\b", re.I)
# Markdown, quotes and repeated keys before a label value: '**LABEL:** "relevant"'.
_LEADING = re.compile(r"^(?:[\W_]*label\s*[:=\-])*[\W_]*", re.I)
_KEYS = {
    "label": ("label", "verdict", "judgment", "judgement", "answer"),
    "grade": ("grade", "score", "final_score"),
    "evidence": ("evidence", "sentences", "ids"),
    "reasoning": ("reasoning", "reason", "rationale", "explanation"),
}
_FIELD_BY_KEY = {name: field for field, names in _KEYS.items() for name in names}
_ALL_KEYS = "|".join(_FIELD_BY_KEY)
_INLINE_KEY = re.compile(rf"\s+(?=(?:{_ALL_KEYS})\s*[:=])", re.I)
_GRADE = re.compile(r"(?:final\s*score|grade)\s*(?:\(O\))?\s*[:=\-]?\s*\**\s*(\d+)", re.I)
_YES_NO = re.compile(r"^\W*(?:answer\W*)*(yes|no)\b", re.I)


@dataclass(frozen=True)
class TurnReply:
    """A parsed agent (or judge) reply; evidence ids are not yet range-checked."""

    label: int
    evidence: tuple[int, ...] = ()
    reasoning: str = ""


def parse_turn(text: str) -> TurnReply:
    """Read ``LABEL``, ``EVIDENCE`` and ``REASONING`` from a reply.

    The label value must start with a label word (``relevant``, ``irrelevant``, ``not
    relevant``, ``non-relevant``; case, markdown and repeated ``LABEL:`` keys aside). Among
    several LABEL lines, those without a label word are skipped.

    Raises:
        ParseError: no label, an ambiguous value such as ``relevant or irrelevant``, LABEL
            lines that disagree, or an empty reasoning.
    """
    fields = _json_fields(text) or _line_fields(text)
    values = fields.get("label") or []
    if not values:
        raise ParseError("no LABEL line found", raw=text)
    labels = {label for label in (_label_of(v, text) for v in values) if label is not None}
    if len(labels) != 1:
        reason = "no label in the LABEL line" if not labels else "LABEL lines disagree"
        raise ParseError(f"{reason}: expected relevant or irrelevant", raw=text)
    evidence = fields.get("evidence") or ""
    return TurnReply(
        label=labels.pop(),
        evidence=tuple(parse_evidence_ids(evidence)),
        reasoning=reasoning_of(fields, text),
    )


def reasoning_of(fields: dict[str, Any], raw: str) -> str:
    """The reply's reasoning, stripped.

    Raises:
        ParseError: the reasoning is missing, empty or only whitespace.
    """
    reasoning = fields.get("reasoning")
    reasoning = "" if reasoning is None else str(reasoning).strip()
    if not reasoning:
        raise ParseError('the "reasoning" is empty: give 1-3 sentences of reasoning', raw=raw)
    return reasoning


def label_from_value(value: Any, *, raw: str = "") -> int:
    """Map a label value (``relevant``/``irrelevant``, JSON 1/0 or true/false) to 1/0.

    Raises:
        ParseError: the value does not start with a label word, or names both labels.
    """
    label = _label_of(value, raw)
    if label is None:
        raise ParseError(
            f"no label in '{str(value)[:40]}': expected relevant or irrelevant", raw=raw
        )
    return label


def _label_of(value: Any, raw: str) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value if value in (0, 1) else None
    text = _LEADING.sub("", str(value))
    match = _LABEL_START.match(text)
    if not match:
        return None
    label = _word_label(match.group(0))
    if any(_word_label(m.group(0)) != label for m in _LABEL_WORDS.finditer(text)):
        raise ParseError(f"both labels in '{str(value)[:40]}'", raw=raw)
    return label


def _word_label(word: str) -> int:
    return 1 if word.lower() == "relevant" else 0


def _clean(text: str) -> str:
    text = re.sub(r"[*_`]{1,3}", "", text)
    return _INLINE_KEY.sub("\n", text)


def _line_fields(text: str) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    labels: list[str] = []
    for line in _clean(text).splitlines():
        match = re.match(r"^[\s#>\-]*([A-Za-z]+)\s*[:=]\s*(.*)$", line)
        if not match:
            continue
        field, value = _field_of(match.group(1)), match.group(2).strip()
        if field == "label":
            labels.append(value)
        elif field and field not in fields:
            fields[field] = value
    if labels:
        fields["label"] = labels
    return fields


def _json_fields(text: str) -> dict[str, Any]:
    for data in json_objects(text):
        fields: dict[str, Any] = {}
        for key, value in data.items():
            field = _field_of(str(key))
            if field and field not in fields:
                fields[field] = [value] if field == "label" else value
        if fields:
            return fields
    return _truncated_json_fields(text)


def json_objects(text: str) -> Iterator[dict[str, Any]]:
    """Every top-level JSON object in ``text``, in order; code fences and prose around
    them are skipped. The replies' fields come from the first object with a known key."""
    decoder = json.JSONDecoder()
    position = 0
    while (start := text.find("{", position)) >= 0:
        try:
            data, end = decoder.raw_decode(text, start)
        except ValueError:
            position = start + 1
            continue
        if isinstance(data, dict):
            yield data
        position = end


_JSON_MEMBER = re.compile(
    r'"(label|grade|evidence|reasoning)"\s*:\s*("(?:[^"\\]|\\.)*"|\d+|\[[^\]]*\])'
)
# A "reasoning" string that the end of the reply cut off: its text so far.
_CUT_REASONING = re.compile(r'"reasoning"\s*:\s*"((?:[^"\\]|\\.)*)(?:\\)?$')


def _truncated_json_fields(text: str) -> dict[str, Any]:
    # A reply that ran out of tokens inside "reasoning" still holds complete members
    # before it; only members whose value is complete are read, and the reasoning so far.
    fields: dict[str, Any] = {}
    for key, raw in _JSON_MEMBER.findall(text):
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        fields.setdefault(key, [value] if key == "label" else value)
    if fields and "reasoning" not in fields and (cut := _CUT_REASONING.search(text.rstrip())):
        fields["reasoning"] = _unescape(cut.group(1))
    return fields


def _unescape(partial: str) -> str:
    try:
        return json.loads(f'"{partial}"')
    except ValueError:  # an escape cut in half, e.g. "\u00"
        return partial


def _field_of(key: str) -> str | None:
    return _FIELD_BY_KEY.get(key.strip().lower())


@dataclass(frozen=True)
class GradeReply:
    """A parsed graded reply (0-3); evidence ids are not yet range-checked."""

    grade: int
    evidence: tuple[int, ...] = ()
    reasoning: str = ""


def parse_grade(text: str) -> GradeReply:
    """Read a 0-3 grade from a JSON reply (``grade`` or ``score``), or a ``final score: n``
    or ``grade: n`` line (the text before it is the reasoning).

    Raises:
        ParseError: no grade, a grade outside 0-3, or no reasoning.
    """
    fields = _json_fields(text)
    value = fields.get("grade")
    if value is None:
        plain = text.replace("*", "")
        matches = list(_GRADE.finditer(plain))
        if not matches:
            raise ParseError('no "grade" found', raw=text)
        value = matches[-1].group(1)
        # UMBRELA's line form: the lines before the score are its reasoning (M: 2, T: 1).
        fields = {"reasoning": plain[: matches[-1].start()].strip(" \n#")}
    try:
        grade = int(value)
    except (TypeError, ValueError):
        raise ParseError(f"grade '{str(value)[:20]}' is not a number 0-3", raw=text) from None
    if not 0 <= grade <= 3:
        raise ParseError(f"grade {grade} is outside 0-3", raw=text)
    return GradeReply(
        grade=grade,
        evidence=tuple(parse_evidence_ids(fields.get("evidence") or "")),
        reasoning=reasoning_of(fields, text),
    )


def parse_yes_no(text: str) -> int:
    """Read a leading ``yes`` (1) or ``no`` (0), after optional ``Answer:`` words.

    Anything else raises ParseError.
    """
    match = _YES_NO.match(re.sub(r"[*_`]", "", text))
    if not match:
        raise ParseError("expected the answer yes or no", raw=text)
    return 1 if match.group(1).lower() == "yes" else 0
