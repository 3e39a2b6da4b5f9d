"""Guarding user-supplied regular expressions against catastrophic backtracking.

Three layers. When a rule is loaded, patterns are screened: bounded length, valid
syntax, and no repeated group that itself contains a repetition (``(a+)+``,
``(\\w*)*``, ``(x+y?){2,}``), the classic exponential shape, so authors hear about it
at once. When a pattern runs, it runs with the ``regex`` engine's timeout
(:data:`TIMEOUT_S`), because polynomial shapes such as ``.*a.*b`` or ``(a|aa)+`` cannot
all be found statically; and it only sees the first :data:`MAX_TEXT_CHARS` characters.
Patterns use Python ``re`` syntax (the ``regex`` module in its compatible V0 mode).
"""

from __future__ import annotations

import re
from functools import lru_cache

import regex

MAX_PATTERN_CHARS = 300
MAX_TEXT_CHARS = 20_000
TIMEOUT_S = 0.05
_BRACE = re.compile(r"\{(\d*)(,?)(\d*)\}")


def check_pattern(pattern: str) -> None:
    """Raise ValueError when ``pattern`` is too long, invalid or catastrophic-looking."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ValueError(f"pattern is longer than {MAX_PATTERN_CHARS} characters")
    try:
        re.compile(pattern)  # the syntax rule authors know; regex accepts all of it
    except re.error as exc:
        raise ValueError(f"invalid regular expression: {exc}") from exc
    if _has_nested_repetition(pattern):
        raise ValueError(
            "nested repetition such as (a+)+ can take exponential time; "
            "rewrite it without a repeated group that contains a repetition"
        )


class RegexTimeout(Exception):
    """A pattern ran longer than :data:`TIMEOUT_S` on one text."""


@lru_cache(maxsize=512)
def compiled(pattern: str, flags: int = 0) -> regex.Pattern[str]:
    """Compile a screened pattern once (``flags`` are ``re`` flags: I, M, S)."""
    return regex.compile(pattern, _flags(flags) | regex.V0)


def _flags(flags: int) -> int:
    mapping = ((re.I, regex.I), (re.M, regex.M), (re.S, regex.S))
    return sum(new for old, new in mapping if flags & old)


def search(pattern: regex.Pattern[str], text: str) -> regex.Match[str] | None:
    """``pattern.search(text)`` with the timeout; raises :class:`RegexTimeout`."""
    try:
        return pattern.search(text, timeout=TIMEOUT_S)
    except TimeoutError as exc:
        raise RegexTimeout(f"the pattern took longer than {TIMEOUT_S * 1000:.0f} ms") from exc


def bounded(text: str) -> tuple[str, bool]:
    """``text`` cut to :data:`MAX_TEXT_CHARS`, and whether it was cut."""
    return (text[:MAX_TEXT_CHARS], True) if len(text) > MAX_TEXT_CHARS else (text, False)


def _has_nested_repetition(pattern: str) -> bool:
    stack = [False]  # per open group: does it contain an unbounded repetition?
    closed_group: bool | None = None  # flag of the group that just closed, if the last atom was one
    i = 0
    while i < len(pattern):
        char = pattern[i]
        quantifier, width = _quantifier_at(pattern, i)
        if quantifier is not None:
            if closed_group and quantifier:
                return True
            stack[-1] = stack[-1] or quantifier or bool(closed_group)
            closed_group = None
            i += width
            continue
        closed_group = None
        if char == "\\":
            i += 2
            continue
        if char == "[":
            i = _end_of_class(pattern, i)
            continue
        if char == "(":
            stack.append(False)
        elif char == ")" and len(stack) > 1:
            closed_group = stack.pop()
            stack[-1] = stack[-1] or closed_group
        i += 1
    return False


def _quantifier_at(pattern: str, i: int) -> tuple[bool | None, int]:
    """``(unbounded_or_repeating, width)`` for a quantifier at ``i``, or ``(None, 0)``."""
    char = pattern[i]
    if char in "*+":
        return True, _lazy_width(pattern, i + 1, 1)
    if char == "?" and not (i > 0 and pattern[i - 1] == "("):
        return False, _lazy_width(pattern, i + 1, 1)
    if char == "{" and (match := _BRACE.match(pattern, i)) and (match.group(1) or match.group(3)):
        low, comma, high = match.groups()
        repeats = bool(comma and not high) or int(high or low or 0) > 1
        return repeats, _lazy_width(pattern, match.end(), match.end() - i)
    return None, 0


def _lazy_width(pattern: str, after: int, width: int) -> int:
    return width + 1 if after < len(pattern) and pattern[after] in "?+" else width


def _end_of_class(pattern: str, i: int) -> int:
    j = i + 1
    if j < len(pattern) and pattern[j] == "^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j + 1
