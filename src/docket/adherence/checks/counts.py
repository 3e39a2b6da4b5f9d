"""Length checks on one text: words, sentences, paragraphs, characters, letters."""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import islice
from typing import Any, Literal

import regex
from pydantic import field_validator

from docket.adherence.checks.base import Bounds, CheckOutcome, checker
from docket.text import sentence_ends

WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")
# A word (as WORD) with at least two letters, all upper case; \\p{..} needs the regex engine.
CAPS_WORD = regex.compile(r"(?<![\w'’-])(?=(?:[\p{Lu}\d'’-]*\p{Lu}){2})[\p{Lu}\d'’-]+(?![\w'’-])")
_SPACE = re.compile(r"\s")
_NON_SPACE = re.compile(r"\S")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_DIVIDER = re.compile(r"^\s*\*\*\*\s*$", re.M)


def count_outcome(unit: str, starts: list[int], text: str, bounds: Bounds) -> CheckOutcome:
    """Compare a count of ``unit`` (whose start offsets are ``starts``) with ``bounds``.

    On too many, the span runs from the first unit over the limit to the end of the text.
    """
    return lazy_count_outcome(unit, len(starts), text, bounds, starts.__getitem__)


def lazy_count_outcome(
    unit: str, count: int, text: str, bounds: Bounds, nth_start: Callable[[int], int]
) -> CheckOutcome:
    """Like :func:`count_outcome`, but offsets are only computed (by ``nth_start``) on failure."""
    problem = bounds.violation(count)
    summary = f"{count} (allowed: {bounds.describe()})"
    if problem is None:
        return CheckOutcome(True, f"{unit}: {summary}")
    span = None
    if problem == "too many" and bounds.high is not None:
        span = (nth_start(bounds.high), len(text))
    return CheckOutcome(False, f"{problem} {unit}: {summary}", span)


def nth_match_start(pattern: re.Pattern[str] | Any, text: str) -> Callable[[int], int]:
    """``nth(k)``: the start of the k-th (0-based) match of ``pattern`` in ``text``."""
    return lambda k: next(islice(pattern.finditer(text), k, None)).start()


def word_starts(text: str) -> list[int]:
    """Start offsets of the words of ``text``."""
    return [m.start() for m in WORD.finditer(text)]


def sentence_starts(text: str) -> list[int]:
    """Start offsets of the sentences of ``text`` (terminal punctuation, abbreviations kept)."""
    starts: list[int] = []
    begin = 0
    for match in sentence_ends(text):
        if WORD.search(text, begin, match.start()):
            starts.append(_skip_space(text, begin))
        begin = match.end()
    if WORD.search(text, begin):
        starts.append(_skip_space(text, begin))
    return starts


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position].isspace():
        position += 1
    return position


class CountParams(Bounds):
    """A count range: ``min``, ``max``, both, or ``exact``."""


@checker("word_count", CountParams)
def word_count(text: str, params: CountParams) -> CheckOutcome:
    """The number of words is within the range (words: runs of letters/digits, ' and - inside)."""
    return lazy_count_outcome(
        "words", len(WORD.findall(text)), text, params, nth_match_start(WORD, text)
    )


@checker("sentence_count", CountParams)
def sentence_count(text: str, params: CountParams) -> CheckOutcome:
    """The number of sentences (ended by . ! or ?, common abbreviations ignored) is within the range."""
    return count_outcome("sentences", sentence_starts(text), text, params)


class ParagraphParams(Bounds):
    """``separator``: ``blank_line`` (default) or ``divider`` (a line of ``***``, as in IFEval)."""

    separator: Literal["blank_line", "divider"] = "blank_line"


@checker("paragraph_count", ParagraphParams)
def paragraph_count(text: str, params: ParagraphParams) -> CheckOutcome:
    """The number of non-empty paragraphs (separated by blank lines or *** lines) is within the range."""
    pattern = _BLANK_LINE if params.separator == "blank_line" else _DIVIDER
    starts, begin = [], 0
    for match in [*pattern.finditer(text), None]:
        end = match.start() if match else len(text)
        if text[begin:end].strip():
            starts.append(_skip_space(text, begin))
        begin = match.end() if match else begin
    return count_outcome("paragraphs", starts, text, params)


class CharParams(Bounds):
    """``spaces``: count whitespace characters too (default true)."""

    spaces: bool = True


@checker("char_count", CharParams)
def char_count(text: str, params: CharParams) -> CheckOutcome:
    """The number of characters (optionally without whitespace) is within the range."""
    if params.spaces:
        return lazy_count_outcome("characters", len(text), text, params, lambda k: k)
    count = len(text) - len(_SPACE.findall(text))
    return lazy_count_outcome("characters", count, text, params, nth_match_start(_NON_SPACE, text))


class LetterParams(Bounds):
    """``letter``: the letter to count (case-insensitive)."""

    letter: str

    @field_validator("letter")
    @classmethod
    def _one_letter(cls, value: str) -> str:
        if len(value) != 1 or not value.isalpha():
            raise ValueError("must be a single letter")
        return value


@checker("letter_count", LetterParams)
def letter_count(text: str, params: LetterParams) -> CheckOutcome:
    """A given letter occurs a number of times within the range (case-insensitive)."""
    pattern = re.compile(re.escape(params.letter), re.IGNORECASE)
    count = len(pattern.findall(text))
    return lazy_count_outcome(
        f"'{params.letter}' letters", count, text, params, nth_match_start(pattern, text)
    )


@checker("uppercase_word_count", CountParams)
def uppercase_word_count(text: str, params: CountParams) -> CheckOutcome:
    """The number of ALL-CAPS words (two letters or more) is within the range."""
    count = len(CAPS_WORD.findall(text))
    return lazy_count_outcome(
        "all-caps words", count, text, params, nth_match_start(CAPS_WORD, text)
    )
