"""A PDF's layout carries its paragraphs: PDFium writes lines with no blank line between
paragraphs, so the loader puts one where the page leaves more space than between a paragraph's own
lines (``worker.ingest.pdf_text._paragraph_breaks``), and the chunker, which reads a short line after a blank one as a heading, sees the heading again."""

from __future__ import annotations

from fpdf import FPDF

from syllabot.worker.ingest.loaders import load_document


def _syllabus() -> bytes:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 5, "Orchard Studies 101\nSpring term", new_x="LMARGIN", new_y="NEXT")
    for heading, body in (
        ("Meeting times", "We meet on Tuesdays and Thursdays in the east greenhouse,\nfrom nine to ten."),
        ("Grading", "The pruning journal counts for thirty percent,\nthe grafting practical for the rest."),
    ):
        pdf.ln(9)  # the space an author leaves above a heading
        pdf.set_font("Helvetica", "B", 12)
        pdf.multi_cell(0, 5, heading, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=11)
        pdf.multi_cell(0, 5, body, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def test_space_above_a_line_is_a_blank_line_and_the_heading_is_seen() -> None:
    document = load_document(_syllabus(), "orchard.pdf", 10 * 2**20)
    text = document.pages[0].text
    assert "\n\nMeeting times\n" in text and "\n\nGrading\n" in text, text
    # the lines of one paragraph stay together
    assert "greenhouse,\nfrom nine" in text
    # the title's two lines are one paragraph too
    assert "Orchard Studies 101\nSpring term" in text
