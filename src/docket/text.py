"""Where sentences end: shared by evidence ids (relevance) and sentence counts (adherence).

Callers build on :func:`sentence_ends`: the relevance splitter also lets a lowercase
start continue a sentence and breaks at blank lines, while the ``sentence_count`` check
counts sentences by their offsets in the raw text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# Words whose trailing period does not end a sentence.
ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "sr",
        "jr",
        "st",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "fig",
        "approx",
        "inc",
        "ltd",
        "co",
        "u.s",
        "u.k",
        "u.s.a",
        "ph.d",
        "mt",
        "vol",
        "dept",
        "est",
        "a.m",
        "p.m",
        "cf",
        "al",
    ]
)
# Words that abbreviate only before a number: "No. 5", "nos. 3-4"; "No. And ..." ends a sentence.
NUMBER_ABBREVIATIONS = frozenset(["no", "nos", "nr"])
# Terminal punctuation with any closing quotes, brackets or Markdown emphasis ("*One.* Two."),
# then whitespace or the end.
SENTENCE_END = re.compile(r"[.!?\u2026]+[\"'\u201d\u2019)\]*_]*(?=\s|$)")
_NUMBER_NEXT = re.compile(r"\s*[#(]?\d")
# A list marker alone at the start of a line: "1", "12", "iv" (before its period).
_LIST_MARKER = re.compile(r"[ \t]*(?:\d{1,3}|[ivxlc]{1,5})", re.IGNORECASE)


def sentence_ends(text: str) -> Iterator[re.Match[str]]:
    """The runs of terminal punctuation in ``text`` that end a sentence.

    A run ends a sentence unless its period follows an abbreviation (``Dr.``, ``e.g.``;
    ``No.`` only before a number, as in ``No. 5``), an initial (``J. Smith``) or a list
    marker alone at the start of a line (the ``1.`` of ``1. Apples are red.``). A period
    inside a number (``3.5``) is never an end, as it is not followed by a space. Closing
    quotes, brackets and Markdown emphasis after the punctuation belong to the sentence
    they close (``*One.* Two.`` is two sentences).

    Args:
        text: the text to scan.

    Yields:
        Matches of :data:`SENTENCE_END`, in order; ``match.end()`` is where the sentence stops.
    """
    begin = 0
    for match in SENTENCE_END.finditer(text):
        before, after = text[begin : match.start()], text[match.end() : match.end() + 8]
        if not is_abbreviation(before, match.group(), after) and not is_list_marker(
            before, match.group()
        ):
            yield match
            begin = match.end()


def is_abbreviation(before: str, terminator: str, after: str = "") -> bool:
    """Whether ``terminator`` (e.g. ``"."``) right after ``before`` marks an abbreviation.

    Args:
        before: the text before the punctuation (its last word is the one tested).
        terminator: the punctuation run, with any closing quotes or brackets.
        after: the text after the run (its start is enough); ``No.`` abbreviates
            "number" only when a number follows.

    Returns:
        True when the run starts with a period straight after a listed abbreviation, a
        single letter (an initial, as in ``J. Smith``) or ``No.`` before a number; False
        otherwise.
    """
    if not terminator.startswith(".") or not before or before[-1].isspace():
        return False
    word = before.rsplit(None, 1)[-1].rstrip(".").lower().lstrip("(\"'*_")
    if word in NUMBER_ABBREVIATIONS:
        return _NUMBER_NEXT.match(after) is not None
    return word in ABBREVIATIONS or (len(word) == 1 and word.isalpha())


def is_list_marker(before: str, terminator: str) -> bool:
    """Whether ``terminator`` closes a list marker (``1.``, ``iv.``) that opens its line.

    Args:
        before: the text since the last sentence end; its last line is the one tested.
        terminator: the punctuation run.

    Returns:
        True when the run is a single period and the line so far holds only a number of at
        most three digits or a roman numeral.
    """
    if terminator != ".":
        return False
    line = before.rsplit("\n", 1)[-1]
    return _LIST_MARKER.fullmatch(line) is not None
