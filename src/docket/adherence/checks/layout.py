"""Layout checks: a title, numbered sections, several responses, paragraph openings,
a postscript, and text wrapped in quotation marks."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from pydantic import Field

from docket.adherence.checks.base import Bounds, CheckOutcome, Params, checker
from docket.adherence.checks.counts import WORD, count_outcome, paragraph_spans

_TITLE = re.compile(r"<<([^\n]+?)>>")


class NoParams(Params):
    """No parameters."""


@checker("title", NoParams)
def title(text: str, params: NoParams) -> CheckOutcome:
    """The text has a title in double angular brackets, such as <<A day at sea>>, on one line."""
    for match in _TITLE.finditer(text):
        if match.group(1).strip("<> \t"):
            return CheckOutcome(True, f"title '{match.group(1).strip()}'")
    return CheckOutcome(False, "no title in double angular brackets such as <<title>>")


class SectionParams(Bounds):
    """``marker``: the word that opens each section, followed by its number (default
    ``SECTION``, as in ``SECTION 1``); ``case_sensitive`` (default true)."""

    marker: str = Field(default="SECTION", min_length=1, max_length=40)
    case_sensitive: bool = True


@lru_cache(maxsize=64)
def _section_pattern(marker: str, case_sensitive: bool) -> re.Pattern[str]:
    return re.compile(rf"{re.escape(marker)}\s?\d+", 0 if case_sensitive else re.IGNORECASE)


@checker("section_count", SectionParams)
def section_count(text: str, params: SectionParams) -> CheckOutcome:
    """The number of sections, each opened by the marker and a number (SECTION 1, ...), is within the range."""
    starts = [
        m.start() for m in _section_pattern(params.marker, params.case_sensitive).finditer(text)
    ]
    return count_outcome(f"'{params.marker} n' sections", starts, text, params)


class ResponsesParams(Params):
    """``count``: how many responses (default 2); ``separator`` between them (default
    ``******``); ``distinct``: the responses must differ (default true)."""

    count: int = Field(default=2, ge=2, le=20)
    separator: str = Field(default="******", min_length=1)
    distinct: bool = True


@checker("separated_responses", ResponsesParams)
def separated_responses(text: str, params: ResponsesParams) -> CheckOutcome:
    """The text holds a number of responses separated by a marker (****** by default), none empty."""
    parts = text.split(params.separator)
    if len(parts) > 1 and not parts[0].strip():
        parts = parts[1:]  # a separator may open the text
    if len(parts) > 1 and not parts[-1].strip():
        parts = parts[:-1]  # ... or close it
    if any(not part.strip() for part in parts):
        return CheckOutcome(False, f"an empty response between two '{params.separator}'")
    if len(parts) != params.count:
        return CheckOutcome(False, f"{len(parts)} responses, {params.count} expected")
    if params.distinct and len({part.strip() for part in parts}) < len(parts):
        return CheckOutcome(False, "two of the responses are the same")
    return CheckOutcome(True, f"{len(parts)} responses separated by '{params.separator}'")


class FirstWordParams(Params):
    """``paragraph``: which paragraph (1 = the first); ``word``: its required first word
    (case-insensitive); ``separator``: ``blank_line`` (default), ``divider`` or
    ``divider_line``, as for paragraph_count. ``punctuation``: ``ignored`` (default: quotes,
    markup and punctuation around the word do not count, so ``**Summary:**`` starts with
    "summary") or ``ifeval`` (IFEval's reading: the first token without opening quotes, up
    to the first . , ? ! ' or ", so ``Summary:`` is not "summary")."""

    paragraph: int = Field(ge=1)
    word: str = Field(min_length=1)
    separator: Literal["blank_line", "divider", "divider_line"] = "blank_line"
    punctuation: Literal["ignored", "ifeval"] = "ignored"


@checker("paragraph_first_word", FirstWordParams)
def paragraph_first_word(text: str, params: FirstWordParams) -> CheckOutcome:
    """Paragraph n (counting non-empty paragraphs) starts with the given word."""
    spans = [(a, b) for a, b in paragraph_spans(text, params.separator) if text[a:b].strip()]
    if params.paragraph > len(spans):
        return CheckOutcome(False, f"only {len(spans)} paragraphs, no paragraph {params.paragraph}")
    start, end = spans[params.paragraph - 1]
    if params.punctuation == "ifeval":
        first, wanted = _ifeval_first_word(text[start:end]), params.word.strip()
    else:
        first, wanted = first_word(text[start:end]), first_word(params.word) or params.word
    if first.casefold() == wanted.strip().casefold():
        return CheckOutcome(True, f"paragraph {params.paragraph} starts with '{first}'")
    offset = start + (len(text[start:end]) - len(text[start:end].lstrip()))
    span = (offset, offset + len(text[offset:end].split(None, 1)[0]))  # the first token
    return CheckOutcome(
        False, f"paragraph {params.paragraph} starts with '{first}', not '{params.word}'", span
    )


def first_word(text: str) -> str:
    """The first word of ``text`` without the punctuation or markup around it.

    ``**Hello**,``, ``"Hello:`` and ``## Hello`` all give ``Hello``; a word keeps its inner
    apostrophes and hyphens (``Don't``, ``Well-known``). Empty when there is no word.
    """
    found = WORD.search(text)
    return found.group() if found else ""


_IFEVAL_WORD = re.compile(r"[^.,?!'\"]*")


def _ifeval_first_word(text: str) -> str:
    token = text.split(None, 1)[0].lstrip("'").lstrip('"') if text.strip() else ""
    return _IFEVAL_WORD.match(token).group()  # type: ignore[union-attr]  (always matches)


class PostscriptParams(Params):
    """``marker``: what opens the postscript (default ``P.S.``; ``P.P.S`` also works);
    the match ignores case and the spaces inside the marker. ``line_start``: the marker
    must open a line (default true; false finds it anywhere, as IFEval does)."""

    marker: str = Field(default="P.S.", min_length=1, max_length=20)
    line_start: bool = True


@lru_cache(maxsize=32)
def _postscript_pattern(marker: str, line_start: bool) -> re.Pattern[str]:
    letters = [re.escape(c) for c in marker.strip() if not c.isspace()]
    opening = r"^\s*" if line_start else ""
    return re.compile(opening + r"\s?".join(letters), re.IGNORECASE | re.MULTILINE)


@checker("postscript", PostscriptParams)
def postscript(text: str, params: PostscriptParams) -> CheckOutcome:
    """A line starts with the postscript marker (P.S. by default)."""
    found = _postscript_pattern(params.marker, params.line_start).search(text)
    if found:
        return CheckOutcome(True, f"postscript '{params.marker}' found")
    where = "no line starts with" if params.line_start else "no"
    return CheckOutcome(False, f"{where} '{params.marker}'")


class WrappedParams(Params):
    """``open`` and ``close``: the marks that must start and end the text (default a
    double quotation mark each); surrounding whitespace is ignored."""

    open: str = Field(default='"', min_length=1)
    close: str = Field(default='"', min_length=1)


@checker("wrapped_in", WrappedParams)
def wrapped_in(text: str, params: WrappedParams) -> CheckOutcome:
    """The whole text is wrapped in the given marks (double quotation marks by default)."""
    body = text.strip()
    if len(body) >= len(params.open) + len(params.close) and (
        body.startswith(params.open) and body.endswith(params.close)
    ):
        return CheckOutcome(True, f"wrapped in {params.open}...{params.close}")
    return CheckOutcome(False, f"not wrapped in {params.open}...{params.close}")
