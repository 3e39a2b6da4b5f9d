"""Length checks on one text: words, sentences, paragraphs, characters, letters."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any, Literal

import regex
from pydantic import Field, field_validator

from docket.adherence.checks.base import Bounds, CheckOutcome, checker
from docket.text import sentence_ends

WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")
# Runs of word characters: "don't" and "well-known" are two each (IFEval's count).
WORD_PART = re.compile(r"\w+")
# A word (as WORD) with at least two letters, all upper case; \\p{..} needs the regex engine.
CAPS_WORD = regex.compile(r"(?<![\w'’-])(?=(?:[\p{Lu}\d'’-]*\p{Lu}){2})[\p{Lu}\d'’-]+(?![\w'’-])")
_SPACE = re.compile(r"\s")
_NON_SPACE = re.compile(r"\S")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_DIVIDER_LINE = re.compile(r"^\s*\*\*\*\s*$", re.M)
_DIVIDER = re.compile(r"\s?\*\*\*\s?")


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


class WordCountParams(Bounds):
    """``joined``: how a word joined by an apostrophe or hyphen counts: ``one`` (default:
    "don't", "well-known" are one word each) or ``split`` (two each, as IFEval counts)."""

    joined: Literal["one", "split"] = "one"


@checker("word_count", WordCountParams)
def word_count(text: str, params: WordCountParams) -> CheckOutcome:
    """The number of words is within the range (words: runs of letters/digits, ' and - inside)."""
    pattern = WORD if params.joined == "one" else WORD_PART
    return lazy_count_outcome(
        "words", len(pattern.findall(text)), text, params, nth_match_start(pattern, text)
    )


@checker("sentence_count", CountParams)
def sentence_count(text: str, params: CountParams) -> CheckOutcome:
    """The number of sentences (ended by . ! or ?, common abbreviations ignored) is within the range."""
    return count_outcome("sentences", sentence_starts(text), text, params)


class ParagraphParams(Bounds):
    """``separator``: ``blank_line`` (default), ``divider`` (every ``***``, as in IFEval:
    an empty paragraph between two dividers fails) or ``divider_line`` (a line holding
    only ``***``)."""

    separator: Literal["blank_line", "divider", "divider_line"] = "blank_line"


_SEPARATORS = {"blank_line": _BLANK_LINE, "divider": _DIVIDER, "divider_line": _DIVIDER_LINE}


def paragraph_spans(text: str, separator: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every paragraph between separators, empty ones included."""
    spans, begin = [], 0
    for match in _SEPARATORS[separator].finditer(text):
        spans.append((begin, match.start()))
        begin = match.end()
    spans.append((begin, len(text)))
    return spans


@checker("paragraph_count", ParagraphParams)
def paragraph_count(text: str, params: ParagraphParams) -> CheckOutcome:
    """The number of non-empty paragraphs (separated by blank lines or ***) is within the range."""
    spans = paragraph_spans(text, params.separator)
    if params.separator == "divider":
        inner = [i for i, (a, b) in enumerate(spans[1:-1], 1) if not text[a:b].strip()]
        if inner:
            where = spans[inner[0]]
            return CheckOutcome(False, f"paragraph {inner[0] + 1} between dividers is empty", where)
    starts = [_skip_space(text, a) for a, b in spans if text[a:b].strip()]
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
    """``letter``: the character to count, any one character (a letter, digit, '!', ...);
    ``case_sensitive`` (default false: 'a' also counts 'A')."""

    letter: str
    case_sensitive: bool = False

    @field_validator("letter")
    @classmethod
    def _one_character(cls, value: str) -> str:
        if len(value) != 1:
            raise ValueError("must be a single character")
        return value


@checker("letter_count", LetterParams)
def letter_count(text: str, params: LetterParams) -> CheckOutcome:
    """A given character occurs a number of times within the range (case-insensitive by default)."""
    flags = 0 if params.case_sensitive else re.IGNORECASE
    pattern = re.compile(re.escape(params.letter), flags)
    count = len(pattern.findall(text))
    return lazy_count_outcome(
        f"'{params.letter}' characters", count, text, params, nth_match_start(pattern, text)
    )


class CapsParams(Bounds):
    """``min_letters``: capital letters a word needs to count. The default, 2, counts
    docket's words (``IT'S``, ``COVID-19``; "I" and "B5" do not count). 1 counts as IFEval
    does, over NLTK's word tokens: punctuation apart, a clitic split off (``IT'S`` is two,
    ``I'm`` one: "I"), inner periods kept (``U.S.``, ``P.P.S`` are one each), and a token
    counts when it has a capital and no small letter ("I", "B5" count)."""

    min_letters: int = Field(default=2, ge=1, le=2)


# What NLTK's word tokenizer splits off (as IFEval tokenises): brackets, quotes, most
# punctuation (a comma or colon only before a non-digit: "12:00" stays), runs of periods
# and double dashes.
_TOKEN_BREAK = re.compile(r"(?:[\s()\[\]{}<>\"“”‘’«»„`;!?@#$%&*]|[,:](?!\d)|\.{2,}|--)+")
# A clitic at the end of a token, or the second half of "cannot", "gonna", ... (NLTK's
# Treebank rules).
_CLITIC = re.compile(
    r"(?<=[^' ])(?:'[sSmMdD]|'ll|'LL|'re|'RE|'ve|'VE|n't|N'T|')$"
    r"|(?i:(?<=^can)not|(?<=^gon)na|(?<=^got)ta|(?<=^wan)na|(?<=^gim)me|(?<=^lem)me)$"
)


def nltk_tokens(text: str) -> Iterator[tuple[int, int]]:
    """Spans of the tokens NLTK's word tokenizer would give (clitics apart), in order."""
    position = 0
    for match in _TOKEN_BREAK.finditer(text + " "):
        if match.start() > position:
            yield from _split_clitic(text, position, match.start())
        position = match.end()


def _split_clitic(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    clitic = _CLITIC.search(text[start:end])
    if clitic is None or clitic.start() == 0:
        yield start, end
    else:
        yield start, start + clitic.start()
        yield start + clitic.start(), end


def caps_words(text: str, min_letters: int = 2) -> list[tuple[int, int]]:
    """Spans of the all-caps words of ``text`` as ``uppercase_word_count`` counts them.

    Args:
        text: the text.
        min_letters: 2 for docket's words with two capitals or more; 1 for IFEval's
            counting (see :class:`CapsParams`).
    """
    if min_letters >= 2:
        return [m.span() for m in CAPS_WORD.finditer(text)]
    return [(a, b) for a, b in nltk_tokens(text) if text[a:b].isupper()]


@checker("uppercase_word_count", CapsParams)
def uppercase_word_count(text: str, params: CapsParams) -> CheckOutcome:
    """The number of ALL-CAPS words (with at least ``min_letters`` capitals) is within the range."""
    starts = [a for a, _ in caps_words(text, params.min_letters)]
    return count_outcome("all-caps words", starts, text, params)
