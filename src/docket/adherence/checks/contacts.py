"""Presence or absence of URLs, e-mail addresses and phone numbers."""

from __future__ import annotations

import re
from collections.abc import Iterator

from docket.adherence.checks.base import CheckOutcome, Params, checker

_TLDS = "com|org|net|edu|gov|io|co|uk|de|fr|info|biz|ai|app|dev|me|ly"
URL = re.compile(
    r"(?:\b(?:https?|ftp)://|\bwww\.)[^\s<>\"']+[^\s<>\"'.,;:!?)\]]"
    rf"|(?<![@\w.])(?:[a-z0-9-]+\.)+(?:{_TLDS})\b(?:/[^\s<>\"']*)?",
    re.I,
)
EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}\b")
_PHONE = re.compile(r"(?<![\w+])\+?\(?\d[\d \t().-]{5,}\d(?![\w])")
_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[./-]\d{1,2}[./-]\d{2,4}")


class PresenceParams(Params):
    """``present``: true = at least one must occur; false = none may occur."""

    present: bool


def phone_numbers_in(text: str) -> Iterator[re.Match[str]]:
    """Phone-number-like matches: 7 to 15 digits with optional +, spaces, dots, dashes, brackets."""
    for match in _PHONE.finditer(text):
        digits = sum(c.isdigit() for c in match.group())
        if 7 <= digits <= 15 and not _DATE.fullmatch(match.group().strip()):
            yield match


def _presence(kind: str, matches: Iterator[re.Match[str]], present: bool) -> CheckOutcome:
    first = next(matches, None)
    if present:
        if first is None:
            return CheckOutcome(False, f"no {kind} found, but one is required")
        return CheckOutcome(True, f"{kind} present: '{first.group()}'")
    if first is None:
        return CheckOutcome(True, f"no {kind}")
    return CheckOutcome(
        False, f"contains {kind} '{first.group()}', which are not allowed", first.span()
    )


@checker("urls", PresenceParams)
def urls(text: str, params: PresenceParams) -> CheckOutcome:
    """URLs (http(s)://, www., or bare domains with a common ending) are present or absent."""
    return _presence("URLs", URL.finditer(text), params.present)


@checker("emails", PresenceParams)
def emails(text: str, params: PresenceParams) -> CheckOutcome:
    """E-mail addresses are present or absent."""
    return _presence("e-mail addresses", EMAIL.finditer(text), params.present)


@checker("phone_numbers", PresenceParams)
def phone_numbers(text: str, params: PresenceParams) -> CheckOutcome:
    """Phone numbers (7-15 digits, separators allowed, dates excluded) are present or absent."""
    return _presence("phone numbers", phone_numbers_in(text), params.present)
