"""Mutation operators for layout checkers: title, sections, responses, paragraph openings,
postscript, wrapping marks. Each breaks the rule in one plausible way; the ground truth
re-runs the checker on the result, so an operator that misses is simply not used."""

from __future__ import annotations

import re
from typing import Any

from docket.readeval.operators import MutationContext, has_high, has_positive_low, operator

_TITLE = re.compile(r"<<([^\n]+?)>>")
OPENERS = ("Well", "So", "Also", "Honestly")


@operator("title", "unwrap")
def title_unwrap(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Drop the double angular brackets around every title."""
    out = _TITLE.sub(lambda m: m.group(1), text)
    return out if out != text else None


def _sections(params: Any) -> re.Pattern[str]:
    flags = 0 if params.case_sensitive else re.IGNORECASE
    return re.compile(rf"{re.escape(params.marker)}\s?\d+[ \t]*:?[ \t]*", flags)


@operator("section_count", "add", when=has_high)
def section_count_add(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Append sections past the maximum."""
    have = len(_sections(params).findall(text))
    extra = params.high + ctx.excess() - have
    tail = [f"{params.marker} {have + i + 1}\nOne more point." for i in range(max(1, extra))]
    return text.rstrip() + "\n\n" + "\n\n".join(tail)


@operator("section_count", "unmark", when=has_positive_low)
def section_count_unmark(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Remove every section marker (below a minimum of one or more)."""
    out = _sections(params).sub("", text)
    return out if out != text else None


@operator("separated_responses", "join")
def separated_responses_join(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Join the responses: drop the separators."""
    if params.separator not in text:
        return None
    return "\n\n".join(part.strip() for part in text.split(params.separator) if part.strip())


@operator("paragraph_first_word", "prepend")
def paragraph_first_word_prepend(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Put another word in front of the required first word."""
    pattern = re.compile(rf"(?<![\w'’-]){re.escape(params.word)}", re.IGNORECASE)
    found = pattern.search(text)
    if found is None:
        return None
    opener = ctx.rng.choice(OPENERS)
    return f"{text[: found.start()]}{opener}, {found.group().lower()}{text[found.end() :]}"


@operator("postscript", "drop")
def postscript_drop(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Delete the postscript."""
    letters = [re.escape(c) for c in params.marker.strip() if not c.isspace()]
    pattern = re.compile(r"^\s*" + r"\s?".join(letters) + r".*$", re.IGNORECASE | re.MULTILINE)
    out = pattern.sub("", text).strip()
    return out if out and out != text.strip() else None


@operator("wrapped_in", "unwrap")
def wrapped_in_unwrap(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Remove the closing mark."""
    body = text.rstrip()
    if not body.endswith(params.close):
        return None
    return body[: len(body) - len(params.close)].rstrip() or None
