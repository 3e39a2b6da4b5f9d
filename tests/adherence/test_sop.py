"""SOP ingestion: Markdown, text, DOCX and PDF keep the section hierarchy; bad files are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from docket.adherence.authoring.convert import text_to_markdown
from docket.adherence.authoring.sop import load_sop, read_upload, sop_from_markdown
from docket.errors import InputError, UserError

from .sop_files import write_docx, write_pdf

ROOT = Path(__file__).resolve().parents[2]


def paths(document) -> list[str]:
    return [section.path_text for section in document.sections]


def test_example_markdown_sections_with_lines() -> None:
    document = load_sop(ROOT / "examples" / "sop" / "dialogue_sop.md")
    assert document.format == "markdown"
    turns = next(s for s in document.sections if s.title == "1.1 Turns")
    assert turns.path[1:] == ("1 Dialogue Structure", "1.1 Turns") and turns.level == 3
    lines = document.markdown.split("\n")
    assert lines[turns.start_line - 1] == "### 1.1 Turns"
    assert lines[turns.end_line - 1] == "- No turn may repeat an earlier turn word for word."
    assert turns.text.startswith("- A dialogue has between 4 and 12 turns.")
    numbered = document.numbered(turns)
    assert numbered.splitlines()[0] == f"{turns.start_line:>4}| ### 1.1 Turns"


def test_markdown_preamble_code_fences_and_levels() -> None:
    document = sop_from_markdown(
        "Intro line.\n\n# A\n\n```\n# not a heading\n```\n\n### C\n\ntext\n\n## B\nmore\n"
    )
    assert paths(document) == ["(preamble)", "A", "A > C", "A > B"]
    assert "# not a heading" in document.sections[1].text
    assert document.sections[0].start_line == 1 and document.sections[0].end_line == 2


def test_plain_text_headings_by_heuristics(tmp_path: Path) -> None:
    text = (
        "ANNOTATION GUIDE\n"
        "1 Purpose\n"
        "This guide is for annotators.\n"
        "1.1 Scope Of Work\n"
        "It covers dialogues.\n"
        "Steps to follow:\n"
        "1. write the first turn\n"
        "2. Check The Result\n"
        "\n"
        "Tone Rules\n"
        "• Be polite.\n"
        "12\n"
    )
    path = tmp_path / "guide.txt"
    path.write_text(text)
    document = load_sop(path)
    assert document.format == "text"
    # a Title Case heading goes one level below the last numbered or capitalised one
    expected = [
        "ANNOTATION GUIDE",
        "1 Purpose",
        "1 Purpose > 1.1 Scope Of Work",
        "1 Purpose > 1.1 Scope Of Work > Tone Rules",
    ]
    assert paths(document) == expected
    scope = document.sections[2].text
    assert "2. Check The Result" in scope  # a list item, not a heading
    assert "- Be polite." in document.sections[3].text
    assert "12" not in document.markdown.split("\n")  # the page number is dropped


def test_heuristics_do_not_take_sentences_for_headings() -> None:
    markdown = text_to_markdown(
        "Guide\nThe assistant must always greet the user politely.\nshort lower line\n"
    )
    assert "# The assistant" not in markdown and "# short" not in markdown


def test_docx_keeps_headings_lists_and_tables(tmp_path: Path) -> None:
    document = load_sop(write_docx(tmp_path / "guide.docx"))
    assert document.format == "docx"
    assert paths(document) == [
        "Annotation Guide",
        "Annotation Guide > Format",
        "Annotation Guide > Tone",
    ]
    fmt, tone = document.sections[1].text, document.sections[2].text
    assert "- Each assistant turn has at most 120 words." in fmt
    assert "1. Greet the user first." in tone and "2. Stay polite." in tone
    assert "| assistant | 120 words |" in tone


def test_pdf_recovers_numbered_and_capitalised_headings(tmp_path: Path) -> None:
    pages = [
        ["DIALOGUE GUIDE", "1 Purpose", "This guide is for annotators.", "1.1 Turn Length",
         "• Each assistant turn has at most 120 words.", "• Users write at least 3 words."],
        ["2 Tone", "Be polite at all times.", "2"],
    ]  # fmt: skip
    document = load_sop(write_pdf(tmp_path / "guide.pdf", pages))
    assert document.format == "pdf"
    assert paths(document) == [
        "DIALOGUE GUIDE",
        "1 Purpose",
        "1 Purpose > 1.1 Turn Length",
        "2 Tone",
    ]
    assert (
        document.sections[2].text
        == "- Each assistant turn has at most 120 words.\n- Users write at least 3 words."
    )
    assert document.sections[3].text == "Be polite at all times."


def test_format_is_detected_from_content_not_only_the_name(tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "guide.bin", [["1 Purpose", "Be kind."]])
    assert load_sop(pdf).format == "pdf"


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.md", b"", "the SOP file is empty"),
        ("blank.md", b"\n \n\t\n", "the SOP has no text"),
        ("image.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary file"),
        ("latin1.txt", "caf\xe9 rules".encode("latin-1"), "not UTF-8 text"),
        ("fake.pdf", b"this is not a pdf", "not a valid PDF"),
        ("fake.docx", b"plain text", "not a valid DOCX"),
        ("archive.zip", b"PK\x03\x04" + b"\x00" * 40, "ZIP archive that is not a DOCX"),
        ("broken.docx", b"PK\x03\x04" + b"\x00" * 40, "cannot read the DOCX"),
        ("broken.pdf", b"%PDF-1.4\ngarbage", "PDF"),
    ],
)
def test_bad_files_give_clear_user_errors(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(UserError) as info:
        load_sop(path)
    assert message in info.value.message and str(path) in info.value.message


def test_pdf_without_text_suggests_ocr(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        load_sop(write_pdf(tmp_path / "scan.pdf", [[]]))
    assert "no extractable text" in info.value.message and "OCR" in info.value.hint


def test_huge_files_are_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.md"
    path.write_text("# Big\n" + "x" * 2000)
    with pytest.raises(InputError) as info:
        load_sop(path, max_bytes=1000)
    assert "over the limit" in info.value.message and "--max-sop-mb" in info.value.hint


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        load_sop(tmp_path / "nope.md")


def test_read_upload_uses_the_file_name_for_the_format(tmp_path: Path) -> None:
    data = write_docx(tmp_path / "g.docx").read_bytes()
    document = read_upload(data, "upload.docx")
    assert document.source == "upload.docx" and document.format == "docx"
    with pytest.raises(InputError, match="over the limit"):
        read_upload(data, "upload.docx", max_bytes=10)
