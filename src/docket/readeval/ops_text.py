"""Mutation operators for text checkers: keywords, patterns, affixes, case, placeholders, contacts."""

from __future__ import annotations

from typing import Any

from docket.adherence.checks import (
    EMAIL,
    PLACEHOLDER,
    URL,
    WORD,
    keyword_pattern,
    phone_numbers_in,
)

# The checker's own pattern, so that an operator counts exactly what the checker counts.
from docket.readeval.operators import (
    FILLER,
    MutationContext,
    has_high,
    has_positive_low,
    insert_sentence,
    operator,
    pad,
    tidy,
)

URL_SAMPLES = ("https://www.example.com/help", "www.example.org/info", "example.com/faq")
EMAIL_SAMPLES = ("help@example.com", "support@example.org")
PHONE_SAMPLES = ("0161 496 0734", "+44 20 7946 0321", "020 7946 0958")
PLACEHOLDER_SAMPLES = ("[name]", "[date]", "[booking reference]", "[amount]")


def _remove_keyword(text: str, keyword: str, params: Any, keep: int = 0) -> str:
    pattern = keyword_pattern(keyword, params.case_sensitive, params.whole_word)
    matches = list(pattern.finditer(text))[keep:]
    for match in reversed(matches):
        text = text[: match.start()] + text[match.end() :]
    return tidy(text)


def _present(text: str, keyword: str, params: Any) -> bool:
    return bool(keyword_pattern(keyword, params.case_sensitive, params.whole_word).search(text))


@operator("keywords_required", "remove")
def keywords_required_remove(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Delete a required keyword (all of them when any one suffices)."""
    present = [k for k in params.keywords if _present(text, k, params)]
    if not present:
        return None
    chosen = present if params.mode == "any" else [ctx.rng.choice(present)]
    for keyword in chosen:
        text = _remove_keyword(text, keyword, params)
    return text


KEYWORD_FRAMES = ("I would add one word here: {kw}.", "Just to mention it: {kw}.")


@operator("keywords_forbidden", "insert")
def keywords_forbidden_insert(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Insert a sentence with a forbidden keyword."""
    frame = ctx.rng.choice(KEYWORD_FRAMES)
    return insert_sentence(text, frame.format(kw=ctx.rng.choice(params.keywords)), ctx)


@operator("keyword_count", "add", when=has_high)
def keyword_count_add(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Insert sentences with the keyword past its maximum count."""
    pattern = keyword_pattern(params.keyword, params.case_sensitive, params.whole_word)
    target = params.high + ctx.excess()
    frames = tuple(frame.format(kw=params.keyword) for frame in KEYWORD_FRAMES)
    return pad(text, lambda t: len(pattern.findall(t)) >= target, ctx, frames)


@operator("keyword_count", "remove", when=has_positive_low)
def keyword_count_remove(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Delete occurrences of the keyword until fewer than the minimum remain."""
    return _remove_keyword(text, params.keyword, params, keep=max(0, params.low - ctx.excess()))


@operator("regex_must_match", "remove")
def regex_must_match_remove(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Delete every match of the required pattern."""
    try:
        return tidy(params.compiled().sub("", text, timeout=0.05))
    except TimeoutError:
        return None


@operator("starts_with", "prepend")
def starts_with_prepend(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Put a word before the required beginning."""
    return f"{ctx.rng.choice(('Well,', 'So,', 'Okay,'))} {text.lstrip()}"


@operator("starts_with", "strip")
def starts_with_strip(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Delete the required beginning."""
    body = text.lstrip()
    if not body.casefold().startswith(params.text.casefold()):
        return None
    rest = body[len(params.text) :].lstrip(" ,")
    return rest[:1].upper() + rest[1:] if rest else None


@operator("ends_with", "strip")
def ends_with_strip(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Delete the required ending."""
    body = text.rstrip()
    if not body.casefold().endswith(params.text.casefold()):
        return None
    return body[: len(body) - len(params.text)].rstrip(" ,") or None


@operator("ends_with", "append")
def ends_with_append(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Add a sentence after the required ending."""
    return f"{text.rstrip()} {ctx.rng.choice(FILLER)}"


def _recase(text: str, ctx: MutationContext, pick: Any, change: Any) -> str | None:
    words = [m for m in WORD.finditer(text) if pick(m)]
    if not words:
        return None
    match = ctx.rng.choice(words)
    return text[: match.start()] + change(match.group()) + text[match.end() :]


@operator("letter_case", "recase")
def letter_case_recase(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Change the case of one word against the required case."""
    if params.case == "lower":
        return _recase(text, ctx, lambda m: m.group()[0].isalpha(), str.capitalize)
    if params.case == "upper":
        return _recase(text, ctx, lambda m: m.group()[0].isalpha(), str.lower)
    return _recase(text, ctx, lambda m: len(m.group()) > 3 and m.group()[0].isalpha(), str.lower)


@operator("punctuation_banned", "insert")
def punctuation_insert(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Insert a banned character after a word."""
    words = list(WORD.finditer(text))
    if not words:
        return None
    end = ctx.rng.choice(words).end()
    return text[:end] + ctx.rng.choice(params.chars) + text[end:]


@operator("placeholders", "insert", when=has_high)
def placeholders_insert(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Replace words by template placeholders such as [name], past the maximum."""
    need = params.high + 1 - len(PLACEHOLDER.findall(text))
    words = [m for m in WORD.finditer(text) if len(m.group()) > 2]
    if need <= 0 or len(words) < need:
        return None
    for match in sorted(ctx.rng.sample(words, need), key=lambda m: m.start(), reverse=True):
        text = text[: match.start()] + ctx.rng.choice(PLACEHOLDER_SAMPLES) + text[match.end() :]
    return text


@operator("placeholders", "fill", when=has_positive_low)
def placeholders_fill(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Fill in the placeholders."""
    return PLACEHOLDER.sub("Alex", text)


def _break_json(text: str, params: Any, ctx: MutationContext) -> str | None:
    body = text.rstrip()
    return body[:-1] if body[-1:] in "}]" else None


operator("json_valid", "break")(_break_json)
operator("json_schema", "break")(_break_json)


def _contact(samples: tuple[str, ...], pattern: Any) -> tuple[Any, Any]:
    def insert(text: str, params: Any, ctx: MutationContext) -> str | None:
        """Insert one where none is allowed."""
        return insert_sentence(text, f"See {ctx.rng.choice(samples)} for details.", ctx)

    def remove(text: str, params: Any, ctx: MutationContext) -> str | None:
        """Delete all of them where one is required."""
        return tidy(pattern(text))

    return insert, remove


def _strip_phones(text: str) -> str:
    for match in reversed(list(phone_numbers_in(text))):
        text = text[: match.start()] + text[match.end() :]
    return text


def _register_contacts() -> None:
    kinds = (
        ("urls", URL_SAMPLES, lambda t: URL.sub("", t)),
        ("emails", EMAIL_SAMPLES, lambda t: EMAIL.sub("", t)),
        ("phone_numbers", PHONE_SAMPLES, _strip_phones),
    )
    for name, samples, strip in kinds:
        insert, remove = _contact(samples, strip)
        operator(name, "insert", when=lambda p: not p.present)(insert)
        operator(name, "remove", when=lambda p: p.present)(remove)


_register_contacts()
