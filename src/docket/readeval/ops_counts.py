"""Mutation operators for counting checkers: words, sentences, paragraphs, characters, lists."""

from __future__ import annotations

import re
from typing import Any

# The checkers' own patterns, so that an operator counts exactly what the checker counts.
from docket.adherence.checks import (
    HIGHLIGHT,
    NUMBERED,
    WORD,
    bullet_pattern,
    caps_words,
    paragraph_spans,
    sentence_starts,
)
from docket.readeval.operators import (
    MutationContext,
    has_high,
    has_positive_low,
    operator,
    pad,
    tidy,
)

VOCABULARY = (
    "journey", "ticket", "station", "platform", "window", "morning", "evening", "quiet",
    "simple", "usual", "helpful", "booking", "travel", "carriage", "luggage", "weekend",
    "return", "single", "arrival",
)  # fmt: skip


def _words(text: str) -> int:
    return len(WORD.findall(text))


def _cut_after(text: str, starts: list[int], keep: int) -> str:
    """The text up to (not including) unit number ``keep``."""
    return text[: starts[keep]].rstrip() if keep < len(starts) else text


@operator("word_count", "pad", when=has_high)
def word_count_pad(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Pad the text with filler sentences past the maximum number of words."""
    target = params.high + ctx.excess()
    return pad(text, lambda t: _words(t) >= target, ctx)


@operator("word_count", "cut", when=has_positive_low)
def word_count_cut(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Cut the text below the minimum number of words."""
    starts = [m.start() for m in WORD.finditer(text)]
    keep = max(0, params.low - ctx.excess())
    return _cut_after(text, starts, keep).rstrip(",;:") + "."


@operator("sentence_count", "pad", when=has_high)
def sentence_count_pad(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Add filler sentences past the maximum number of sentences."""
    target = params.high + ctx.excess()
    return pad(text, lambda t: len(sentence_starts(t)) >= target, ctx)


@operator("sentence_count", "cut", when=has_positive_low)
def sentence_count_cut(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Keep fewer sentences than the minimum."""
    keep = max(0, params.low - ctx.excess())
    return _cut_after(text, sentence_starts(text), keep)


def _separator(params: Any) -> str:
    return "\n\n" if params.separator == "blank_line" else "\n***\n"


FILLER_FOR_PARAGRAPHS = (
    "There is one more thing to keep in mind.",
    "Everything else stays exactly the same as before.",
    "That should cover the main part of the question.",
)


def _paragraphs(text: str, params: Any) -> int:
    return sum(1 for a, b in paragraph_spans(text, params.separator) if text[a:b].strip())


@operator("paragraph_count", "split", when=has_high)
def paragraph_count_split(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Append filler paragraphs past the maximum number of paragraphs."""
    target, out = params.high + ctx.excess(), text
    while _paragraphs(out, params) < target:
        out += _separator(params) + ctx.rng.choice(FILLER_FOR_PARAGRAPHS)
    return out


@operator("paragraph_count", "merge", when=lambda p: (p.low or 0) >= 2)
def paragraph_count_merge(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Merge all paragraphs into one (below a minimum of two or more)."""
    parts = [text[a:b].strip() for a, b in paragraph_spans(text, params.separator)]
    merged = " ".join(part for part in parts if part)
    return tidy(merged) if merged != text else None


def _chars(text: str, spaces: bool) -> int:
    return len(text) if spaces else len("".join(text.split()))


@operator("char_count", "pad", when=has_high)
def char_count_pad(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Pad the text with filler sentences past the maximum number of characters."""
    target = params.high + ctx.excess()
    return pad(text, lambda t: _chars(t, params.spaces) >= target, ctx)


@operator("char_count", "cut", when=has_positive_low)
def char_count_cut(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Cut the text below the minimum number of characters."""
    return text[: max(0, params.low - ctx.excess())]


def _letters(text: str, letter: str) -> list[int]:
    return [i for i, c in enumerate(text) if c.casefold() == letter.casefold()]


@operator("letter_count", "add", when=has_high)
def letter_count_add(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Add sentences of words containing the letter past its maximum count."""
    words = [w for w in VOCABULARY if params.letter.casefold() in w]
    if not words:
        return None
    sentences = tuple(f"{w.capitalize()} {ctx.rng.choice(words)}." for w in words)
    target = params.high + ctx.excess()
    return pad(text, lambda t: len(_letters(t, params.letter)) >= target, ctx, sentences)


@operator("letter_count", "remove", when=has_positive_low)
def letter_count_remove(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Delete occurrences of the letter until fewer than the minimum remain."""
    drop = set(_letters(text, params.letter)[max(0, params.low - ctx.excess()) :])
    return "".join(c for i, c in enumerate(text) if i not in drop)


@operator("uppercase_word_count", "shout", when=has_high)
def uppercase_shout(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Write words in capitals past the maximum number of all-caps words."""
    need = params.high + ctx.excess() - len(caps_words(text, params.min_letters))
    quiet = [m for m in WORD.finditer(text) if len(m.group()) > 1 and not m.group().isupper()]
    if need <= 0 or len(quiet) < need:
        return None
    chosen = sorted(ctx.rng.sample(quiet, need), key=lambda m: m.start(), reverse=True)
    for match in chosen:
        text = text[: match.start()] + match.group().upper() + text[match.end() :]
    return text


@operator("uppercase_word_count", "unshout", when=has_positive_low)
def uppercase_unshout(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Write all-caps words in small letters, below the minimum."""
    for start, end in reversed(caps_words(text, params.min_letters)):
        text = text[:start] + _unshouted(text[start:end]) + text[end:]
    return text


def _unshouted(word: str) -> str:
    small = word.capitalize()  # "NASA" -> "Nasa"; "I" and "B5" stay capitals, so lower them
    return word.lower() if small.isupper() else small


def _lines(prefix: str, count: int, ctx: MutationContext) -> str:
    items = ctx.rng.sample(VOCABULARY, min(count, len(VOCABULARY)))
    return "\n".join(prefix.format(n=n, item=item) for n, item in enumerate(items, start=1))


@operator("bullet_list", "add", when=has_high)
def bullet_list_add(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Append bullet items past the maximum."""
    pattern = bullet_pattern(params.markers, params.space_after)
    need = params.high + ctx.excess() - len(pattern.findall(text))
    return f"{text.rstrip()}\n{_lines('- {item}', need, ctx)}" if need > 0 else None


@operator("bullet_list", "unbullet", when=has_positive_low)
def bullet_list_unbullet(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Remove the bullet markers."""
    return re.sub(r"^([ \t]*)[-*+•][ \t]+", r"\1", text, flags=re.M)


@operator("numbered_list", "add", when=has_high)
def numbered_list_add(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Append numbered items past the maximum."""
    have = len(NUMBERED.findall(text))
    need = params.high + ctx.excess() - have
    items = _lines("{n}. {item}", have + need, ctx).split("\n")[have:]
    return f"{text.rstrip()}\n" + "\n".join(items) if need > 0 else None


@operator("numbered_list", "unnumber", when=has_positive_low)
def numbered_list_unnumber(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Remove the item numbers."""
    return re.sub(r"^([ \t]*)\d+[.)][ \t]+", r"\1", text, flags=re.M)


@operator("numbered_list", "renumber", when=lambda p: p.sequential)
def numbered_list_renumber(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Give one item a number out of sequence."""
    items = list(NUMBERED.finditer(text))
    if not items:
        return None
    item = ctx.rng.choice(items)
    wrong = str(int(item.group(1)) + 1 + ctx.rng.randint(0, 2))
    return text[: item.start(1)] + wrong + text[item.end(1) :]


@operator("highlighted_sections", "highlight", when=has_high)
def highlight_add(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Mark words in bold past the maximum number of highlights."""
    need = params.high + ctx.excess() - len(HIGHLIGHT.findall(text))
    words = [m for m in WORD.finditer(text) if len(m.group()) > 2]
    if need <= 0 or len(words) < need:
        return None
    for match in sorted(ctx.rng.sample(words, need), key=lambda m: m.start(), reverse=True):
        text = f"{text[: match.start()]}**{match.group()}**{text[match.end() :]}"
    return text


@operator("highlighted_sections", "unhighlight", when=has_positive_low)
def highlight_remove(text: str, params: Any, ctx: MutationContext) -> str | None:
    """Remove the Markdown emphasis."""
    return HIGHLIGHT.sub(lambda m: m.group().strip("*"), text)
