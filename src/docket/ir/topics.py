"""TREC topic files: ``<top> <num> <title> <desc> <narr> </top>`` blocks (SGML-like).

Both the classic layout (a tag opens a field that runs until the next tag, with labels
such as ``Number:`` and ``Description:``) and closed tags (``<title>...</title>``) are
read. The query text is one field, or several joined by a space (``title,desc``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from docket.errors import InputError, UserError

FIELDS: dict[str, str] = {
    "title": "title",
    "desc": "desc",
    "description": "desc",
    "narr": "narr",
    "narrative": "narr",
}
_TAG = re.compile(r"<\s*(/?)\s*(top|num|title|desc|narr)\s*>", re.I)
_LABEL = re.compile(r"^\s*(number|topic|description|narrative)\s*:\s*", re.I)


def looks_like_topics(text: str) -> bool:
    """True when the text starts (after blanks) with a ``<top>`` tag."""
    return re.match(r"\s*<\s*top\s*>", text, re.I) is not None


def parse_fields(spec: str) -> list[str]:
    """``"title,desc"`` -> ``["title", "desc"]``; names may be spelled out (``description``).

    Raises:
        UserError: an unknown field name.
    """
    names = [part.strip().lower() for part in spec.split(",") if part.strip()]
    unknown = [name for name in names if name not in FIELDS]
    if unknown or not names:
        raise UserError(
            f"unknown topic field '{','.join(unknown) or spec}'",
            hint="use title, desc or narr (or several, e.g. title,desc)",
        )
    return [FIELDS[name] for name in names]


def read_topics(path: str | Path, text: str, fields: Sequence[str] = ("title",)) -> dict[str, str]:
    """``{qid: text}`` from the content of a TREC topic file.

    Args:
        path: the file (for error messages).
        text: its content.
        fields: the fields that make up each query, in order.

    Raises:
        InputError: a topic without a number, or without any of the chosen fields, or a
            number given twice (names file, line and field).
    """
    topics: dict[str, str] = {}
    for line, block in _blocks(text):
        values = _fields(block)
        qid = _LABEL.sub("", values.get("num", "")).strip()
        if not qid:
            raise InputError("topic without a <num>", path=str(path), line=line, field="num")
        query = " ".join(v for f in fields if (v := _LABEL.sub("", values.get(f, "")).strip()))
        if not query:
            raise InputError(
                f"topic {qid} has no <{fields[0]}> text", path=str(path), line=line, field=fields[0]
            )
        if qid in topics:
            raise InputError(f"topic {qid} appears twice", path=str(path), line=line, field="num")
        topics[qid] = query
    return topics


LABELS = {"title": "Title", "desc": "Description", "narr": "Narrative"}


def read_topic_fields(path: str | Path, text: str, fields: Sequence[str]) -> dict[str, str]:
    """``{qid: text}`` of the chosen fields, each on its own labelled line
    (``Description: ...``); a topic without any of them gets "".

    Raises:
        InputError: a topic without a number, or a number given twice.
    """
    found: dict[str, str] = {}
    for line, block in _blocks(text):
        values = _fields(block)
        qid = _LABEL.sub("", values.get("num", "")).strip()
        if not qid:
            raise InputError("topic without a <num>", path=str(path), line=line, field="num")
        if qid in found:
            raise InputError(f"topic {qid} appears twice", path=str(path), line=line, field="num")
        parts = [(f, _LABEL.sub("", values.get(f, "")).strip()) for f in fields]
        found[qid] = "\n".join(f"{LABELS[f]}: {value}" for f, value in parts if value)
    return found


def _blocks(text: str) -> Iterator[tuple[int, str]]:
    """(line number of ``<top>``, content up to ``</top>``) for every topic."""
    for match in re.finditer(
        r"<\s*top\s*>(.*?)(?:<\s*/\s*top\s*>|(?=<\s*top\s*>)|\Z)", text, re.I | re.S
    ):
        yield text.count("\n", 0, match.start()) + 1, match.group(1)


def _fields(block: str) -> dict[str, str]:
    """Each opening tag's text, up to the next tag (opening or closing)."""
    values: dict[str, str] = {}
    tags = list(_TAG.finditer(block))
    ends = [tag.start() for tag in tags[1:]] + [len(block)]  # each tag's text ends here
    for tag, end in zip(tags, ends, strict=False):
        if tag.group(1):  # a closing tag opens nothing
            continue
        values.setdefault(tag.group(2).lower(), " ".join(block[tag.end() : end].split()))
    return values
