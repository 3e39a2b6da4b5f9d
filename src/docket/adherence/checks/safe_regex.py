"""Guarding user-supplied regular expressions against catastrophic backtracking.

Three layers. When a rule is loaded, patterns are screened: bounded length, valid
syntax, and no repeated group that itself contains a repetition (``(a+)+``,
``(\\w*)*``, ``(x+y?){2,}``), the classic exponential shape, so authors hear about it
at once. A small bounded repeat of a group that opens with a literal word is allowed
(``(?:SECTION\\s?\\d+[\\s\\S]*?){4}``), since its repetitions can only start where
the literal occurs. When a pattern runs, it runs with the ``regex`` engine's timeout
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


MAX_BOUNDED_REPEAT = 20
"""Largest count of a bounded repeat of a repeating group that is allowed (see below)."""

_LITERAL_START = re.compile(r"(?:\?:)?[A-Za-z0-9]{2,}(?![*?+{])")


def _has_nested_repetition(pattern: str) -> bool:
    """Whether a repeated group contains a repetition, the shape that can blow up.

    Allowed: a bounded repeat (at most :data:`MAX_BOUNDED_REPEAT`) of a group that opens
    with a literal of two or more characters, as in ``(?:SECTION\\s?\\d+[\\s\\S]*?){4}``:
    every repetition must start at an occurrence of the literal, so the ways to split the
    text are bounded by those occurrences, not by its length. The run-time timeout still
    applies.
    """
    stack: list[tuple[bool, int]] = [(False, -1)]  # per open group: has repetition, "(" index
    closed: tuple[bool, str] | None = None  # the group that just closed: flag, body
    i = 0
    while i < len(pattern):
        char = pattern[i]
        kind, width, count = _quantifier_at(pattern, i)
        if kind is not None:
            repeats_a_repetition = bool(closed and closed[0]) and kind != "optional"
            if repeats_a_repetition and not (
                kind == "bounded" and _safe_bounded(closed[1], count)  # type: ignore[index]
            ):
                return True
            flag = stack[-1][0] or kind != "optional" or bool(closed and closed[0])
            stack[-1] = (flag, stack[-1][1])
            closed = None
            i += width
            continue
        closed = None
        if char == "\\":
            i += 2
            continue
        if char == "[":
            i = _end_of_class(pattern, i)
            continue
        if char == "(":
            stack.append((False, i))
        elif char == ")" and len(stack) > 1:
            flag, start = stack.pop()
            closed = (flag, pattern[start + 1 : i])
            stack[-1] = (stack[-1][0] or flag, stack[-1][1])
        i += 1
    return False


def _safe_bounded(body: str, count: int) -> bool:
    return count <= MAX_BOUNDED_REPEAT and _LITERAL_START.match(body) is not None


def _quantifier_at(pattern: str, i: int) -> tuple[str | None, int, int]:
    """``(kind, width, count)`` of a quantifier at ``i``, or ``(None, 0, 0)``.

    ``kind`` is ``optional`` (``?``, ``{0,1}``, ``{1}``), ``bounded`` (``{n}``, ``{m,n}``;
    ``count`` is n) or ``unbounded`` (``*``, ``+``, ``{m,}``).
    """
    char = pattern[i]
    if char in "*+":
        return "unbounded", _lazy_width(pattern, i + 1, 1), 0
    if char == "?" and not (i > 0 and pattern[i - 1] == "("):
        return "optional", _lazy_width(pattern, i + 1, 1), 1
    if char == "{" and (match := _BRACE.match(pattern, i)) and (match.group(1) or match.group(3)):
        low, comma, high = match.groups()
        width = _lazy_width(pattern, match.end(), match.end() - i)
        if comma and not high:
            return "unbounded", width, 0
        count = int(high or low or 0)
        return ("bounded" if count > 1 else "optional"), width, count
    return None, 0, 0


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
