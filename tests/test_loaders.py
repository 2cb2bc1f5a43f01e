"""Loaders on good and bad files: every unusable upload gets a typed error that says what to do.

Fixtures are generated here at test time (fpdf2, pypdf for encryption, python-docx, Pillow), so nothing binary is
committed; the real scanned syllabus comes from ../shared/data when present.
"""

from __future__ import annotations

import codecs
import io
import zipfile
from pathlib import Path

import pytest
from conftest import shared_data
from fpdf import FPDF
from PIL import Image, ImageDraw
from pypdf import PdfReader, PdfWriter

import syllabot.worker.ingest.loaders as loaders
from syllabot.shared.formats import SUPPORTED_TYPES
from syllabot.worker.ingest.loaders import (
    CorruptFile,
    EmptyDocument,
    EncryptedFile,
    IngestError,
    NoTextLayer,
    TooLarge,
    UnsupportedType,
    load_document,
    parse_front_matter,
    slugify,
)
from tests.fakes import pdf_of

MB = 1024 * 1024
LIMIT = 20 * MB


# ------------------------------------------------------------------------------------------------
# fixture builders
# ------------------------------------------------------------------------------------------------


def make_text_pdf(pages: list[str], title: str | None = None) -> bytes:
    """A real text-layer PDF, one string per page ("" makes a blank page)."""
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    if title:
        pdf.set_title(title)
    for text in pages:
        pdf.add_page()
        if text:
            pdf.multi_cell(0, 6, text)
    return bytes(pdf.output())


def make_png(tmp_path: Path) -> Path:
    image = Image.new("RGB", (400, 200), "white")
    ImageDraw.Draw(image).rectangle((20, 20, 380, 180), outline="black", width=4)
    path = tmp_path / "scan.png"
    image.save(path)
    return path


def make_scanned_pdf(tmp_path: Path, n_pages: int = 2) -> bytes:
    """Image-only pages: what a scanner produces without OCR."""
    png = make_png(tmp_path)
    pdf = FPDF()
    for _ in range(n_pages):
        pdf.add_page()
        pdf.image(str(png), x=10, y=10, w=180)
    return bytes(pdf.output())


def encrypt_pdf(data: bytes, user_password: str, owner_password: str | None = None) -> bytes:
    writer = PdfWriter(clone_from=io.BytesIO(data))
    writer.encrypt(user_password, owner_password=owner_password, algorithm="AES-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_docx(with_content: bool = True) -> bytes:
    import docx

    document = docx.Document()
    if with_content:
        document.core_properties.title = ""
        document.add_heading("Operating Systems syllabus", 0)
        table = document.add_table(rows=2, cols=4)
        for cell, text in zip(table.rows[0].cells, ["Course Code", "21CS44", "CIE Marks", "50"], strict=True):
            cell.text = text
        for cell, text in zip(table.rows[1].cells, ["Credits", "03", "SEE Marks", "50"], strict=True):
            cell.text = text
        document.add_heading("Module-1", 2)
        document.add_paragraph("Overview of kernels and system calls. The boot sequence.")
        document.add_heading("Module-2", 2)
        document.add_paragraph("Process scheduling; semaphores; monitors.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


SYLLABUS_PAGE_1 = """IV Semester
OPERATING SYSTEMS
Course Code: 21XY44 CIE Marks 50
Credits 03 Exam Hours 03
Module-1
Overview of kernels and system calls. The boot sequence.
Module-2
Threads: User and kernel threads; Thread pools."""

SYLLABUS_PAGE_2 = """Process Synchronization: Semaphores; Monitors.
Module-3
Deadlocks: Resource graphs; Deadlock avoidance; Recovery."""


# ------------------------------------------------------------------------------------------------
# good files
# ------------------------------------------------------------------------------------------------


def test_text_pdf_loads_page_by_page_with_physical_numbers() -> None:
    doc = load_document(make_text_pdf([SYLLABUS_PAGE_1, SYLLABUS_PAGE_2]), "21XY44.pdf", LIMIT)
    assert doc.kind == "pdf"
    assert [p.number for p in doc.pages] == [1, 2]
    assert "Module-2" in doc.pages[0].text and "Deadlocks" in doc.pages[1].text
    assert doc.doc_id == "21xy44"
    assert doc.subject == "21XY44 Operating Systems"
    assert doc.title == "21XY44 Operating Systems"  # no metadata title: the course title
    assert doc.warnings == []


def test_pdf_metadata_title_wins_and_a_picture_page_is_no_scan() -> None:
    data = make_text_pdf(["Some real text on the first page of the handout.", ""], title="Lab handout")
    doc = load_document(data, "handout.pdf", LIMIT)
    assert doc.title == "Lab handout"
    assert len(doc.pages) == 2
    assert doc.warnings == []  # one picture page of two: a slide deck's photo, not a scan


def test_a_pdf_mostly_without_text_is_warned_about_with_its_counts() -> None:
    text = "Some real text on the first page of the handout."
    doc = load_document(make_text_pdf([text, "", "", "", text]), "handout.pdf", LIMIT)
    [warning] = doc.warnings
    assert "3 of 5 pages have no text layer" in warning and "page(s) 2, 3, 4" in warning
    assert "OCR" in warning


def test_picture_slides_among_text_slides_are_not_warned_as_scans() -> None:
    slide = "Week 3: sampling distributions and the central limit theorem."
    doc = load_document(make_text_pdf([slide, "", slide, "", slide, slide]), "deck.pdf", LIMIT)
    assert doc.warnings == []


def test_pdf_with_owner_password_only_opens_with_empty_password() -> None:
    data = encrypt_pdf(make_text_pdf([SYLLABUS_PAGE_1]), user_password="", owner_password="owner-secret")
    assert PdfReader(io.BytesIO(data)).is_encrypted
    doc = load_document(data, "locked-but-readable.pdf", LIMIT)
    assert "Course Code" in doc.pages[0].text


def test_real_pdf_named_docx_is_loaded_as_pdf_with_a_warning() -> None:
    doc = load_document(make_text_pdf([SYLLABUS_PAGE_1]), "syllabus.docx", LIMIT)
    assert doc.kind == "pdf"
    assert any("contains a PDF document" in w for w in doc.warnings)


def test_docx_paragraphs_headings_and_table_cells_on_page_one() -> None:
    doc = load_document(make_docx(), "os-syllabus.docx", LIMIT)
    assert doc.kind == "docx"
    assert [p.number for p in doc.pages] == [1]
    text = doc.pages[0].text
    assert "Course Code 21CS44 CIE Marks 50" in text  # table row read in order, cells joined
    assert "## Module-1" in text and "semaphores" in text
    assert doc.title == "Operating Systems syllabus"
    assert doc.subject == "21CS44 Operating Systems syllabus"


def test_markdown_front_matter() -> None:
    text = (
        "---\nid: kc-returns-v3\ntitle: 'Returns policy'\nversion: 3.10\nstatus: Superseded\nlang: en\n---\n"
    )
    text += "## At a glance\n\nReturn within 30 days.\n"
    doc = load_document(text.encode(), "returns-policy.md", LIMIT)
    assert (doc.doc_id, doc.title, doc.version, doc.status, doc.lang) == (
        "kc-returns-v3",
        "Returns policy",
        "3.10",  # a string, not the float 3.1
        "superseded",
        "en",
    )
    assert doc.kind == "markdown"
    assert "id:" not in doc.pages[0].text and "## At a glance" in doc.pages[0].text


def test_markdown_without_front_matter_uses_heading_then_stem() -> None:
    doc = load_document(b"# Battery care\n\nCharge it.", "Battery Care.md", LIMIT)
    assert (doc.doc_id, doc.title, doc.version, doc.status) == (
        "battery-care",
        "Battery care",
        None,
        "current",
    )
    doc = load_document(b"Just text.", "notes_v2.md", LIMIT)
    assert doc.title == "notes_v2" and doc.doc_id == "notes-v2"


def test_markdown_unclosed_front_matter_warns() -> None:
    doc = load_document(b"---\nid: x\n\nBody text here.", "broken.md", LIMIT)
    assert doc.doc_id == "broken"
    assert any("no closing ---" in w for w in doc.warnings)


def test_bangla_markdown_lang_from_front_matter_or_script() -> None:
    body = "## এক নজরে\n\nনতুন সাইকেল ৩০ দিনের মধ্যে ফেরত দেওয়া যায়।\n"
    doc = load_document(
        ("---\nid: kc-returns-bn\nlang: bn\n---\n" + body).encode(), "returns-policy.bn.md", LIMIT
    )
    assert doc.lang == "bn" and doc.doc_id == "kc-returns-bn"
    doc = load_document(body.encode(), "shipping.bn.md", LIMIT)
    assert doc.lang == "bn" and doc.doc_id == "shipping-bn"


def test_text_utf8_with_bom_and_windows_1252_fallback() -> None:
    doc = load_document(codecs.BOM_UTF8 + "Café opens at 9.".encode(), "note.txt", LIMIT)
    assert doc.pages[0].text == "Café opens at 9." and doc.warnings == []
    doc = load_document("Café opens at 9.".encode("cp1252"), "note.txt", LIMIT)
    assert doc.pages[0].text == "Café opens at 9."
    assert any("not valid UTF-8" in w and "save it as UTF-8" in w for w in doc.warnings)


def test_slugify() -> None:
    assert slugify("RVCE_CI114TA_AI_Foundations") == "rvce-ci114ta-ai-foundations"
    assert slugify("  ") == "document"


def test_parse_front_matter_ignores_comments_and_odd_lines() -> None:
    fields, body, warnings = parse_front_matter("---\n# comment\nid: a\nnot a field\n---\nbody")
    assert fields == {"id": "a"} and body == "body" and warnings == []


# ------------------------------------------------------------------------------------------------
# bad files
# ------------------------------------------------------------------------------------------------


def test_too_large_is_refused_before_any_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("parsed an oversized upload")

    monkeypatch.setattr(loaders, "_sniff", boom)
    monkeypatch.setattr(loaders, "_load_pdf", boom)
    data = b"%PDF" + b"0" * (50 * MB)
    with pytest.raises(TooLarge) as info:
        load_document(data, "booklet.pdf", LIMIT)
    message = str(info.value)
    assert "booklet.pdf is 50.0 MB" in message and "20.0 MB limit" in message and "split" in message
    assert info.value.file == "booklet.pdf"


def test_password_protected_pdf() -> None:
    data = encrypt_pdf(make_text_pdf([SYLLABUS_PAGE_1]), user_password="secret")
    with pytest.raises(EncryptedFile, match=r"locked\.pdf is password-protected; remove the password"):
        load_document(data, "locked.pdf", LIMIT)


def test_image_only_pdf_has_no_text_layer(tmp_path: Path) -> None:
    with pytest.raises(NoTextLayer) as info:
        load_document(make_scanned_pdf(tmp_path), "scan.pdf", LIMIT)
    message = str(info.value)
    assert (
        "no extractable text (scanned PDF?)" in message
        and "run OCR" in message
        and "upload the result" in message
    )


def test_real_scanned_syllabus_raises_no_text_layer() -> None:
    path = shared_data("syllabi", "21MATCS41-scanned.pdf")
    with pytest.raises(
        NoTextLayer,
        match=r"21MATCS41-scanned\.pdf has no extractable text \(scanned PDF\?\): none of its 6 page",
    ):
        load_document(path.read_bytes(), path.name, LIMIT)


@pytest.mark.parametrize("cut", [60, 400])
def test_truncated_pdf_is_corrupt(cut: int) -> None:
    data = make_text_pdf([SYLLABUS_PAGE_1])[:cut]
    with pytest.raises(
        CorruptFile, match=r"report\.pdf is not a readable PDF \(.+\); re-export it or upload"
    ):
        load_document(data, "report.pdf", LIMIT)


def test_garbage_named_pdf_is_corrupt() -> None:
    with pytest.raises(CorruptFile, match="no PDF header"):
        load_document(b"this is not a pdf at all\n" * 10, "report.pdf", LIMIT)


def test_png_named_pdf_is_refused_as_what_it_is(tmp_path: Path) -> None:
    data = make_png(tmp_path).read_bytes()
    with pytest.raises(UnsupportedType) as info:
        load_document(data, "photo-of-syllabus.pdf", LIMIT)
    message = str(info.value)
    assert "contains a PNG image, not a PDF" in message and "OCR" in message


def test_zip_that_is_not_a_docx() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        archive.writestr("notes.txt", "hello")
    with pytest.raises(
        CorruptFile, match=r"not a readable Word document \(a ZIP archive without word/document\.xml\)"
    ):
        load_document(buf.getvalue(), "syllabus.docx", LIMIT)


def test_truncated_docx_is_corrupt() -> None:
    with pytest.raises(CorruptFile, match="not a readable Word document"):
        load_document(make_docx()[:300], "syllabus.docx", LIMIT)


def test_spreadsheet_named_docx_is_unsupported() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        archive.writestr("xl/workbook.xml", "<workbook/>")
    with pytest.raises(UnsupportedType, match="contains an Excel workbook"):
        load_document(buf.getvalue(), "marks.docx", LIMIT)


@pytest.mark.parametrize("filename", ["slides.pptx", "syllabus.doc", "README", "table.csv"])
def test_unsupported_extensions_list_the_supported_types(filename: str) -> None:
    with pytest.raises(UnsupportedType) as info:
        load_document(b"some,plain,text\n", filename, LIMIT)
    assert f"supported types are {SUPPORTED_TYPES}" in str(info.value)
    assert "web pages (.html)" in SUPPORTED_TYPES and "reStructuredText (.rst)" in SUPPORTED_TYPES


def test_binary_named_txt_is_corrupt() -> None:
    with pytest.raises(CorruptFile, match="not readable text"):
        load_document(b"\x00\x01\x02\x03binary" * 10, "notes.txt", LIMIT)


@pytest.mark.parametrize(
    ("data", "filename"),
    [(b"", "empty.pdf"), (b"   \n\t ", "blank.txt"), (b"---\nid: x\n---\n\n", "only-front-matter.md")],
)
def test_empty_documents(data: bytes, filename: str) -> None:
    with pytest.raises(EmptyDocument):
        load_document(data, filename, LIMIT)


def test_docx_without_text_is_empty() -> None:
    with pytest.raises(EmptyDocument, match="contains no text"):
        load_document(make_docx(with_content=False), "blank.docx", LIMIT)


def test_every_error_is_a_value_error_with_advice() -> None:
    for cls in (TooLarge, UnsupportedType, CorruptFile, EncryptedFile, NoTextLayer, EmptyDocument):
        assert issubclass(cls, IngestError) and issubclass(cls, ValueError)


def test_real_syllabus_pages_are_physical_not_printed_labels() -> None:
    path = shared_data("syllabi", "RVCE_CI114TA_AI_Foundations.pdf")
    doc = load_document(path.read_bytes(), path.name, LIMIT)
    assert [p.number for p in doc.pages] == [1, 2]  # printed "Page 64", "Page 65"
    assert doc.subject == "CI114TA AI Foundations for Engineers"
    assert doc.doc_id == "rvce-ci114ta-ai-foundations"


def test_text_that_mentions_the_pdf_magic_is_still_text() -> None:
    doc = load_document(b"# Notes\n\nA PDF file starts with %PDF-1.7 in its header.\n", "notes.md", LIMIT)
    assert doc.kind == "markdown"
    doc = load_document(b"\x00\x01junk" + make_text_pdf([SYLLABUS_PAGE_1]), "prefixed.pdf", LIMIT)
    assert doc.kind == "pdf"


# ------------------------------------------------------------------------------------------------
# text no reader sees
# ------------------------------------------------------------------------------------------------


def make_hidden_text_pdf(tmp_path: Path) -> bytes:
    """Page 1: a visible syllabus line, a white answer key and a 0.1 pt note; page 2: white text on
    a dark panel; page 3: an OCR-style invisible layer over a scanned image."""
    from fpdf.enums import TextMode

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.text(20, 20, "Quiz 1 covers chapters one and two.")
    pdf.set_text_color(255, 255, 255)
    pdf.text(20, 40, "Answer key: 1b 2c 3a")
    pdf.set_text_color(0, 0, 0)
    pdf.set_font_size(0.1)
    pdf.text(20, 60, "Tiny note for graders only")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.set_fill_color(20, 20, 40)
    pdf.rect(10, 10, 190, 60, style="F")
    pdf.set_text_color(255, 255, 255)
    pdf.text(20, 30, "Dark slide title in white")
    pdf.add_page()
    pdf.image(str(make_png(tmp_path)), x=10, y=10, w=180)
    pdf.set_text_color(0, 0, 0)
    pdf.text_mode = TextMode.INVISIBLE
    pdf.text(20, 40, "Recognised text of the scanned page")
    return bytes(pdf.output())


def test_invisible_text_is_not_indexed_but_white_on_dark_and_ocr_layers_are(tmp_path: Path) -> None:
    doc = load_document(make_hidden_text_pdf(tmp_path), "quiz.pdf", LIMIT)
    first, second, third = (p.text for p in doc.pages)
    assert "Quiz 1 covers chapters one and two." in first
    assert "Answer" not in first and "1b" not in first and "graders" not in first
    assert "Dark slide title in white" in second
    assert "Recognised text of the scanned page" in third
    assert doc.dropped["hidden_chars"] == len("Answerkey:1b2c3a") + len("Tinynoteforgradersonly")


def make_page_over_a_clipped_page() -> bytes:
    """A syllabus page drawn over another page placed as a form XObject and clipped to its top
    strip (how a letterhead is reused): the placed page's text is drawn, and cut away."""
    form = (
        b"q 0 742 612 50 re W n BT /F1 12 Tf 72 760 Td (University letterhead) Tj ET "
        b"BT /F1 12 Tf 72 600 Td (Exam solutions: question one is b) Tj ET Q"
    )
    content = b"/Fm1 Do BT /F1 12 Tf 72 500 Td (Office hours are on Tuesdays.) Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> /XObject << /Fm1 6 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> "
        b"/Length %d >>\nstream\n%s\nendstream" % (len(form), form),
    ]
    return pdf_of(objects)


def test_text_a_clipping_path_cuts_away_is_not_indexed() -> None:
    doc = load_document(make_page_over_a_clipped_page(), "syllabus.pdf", LIMIT)
    text = doc.pages[0].text
    assert "Office hours are on Tuesdays." in text and "University letterhead" in text
    assert "solutions" not in text
    assert doc.dropped["hidden_chars"] == len("Examsolutions:questiononeisb")
