"""SOP ingestion: Markdown, plain text, DOCX and PDF into Markdown sections.

Everything becomes Markdown with ``#`` headings, then is split into sections that keep
the heading hierarchy and their line ranges, so extracted rules can cite where they
come from. DOCX goes through mammoth (HTML, keeping headings, lists and tables) and
markdownify; PDF text comes from pypdf, and headings are recovered by heuristics
(numbered headings such as ``1.2 Title``, short ALL-CAPS or Title Case lines).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from docket.errors import InputError

DEFAULT_MAX_BYTES = 10 * 1024 * 1024
TEXT_SUFFIXES = {".md", ".markdown", ".txt", ".text"}
_ATX = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class SopSection:
    """One heading and the text directly under it (up to the next heading of any level).

    Attributes:
        path: the headings from the top down to this one.
        text: the Markdown body under the heading, without sub-sections.
        start_line: the heading's line (1-based) in :attr:`SopDocument.markdown`;
            for text before the first heading, its first line.
        end_line: the last line of the body (inclusive).
    """

    path: tuple[str, ...]
    text: str
    start_line: int
    end_line: int

    @property
    def title(self) -> str:
        """The section's own heading ('' for text before the first heading)."""
        return self.path[-1] if self.path else ""

    @property
    def level(self) -> int:
        """Depth in the hierarchy (0 for text before the first heading)."""
        return len(self.path)

    @property
    def path_text(self) -> str:
        """The heading path joined by `` > `` (``(preamble)`` before the first heading)."""
        return " > ".join(self.path) if self.path else "(preamble)"


@dataclass(frozen=True)
class SopDocument:
    """An SOP as structured Markdown.

    Attributes:
        source: the file it was read from.
        format: ``markdown``, ``text``, ``docx`` or ``pdf``.
        markdown: the whole document as Markdown.
        sections: the sections in document order.
    """

    source: str
    format: str
    markdown: str
    sections: tuple[SopSection, ...]

    def numbered(self, section: SopSection) -> str:
        """The section's lines prefixed by their line numbers (for prompts that cite lines)."""
        lines = self.markdown.split("\n")[section.start_line - 1 : section.end_line]
        return "\n".join(f"{section.start_line + i:>4}| {line}" for i, line in enumerate(lines))


def load_sop(path: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> SopDocument:
    """Read an SOP file (Markdown, text, DOCX or PDF) into sections.

    Args:
        path: the SOP file; the format comes from its content and extension.
        max_bytes: refuse larger files.

    Raises:
        InputError: missing, empty, too large, binary or unreadable file, or no text.
    """
    path = Path(path)
    data = _read_bytes(path, max_bytes)
    kind = detect_format(path, data)
    if kind == "pdf":
        from docket.adherence.authoring.convert import pdf_to_markdown

        markdown = pdf_to_markdown(data, str(path))
    elif kind == "docx":
        from docket.adherence.authoring.convert import docx_to_markdown

        markdown = docx_to_markdown(data, str(path))
    else:
        text = _decode(data, path)
        if kind == "markdown":
            markdown = text
        else:
            from docket.adherence.authoring.convert import text_to_markdown

            markdown = text_to_markdown(text)
    return sop_from_markdown(markdown, source=str(path), format=kind)


def sop_from_markdown(
    markdown: str, *, source: str = "<text>", format: str = "markdown"
) -> SopDocument:
    """Split Markdown into sections; raise InputError when it holds no text."""
    markdown = markdown.replace("\r\n", "\n").replace("\r", "\n").strip("\n") + "\n"
    if not markdown.strip():
        raise InputError(
            "the SOP has no text", path=source, hint="check that the file is the right one"
        )
    return SopDocument(source, format, markdown, tuple(split_sections(markdown)))


def _read_bytes(path: Path, max_bytes: int) -> bytes:
    try:
        size = path.stat().st_size
    except FileNotFoundError as exc:
        raise InputError("SOP file not found", path=str(path)) from exc
    if size == 0:
        raise InputError("the SOP file is empty", path=str(path))
    if size > max_bytes:
        raise InputError(
            f"the SOP file is {size / 1e6:.1f} MB, over the limit of {max_bytes / 1e6:.1f} MB",
            path=str(path),
            hint="split the SOP, or raise the limit with --max-sop-mb",
        )
    return path.read_bytes()


def detect_format(path: Path, data: bytes) -> str:
    """``pdf``, ``docx``, ``markdown`` or ``text`` from the content, then the extension."""
    if data.startswith(b"%PDF"):
        return "pdf"
    if data.startswith(b"PK\x03\x04"):
        if b"word/" in data[:4096] or path.suffix.lower() == ".docx":
            return "docx"
        raise InputError("a ZIP archive that is not a DOCX document", path=str(path), hint=_FORMATS)
    suffix = path.suffix.lower()
    if suffix in {".pdf", ".docx"}:
        raise InputError(f"the file is not a valid {suffix[1:].upper()} document", path=str(path))
    return "markdown" if suffix in {".md", ".markdown"} else "text"


_FORMATS = "supported: Markdown (.md), plain text (.txt), DOCX and PDF"


def _decode(data: bytes, path: Path) -> str:
    if b"\x00" in data[:8192]:
        raise InputError("binary file, not a text SOP", path=str(path), hint=_FORMATS)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not UTF-8 text (bad byte at offset {exc.start})",
            path=str(path),
            hint="save the file as UTF-8",
        ) from exc


def split_sections(markdown: str) -> list[SopSection]:
    """Sections of ``markdown`` by ATX headings (``#``...), ignoring fenced code blocks."""
    lines = markdown.split("\n")
    if lines and lines[-1] == "":
        lines = lines[:-1]
    headings = _headings(lines)
    sections: list[SopSection] = []
    stack: list[tuple[int, str]] = []
    first = headings[0][0] if headings else len(lines)
    if any(line.strip() for line in lines[:first]):
        sections.append(SopSection((), "\n".join(lines[:first]).strip("\n"), 1, first))
    for number, (index, level, title) in enumerate(headings):
        stack = [(lvl, t) for lvl, t in stack if lvl < level] + [(level, title)]
        end = headings[number + 1][0] if number + 1 < len(headings) else len(lines)
        body = "\n".join(lines[index + 1 : end]).strip("\n")
        sections.append(
            SopSection(
                tuple(t for _, t in stack), body, index + 1, _last_text_line(lines, index, end)
            )
        )
    return sections


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    found, in_fence = [], False
    for index, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and (match := _ATX.match(line)):
            found.append((index, len(match.group(1)), match.group(2).strip()))
    return found


def _last_text_line(lines: list[str], heading: int, end: int) -> int:
    last = end
    while last - 1 > heading and not lines[last - 1].strip():
        last -= 1
    return last


def read_upload(data: bytes, filename: str, *, max_bytes: int = DEFAULT_MAX_BYTES) -> SopDocument:
    """:func:`load_sop` for bytes already in memory (e.g. an HTTP upload)."""
    import tempfile

    if len(data) > max_bytes:
        raise InputError(f"the SOP is over the limit of {max_bytes / 1e6:.1f} MB", path=filename)
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / Path(filename).name
        target.write_bytes(data)
        document = load_sop(target, max_bytes=max_bytes)
    return SopDocument(filename, document.format, document.markdown, document.sections)


__all__ = [
    "DEFAULT_MAX_BYTES",
    "SopDocument",
    "SopSection",
    "load_sop",
    "read_upload",
    "sop_from_markdown",
]
