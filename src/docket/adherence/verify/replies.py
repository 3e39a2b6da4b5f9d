"""Parsers for the LLM tiers' replies. Anything not clearly PASS or FAIL raises ParseError.

A parse failure is re-asked once by :meth:`docket.llm.Model.generate_parsed`, then becomes
``needs_review``; it is never read as a pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from docket.errors import ParseError

_SIM_HEAD = re.compile(r"^(?:verdict\s*:\s*)?(PASS|FAIL)\b\s*[:.\-–]?\s*(.*)$", re.I)
# The verdict line must hold the verdict and nothing else: a reply that merely copies the
# format line "VERDICT: PASS or VERDICT: FAIL" (or echoes the prompt) is not a verdict.
_SUB_VERDICT = re.compile(r"^verdict\s*:\s*(PASS|FAIL)\s*[.!]?$", re.I)
_ANY_HEAD = re.compile(r"^(PASS|FAIL)\b", re.I)
_TAGGED = re.compile(r"^(QUOTE|FIX|REASONING)\s*:\s*(.*)$", re.I)
_HOLISTIC = re.compile(
    r"^\[?([A-Za-z0-9_.\-]+)\]?\s*[:\-–]?\s*(PASS|FAIL)\b\s*[:.\-–]?\s*(.*)$", re.I
)
_NONE = {"", "none", "n/a", "-", "null"}


@dataclass(frozen=True)
class Judgement:
    """A parsed verdict on one rule."""

    passed: bool
    reason: str = ""
    quote: str = ""
    fix: str = ""


def _clean(line: str) -> str:
    # Models like to decorate: "**PASS**", "- FAIL: ...", "`PASS`".
    return line.strip().strip("*`_#>").lstrip("-• ").strip().strip("*`_")


def _lines(text: str) -> list[str]:
    return [cleaned for line in text.splitlines() if (cleaned := _clean(line))]


def _tag(lines: Iterable[str], name: str) -> str:
    for line in lines:
        match = _TAGGED.match(line)
        if match and match.group(1).upper() == name:
            value = match.group(2).strip().strip('"“”')
            return "" if value.lower() in _NONE else value
    return ""


def parse_sim(text: str) -> Judgement:
    """``PASS`` or ``FAIL: reason`` on the first line, then optional QUOTE/FIX lines."""
    lines = _lines(text)
    if not lines:
        raise ParseError("empty reply; expected PASS or FAIL: <reason>", raw=text)
    match = _SIM_HEAD.match(lines[0])
    if not match:
        raise ParseError("the first line must be PASS or FAIL: <reason>", raw=text)
    heads = {m.group(1).upper() for line in lines if (m := _ANY_HEAD.match(line))}
    if len(heads) > 1:
        raise ParseError("the reply contains both a PASS and a FAIL line", raw=text)
    passed = match.group(1).upper() == "PASS"
    rest = lines[1:]
    return Judgement(
        passed=passed,
        reason=match.group(2).strip(),
        quote="" if passed else _tag(rest, "QUOTE"),
        fix="" if passed else _tag(rest, "FIX"),
    )


def parse_sub(text: str) -> Judgement:
    """Reasoning first, then ``VERDICT: PASS|FAIL`` and optional QUOTE/FIX lines."""
    lines = _lines(text)
    verdicts = [i for i, line in enumerate(lines) if _SUB_VERDICT.match(line)]
    if not verdicts:
        raise ParseError("no line 'VERDICT: PASS' or 'VERDICT: FAIL' found", raw=text)
    found = {_SUB_VERDICT.match(lines[i]).group(1).upper() for i in verdicts}  # type: ignore[union-attr]
    if len(found) > 1:
        raise ParseError("the reply gives both VERDICT: PASS and VERDICT: FAIL", raw=text)
    last = verdicts[-1]
    reasoning = " ".join(lines[:last])
    reasoning = re.sub(r"^REASONING\s*:\s*", "", reasoning, flags=re.I).strip()
    passed = found == {"PASS"}
    tail = lines[last + 1 :]
    return Judgement(
        passed=passed,
        reason=reasoning,
        quote="" if passed else _tag(tail, "QUOTE"),
        fix="" if passed else _tag(tail, "FIX"),
    )


def parse_holistic(text: str, rule_ids: Iterable[str]) -> dict[str, Judgement]:
    """One ``[id] PASS`` / ``[id] FAIL: reason`` line per rule; unknown ids are ignored.

    Rules missing from the reply, or given contradicting verdicts, are left out of the
    result (the caller marks them needs_review). A reply naming no known rule raises.
    """
    known = set(rule_ids)
    seen: dict[str, Judgement] = {}
    contradicted: set[str] = set()
    for line in _lines(text):
        match = _HOLISTIC.match(line)
        if not match or match.group(1) not in known:
            continue
        rule_id, passed, reason = match.group(1), match.group(2).upper() == "PASS", match.group(3)
        if passed and reason.strip(" .!"):
            continue  # "PASS" followed by more text is not a clean verdict
        judgement = Judgement(passed=passed, reason=reason.strip())
        if rule_id in seen and seen[rule_id].passed != judgement.passed:
            contradicted.add(rule_id)
        seen.setdefault(rule_id, judgement)
    if not seen:
        raise ParseError("no line of the form '[rule id] PASS' or '[rule id] FAIL: ...'", raw=text)
    return {rule_id: j for rule_id, j in seen.items() if rule_id not in contradicted}
