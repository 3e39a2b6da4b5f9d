"""Sentences of a chunk, their ids ``S1..Sn``, and validation of cited evidence ids."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from docket.text import sentence_ends

_LIST_START = re.compile(r"^(?:[-*\u2022#>]|\d+[.)]\s)")
_ID = re.compile(r"\bS?\s*(\d+)\b", re.I)


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences, keeping each sentence's own words.

    Sentences end at ``.``, ``!``, ``?`` followed by whitespace and a non-lowercase start,
    except after common abbreviations and initials. Blank lines always end a sentence;
    a single line break does too when the line ends with punctuation or the next one is a
    list item or heading (hard-wrapped lines are joined).

    Args:
        text: the chunk text.

    Returns:
        Non-empty sentences with whitespace collapsed; ``[]`` for blank text.
    """
    return list(_sentences_of(text))


# A pair's chunk is split by every prompt and every transcript turn of its judgment (DREAM:
# agents x rounds), and splitting costs more than the rest of a turn's bookkeeping, so the
# split is remembered for the chunks of the pairs in flight.
@lru_cache(maxsize=4096)
def _sentences_of(text: str) -> tuple[str, ...]:
    sentences: list[str] = []
    for block in _blocks(text):
        sentences.extend(_split_block(block))
    return tuple(sentences)


def _blocks(text: str) -> list[str]:
    blocks: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text.strip()):
        current: list[str] = []
        for line in (raw.strip() for raw in paragraph.splitlines()):
            if not line:
                continue
            if current and (_LIST_START.match(line) or current[-1][-1] in ".!?:;"):
                blocks.append(" ".join(current))
                current = []
            current.append(line)
        if current:
            blocks.append(" ".join(current))
    return blocks


def _split_block(block: str) -> list[str]:
    block = re.sub(r"\s+", " ", block).strip()
    pieces, start = [], 0
    for match in sentence_ends(block):
        # Whitespace is collapsed, so the next sentence would start one space further on.
        if block[match.end() + 1 : match.end() + 2].islower():
            continue
        pieces.append(block[start : match.end()].strip())
        start = match.end()
    pieces.append(block[start:].strip())
    return [piece for piece in pieces if piece]


def sentence_id(index: int) -> str:
    """The id of the 1-based sentence ``index``: ``S<index>``."""
    return f"S{index}"


def number_sentences(sentences: Sequence[str]) -> str:
    """Render sentences one per line as ``[S1] ...``, ``[S2] ...``."""
    return "\n".join(f"[{sentence_id(i)}] {s}" for i, s in enumerate(sentences, start=1))


def parse_evidence_ids(value: str | Iterable[object]) -> list[int]:
    """Read sentence numbers from ``"S2, S4"``, ``"[S2] [S4]"``, ``"2 and 4"`` or a list.

    Text such as ``none`` gives ``[]``. Duplicates are dropped, order is kept. Numbers are
    not range-checked here; see :func:`validate_evidence`.
    """
    text = value if isinstance(value, str) else " ".join(str(item) for item in value)
    ids: list[int] = []
    for match in _ID.finditer(text):
        number = int(match.group(1))
        if number not in ids:
            ids.append(number)
    return ids


def validate_evidence(ids: Iterable[int], n_sentences: int) -> tuple[list[int], list[int]]:
    """Split cited ids into those that exist in a chunk of ``n_sentences`` and the rest."""
    valid = [i for i in ids if 1 <= i <= n_sentences]
    invalid = [i for i in ids if not 1 <= i <= n_sentences]
    return valid, invalid
