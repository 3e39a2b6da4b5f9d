"""Converters from DOCX, PDF and plain text to Markdown with ``#`` headings."""

from __future__ import annotations

import io
import logging
import re

from docket.errors import InputError
from docket.reading import one_line

log = logging.getLogger(__name__)

_NUMBERED = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,5})\.?[ \t]+(\S.*)$")
_LIST_ITEM = re.compile(r"^\d{1,3}[.)][ \t]+\S")
_BULLET = re.compile(r"^[•●▪◦‣–\-*][ \t]+")
_PAGE_NUMBER = re.compile(r"^(?:page[ \t]+)?\d{1,4}(?:[ \t]+of[ \t]+\d{1,4})?$", re.I)
_MINOR = frozenset(
    [
        "a",
        "an",
        "and",
        "as",
        "at",
        "but",
        "by",
        "for",
        "in",
        "of",
        "on",
        "or",
        "the",
        "to",
        "with",
        "vs",
        "via",
        "per",
    ]
)
MAX_HEADING_WORDS = 10


def docx_to_markdown(data: bytes, source: str) -> str:
    """DOCX bytes to Markdown via mammoth (HTML) and markdownify; keeps headings, lists, tables."""
    import mammoth
    from markdownify import markdownify

    try:
        result = mammoth.convert_to_html(io.BytesIO(data))
    except Exception as exc:  # mammoth raises zipfile/KeyError/XML errors on broken files
        reason = one_line(str(exc))[:200]
        raise InputError(
            f"cannot read the DOCX document ({type(exc).__name__}: {reason})", path=source
        ) from None
    for message in result.messages:
        log.info("%s: %s", source, message)
    markdown = markdownify(result.value, heading_style="ATX", bullets="-", strip=["img"])
    return re.sub(r"\n{3,}", "\n\n", markdown).strip() + "\n"


def pdf_to_markdown(data: bytes, source: str) -> str:
    """PDF bytes to Markdown: pypdf text per page, then heading heuristics."""
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise InputError("the PDF is encrypted", path=source, hint="save an unprotected copy")
        pages = [page.extract_text() or "" for page in reader.pages]
    except InputError:
        raise
    # pypdf parses untrusted bytes and raises whatever the damage leads to (PdfReadError,
    # but also TypeError, AttributeError, IndexError, RecursionError, zlib.error ...).
    except Exception as exc:
        reason = one_line(str(exc))[:200] or type(exc).__name__
        raise InputError(f"cannot read the PDF ({reason})", path=source) from None
    text = "\n\n".join(pages)
    if not text.strip():
        raise InputError(
            "the PDF has no extractable text", path=source, hint="is it a scan? run OCR first"
        )
    return text_to_markdown(text)


def text_to_markdown(text: str) -> str:
    """Plain text to Markdown, recognising headings and bullets.

    Headings: numbered lines (``2.1 Title``: level = number depth; a single number needs a
    Title Case title, since ``1. Do this`` is a list item), short ALL-CAPS lines (level 1)
    and short Title Case lines after a blank line (one level below the last numbered or
    capitalised heading). Page-number lines are dropped; bullet glyphs become ``-``.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    out: list[str] = []
    anchor_level = 0  # level of the last numbered / all-caps heading
    previous = ""  # the previous kept line, "" at a break
    for raw in lines:
        line = raw.strip()
        if _PAGE_NUMBER.match(line):
            continue
        level = heading_level(line, previous, anchor_level)
        previous = "" if level else line
        if level:
            if not _is_title_case_only(line):
                anchor_level = level
            out.extend(["", f"{'#' * level} {line}", ""])
        else:
            out.append(_BULLET.sub("- ", line) if line else "")
    markdown = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", markdown).strip() + "\n"


def heading_level(line: str, previous: str, anchor_level: int) -> int:
    """The heading level of ``line`` given the line before it (0 when it is not a heading).

    A heading cannot continue a sentence or a numbered list: the previous line must be
    empty, a heading, or end a sentence.
    """
    if (
        not line
        or len(line.split()) > MAX_HEADING_WORDS
        or line[-1] in ".,;:!?"
        or _BULLET.match(line)
    ):
        return 0
    after_break = not previous or previous[-1] in ".!?:"
    if _LIST_ITEM.match(previous) and _LIST_ITEM.match(line):
        return 0
    if match := _NUMBERED.match(line):
        depth = match.group(1).count(".") + 1
        if depth > 1 or (_title_case(match.group(2)) and after_break):
            return min(depth, 6)
        return 0
    letters = [c for c in line if c.isalpha()]
    if len(letters) >= 3 and all(c.isupper() for c in letters):
        return 1
    if after_break and _title_case(line):
        return min(anchor_level + 1, 6)
    return 0


def _title_case(text: str) -> bool:
    words = [w for w in re.findall(r"[^\W\d_][\w'’-]*", text)]
    if not words or not words[0][0].isupper():
        return False
    return all(w[0].isupper() or w.lower() in _MINOR for w in words)


def _is_title_case_only(line: str) -> bool:
    letters = [c for c in line if c.isalpha()]
    caps = bool(letters) and all(c.isupper() for c in letters)
    return not _NUMBERED.match(line) and not caps
