"""Builders for small DOCX and PDF SOP files used by the ingestion tests."""

from __future__ import annotations

from pathlib import Path


def write_pdf(path: Path, pages: list[list[str]]) -> Path:
    """A minimal PDF (Helvetica, one text line per entry) whose text pypdf can extract."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>")
    font_id = 3 + 2 * len(pages)
    for index, lines in enumerate(pages):
        content_id = 4 + 2 * index
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 {font_id} 0 R >> >> /Contents {content_id} 0 R >>"
        )
        stream = _content_stream(lines)
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
    objects.append(
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
    )
    out, offsets = "%PDF-1.4\n", []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out.encode("cp1252")))
        out += f"{number} 0 obj\n{body}\nendobj\n"
    xref = len(out.encode("cp1252"))
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n"
    out += "".join(f"{offset:010d} 00000 n \n" for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    path.write_bytes(out.encode("cp1252"))
    return path


def _content_stream(lines: list[str]) -> str:
    parts, y = ["BT", "/F1 11 Tf"], 740
    for line in lines:
        escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        parts.append(f"1 0 0 1 72 {y} Tm ({escaped}) Tj")
        y -= 18
    parts.append("ET")
    return "\n".join(parts)


def write_docx(path: Path) -> Path:
    """A DOCX with heading styles, a bullet list, a numbered list and a table."""
    import docx

    document = docx.Document()
    document.add_heading("Annotation Guide", level=1)
    document.add_paragraph("Rules for writing support dialogues.")
    document.add_heading("Format", level=2)
    document.add_paragraph("Each assistant turn has at most 120 words.", style="List Bullet")
    document.add_paragraph("No turn contains a URL.", style="List Bullet")
    document.add_heading("Tone", level=2)
    document.add_paragraph("Greet the user first.", style="List Number")
    document.add_paragraph("Stay polite.", style="List Number")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Role", "Limit"
    table.cell(1, 0).text, table.cell(1, 1).text = "assistant", "120 words"
    document.save(str(path))
    return path
