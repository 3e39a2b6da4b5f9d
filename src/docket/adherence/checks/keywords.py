"""Lexical checks: keywords, regular expressions, how a text starts and ends."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Literal

from pydantic import Field, field_validator

from docket.adherence.checks.base import Bounds, CheckOutcome, Params, checker
from docket.adherence.checks.safe_regex import (
    bounded,
    check_pattern,
    compiled,
    search,
)


class MatchOptions(Params):
    """Shared options: ``case_sensitive`` (default false), ``whole_word`` (default true)."""

    case_sensitive: bool = False
    whole_word: bool = True


@lru_cache(maxsize=1024)
def keyword_pattern(keyword: str, case_sensitive: bool, whole_word: bool) -> re.Pattern[str]:
    """A compiled pattern finding ``keyword`` literally, optionally as a whole word."""
    body = re.escape(keyword)
    if whole_word:
        body = rf"(?<!\w){body}(?!\w)"
    return re.compile(body, 0 if case_sensitive else re.IGNORECASE)


def _find(text: str, keyword: str, options: MatchOptions) -> re.Match[str] | None:
    return keyword_pattern(keyword, options.case_sensitive, options.whole_word).search(text)


class _KeywordList(MatchOptions):
    """``keywords``: one or more words or phrases, none of them empty."""

    keywords: list[str] = Field(min_length=1)

    @field_validator("keywords")
    @classmethod
    def _no_empty_keyword(cls, values: list[str]) -> list[str]:
        if not values or any(not v.strip() for v in values):
            raise ValueError("give at least one keyword, none of them empty")
        return values


class KeywordsParams(_KeywordList):
    """``keywords``: the words or phrases; ``mode``: ``all`` (default) or ``any`` must occur."""

    mode: Literal["all", "any"] = "all"


@checker("keywords_required", KeywordsParams)
def keywords_required(text: str, params: KeywordsParams) -> CheckOutcome:
    """All (or any) of the keywords occur in the text."""
    missing = [k for k in params.keywords if _find(text, k, params) is None]
    if params.mode == "any" and len(missing) < len(params.keywords):
        return CheckOutcome(True, "contains at least one of the keywords")
    if params.mode == "all" and not missing:
        return CheckOutcome(True, "contains all required keywords")
    listed = ", ".join(f"'{k}'" for k in missing)
    need = "none of" if params.mode == "any" else "missing"
    return CheckOutcome(False, f"{need} the required keywords: {listed}")


class ForbiddenParams(_KeywordList):
    """``keywords``: words or phrases that must not occur."""


@checker("keywords_forbidden", ForbiddenParams)
def keywords_forbidden(text: str, params: ForbiddenParams) -> CheckOutcome:
    """None of the keywords occurs in the text; the span marks the first one found."""
    hits = [(m.start(), m.end(), k) for k in params.keywords if (m := _find(text, k, params))]
    if not hits:
        return CheckOutcome(True, "no forbidden keyword")
    start, end, keyword = min(hits)
    return CheckOutcome(False, f"contains the forbidden keyword '{keyword}'", (start, end))


class KeywordCountParams(MatchOptions, Bounds):
    """``keyword`` must occur a number of times in the range ``min``/``max``/``exact``."""

    keyword: str = Field(min_length=1)


@checker("keyword_count", KeywordCountParams)
def keyword_count(text: str, params: KeywordCountParams) -> CheckOutcome:
    """A keyword occurs a number of times within the range; the span marks the first extra one."""
    pattern = keyword_pattern(params.keyword, params.case_sensitive, params.whole_word)
    matches = list(pattern.finditer(text))
    summary = f"'{params.keyword}' occurs {len(matches)} times (allowed: {params.describe()})"
    problem = params.violation(len(matches))
    if problem is None:
        return CheckOutcome(True, summary)
    extra = matches[params.high] if problem == "too many" and params.high is not None else None
    return CheckOutcome(
        False, f"{problem} '{params.keyword}': {summary}", extra.span() if extra else None
    )


class RegexParams(Params):
    """``pattern``: a Python regular expression (screened for catastrophic backtracking);
    ``ignore_case``, ``multiline``, ``dotall``: the usual flags (default false)."""

    pattern: str
    ignore_case: bool = False
    multiline: bool = False
    dotall: bool = False

    @field_validator("pattern")
    @classmethod
    def _safe(cls, value: str) -> str:
        check_pattern(value)
        return value

    def compiled(self) -> Any:
        """The compiled pattern with its flags."""
        flags = (re.I if self.ignore_case else 0) | (re.M if self.multiline else 0)
        return compiled(self.pattern, flags | (re.S if self.dotall else 0))


def _truncation_note(cut: bool) -> str:
    return " (only the first 20000 characters were searched)" if cut else ""


@checker("regex_must_match", RegexParams)
def regex_must_match(text: str, params: RegexParams) -> CheckOutcome:
    """The regular expression matches somewhere in the text."""
    searched, cut = bounded(text)
    match = search(params.compiled(), searched)  # a timeout raises: undecided, never a verdict
    if match:
        return CheckOutcome(True, f"matches /{params.pattern}/")
    return CheckOutcome(False, f"does not match /{params.pattern}/{_truncation_note(cut)}")


@checker("regex_must_not_match", RegexParams)
def regex_must_not_match(text: str, params: RegexParams) -> CheckOutcome:
    """The regular expression matches nowhere in the text; the span marks the first match."""
    searched, cut = bounded(text)
    match = search(params.compiled(), searched)  # a timeout raises: undecided, never a verdict
    if match is None:
        return CheckOutcome(True, f"no match for /{params.pattern}/{_truncation_note(cut)}")
    return CheckOutcome(False, f"matches /{params.pattern}/: '{match.group()[:60]}'", match.span())


class AffixParams(Params):
    """``text``: the required prefix or suffix; ``case_sensitive`` (default true);
    ``strip``: ignore surrounding whitespace (default true); ``ignore_quotes``: also look
    inside quotation marks that open or close the text (default false), so
    ``"... Any other questions?"`` ends with ``Any other questions?``."""

    text: str = Field(min_length=1)
    case_sensitive: bool = True
    strip: bool = True
    ignore_quotes: bool = False


_QUOTES = "\"'\u201c\u201d\u2018\u2019"


def _bounds(text: str, params: AffixParams) -> tuple[int, int]:
    """The part of ``text`` an affix is compared with: without whitespace and quotes."""
    start, end = 0, len(text)
    skip = (" \t\r\n\f\v" if params.strip else "") + (_QUOTES if params.ignore_quotes else "")
    while start < end and text[start] in skip:
        start += 1
    while end > start and text[end - 1] in skip:
        end -= 1
    return start, end


def _same(a: str, b: str, case_sensitive: bool) -> bool:
    return a == b if case_sensitive else a.casefold() == b.casefold()


@checker("starts_with", AffixParams)
def starts_with(text: str, params: AffixParams) -> CheckOutcome:
    """The text starts with the given prefix."""
    offset = _bounds(text, params)[0]
    head = text[offset : offset + len(params.text)]
    if _same(head, params.text, params.case_sensitive):
        return CheckOutcome(True, f"starts with '{params.text}'")
    span = (offset, offset + len(head)) if head else None
    return CheckOutcome(False, f"does not start with '{params.text}' (starts with '{head}')", span)


@checker("ends_with", AffixParams)
def ends_with(text: str, params: AffixParams) -> CheckOutcome:
    """The text ends with the given suffix."""
    end = _bounds(text, params)[1]
    start = max(0, end - len(params.text))
    tail = text[start:end]
    if _same(tail, params.text, params.case_sensitive):
        return CheckOutcome(True, f"ends with '{params.text}'")
    span = (start, end) if tail else None
    return CheckOutcome(False, f"does not end with '{params.text}' (ends with '{tail}')", span)
