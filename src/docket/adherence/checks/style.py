"""Markup and style checks: letter case, banned punctuation, lists, highlights, placeholders."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

import regex
from pydantic import Field

from docket.adherence.checks.base import Bounds, CheckOutcome, Params, checker
from docket.adherence.checks.counts import WORD, count_outcome

# The patterns the checkers count with, public so that RE-AD-Eval's mutations count the same.
NUMBERED = re.compile(r"^[ \t]*(\d+)[.)][ \t]+\S", re.M)
HIGHLIGHT = re.compile(
    r"(?<!\*)\*\*(?![\s*])[^*\n]+?(?<![\s*])\*\*(?!\*)"  # **bold**
    r"|(?<![*\w])\*(?![\s*])[^*\n]+?(?<![\s*])\*(?![*\w])"  # *italic*
)
PLACEHOLDER = re.compile(r"\[[^\[\]\n]{1,60}\](?!\()")  # [name], but not a [link](url)
_UPPER, _LOWER = regex.compile(r"\p{Lu}|\p{Lt}"), regex.compile(r"\p{Ll}")
_MINOR_WORDS = frozenset(
    ["a", "an", "and", "as", "at", "but", "by", "for", "in", "of", "on", "or", "the", "to", "with"]
)


class CaseParams(Params):
    """``case``: ``lower`` (no capital letters), ``upper`` (no small letters) or ``title``
    (every word capitalised; short function words such as 'of' may stay small)."""

    case: Literal["lower", "upper", "title"]


@checker("letter_case", CaseParams)
def letter_case(text: str, params: CaseParams) -> CheckOutcome:
    """The text is all lower case, all upper case, or in title case; the span marks the first offender."""
    if params.case == "title":
        return _title_case(text)
    found = (_UPPER if params.case == "lower" else _LOWER).search(text)
    if found is not None:
        return CheckOutcome(False, f"not all {params.case} case: '{found.group()}'", found.span())
    return CheckOutcome(True, f"all {params.case} case")


def _title_case(text: str) -> CheckOutcome:
    for number, match in enumerate(WORD.finditer(text)):
        word = match.group()
        if word[0].isalpha() and word[0].islower():
            if number and word in _MINOR_WORDS:
                continue
            return CheckOutcome(False, f"not in title case: '{word}'", match.span())
    return CheckOutcome(True, "in title case")


class PunctuationParams(Params):
    """``chars``: the banned characters, e.g. ``","`` or ``"!?"``."""

    chars: str = Field(min_length=1)


@checker("punctuation_banned", PunctuationParams)
def punctuation_banned(text: str, params: PunctuationParams) -> CheckOutcome:
    """None of the banned characters occurs; the span marks the first one."""
    found = _char_class(params.chars).search(text)
    if found is not None:
        return CheckOutcome(False, f"contains the banned character '{found.group()}'", found.span())
    return CheckOutcome(True, f"none of {params.chars!r} used")


@lru_cache(maxsize=256)
def _char_class(chars: str) -> re.Pattern[str]:
    return re.compile("[" + "".join(re.escape(c) for c in chars) + "]")


class ListParams(Bounds):
    """A range for the number of list items."""


class BulletParams(Bounds):
    """``markers``: the characters that open a bullet line (default ``-*+•``);
    ``space_after``: a marker must be followed by a space (default true). IFEval counts
    ``markers: "*-"`` with ``space_after: false`` (a ``**bold**`` line is not a bullet)."""

    markers: str = Field(default="-*+•", min_length=1)
    space_after: bool = True


@lru_cache(maxsize=64)
def bullet_pattern(markers: str, space_after: bool) -> re.Pattern[str]:
    """The pattern of a bullet line opened by one of ``markers`` (see :class:`BulletParams`)."""
    marker = "[" + "".join(re.escape(c) for c in markers) + "]"
    after = r"[ \t]+\S" if space_after else r"(?!\*)"
    return re.compile(rf"^[ \t]*{marker}{after}", re.M)


@checker("bullet_list", BulletParams)
def bullet_list(text: str, params: BulletParams) -> CheckOutcome:
    """The number of bullet items (lines starting with -, *, + or •) is within the range."""
    pattern = bullet_pattern(params.markers, params.space_after)
    return count_outcome("bullet items", [m.start() for m in pattern.finditer(text)], text, params)


class NumberedParams(Bounds):
    """``sequential``: items must be numbered 1, 2, 3, ... (default false)."""

    sequential: bool = False


@checker("numbered_list", NumberedParams)
def numbered_list(text: str, params: NumberedParams) -> CheckOutcome:
    """The number of numbered items (lines like '1.' or '2)') is within the range, optionally in order."""
    items = list(NUMBERED.finditer(text))
    if params.sequential:
        for expected, item in enumerate(items, start=1):
            if int(item.group(1)) != expected:
                found = item.group(1)
                return CheckOutcome(
                    False, f"item numbered {found} where {expected} was expected", item.span(1)
                )
    return count_outcome("numbered items", [m.start() for m in items], text, params)


@checker("highlighted_sections", ListParams)
def highlighted_sections(text: str, params: ListParams) -> CheckOutcome:
    """The number of Markdown highlights (*text* or **text**) is within the range."""
    starts = [m.start() for m in HIGHLIGHT.finditer(text)]
    return count_outcome("highlighted sections", starts, text, params)


@checker("placeholders", ListParams)
def placeholders(text: str, params: ListParams) -> CheckOutcome:
    """The number of square-bracket placeholders like [name] is within the range (max 0: none allowed)."""
    found = list(PLACEHOLDER.finditer(text))
    outcome = count_outcome("placeholders", [m.start() for m in found], text, params)
    if not outcome.passed and outcome.span is not None and params.high is not None:
        extra = found[params.high]  # point at the placeholder itself, not to the end
        return CheckOutcome(
            False, f"{outcome.explanation}; first extra: '{extra.group()}'", extra.span()
        )
    return outcome
