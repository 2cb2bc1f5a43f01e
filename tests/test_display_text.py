"""Text as a student reads it, apart from the text the index reads:
symbol-font bullets shown as "•", Markdown sources rendered to their words, runs of glyphs no font
map reads left out and counted (worker/text/display.py, worker/ingest/pdf_figures.py,
worker/ingest/markdown_text.py, answerers.base.as_read).

The texts are our own: a made-up horticulture course (the Beamer deck of ``bench.slide_decks``)
and PDFs and READMEs written here.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from bench.answers import has_markup
from bench.slide_decks import beamer_deck
from syllabot.shared.schema import FileReport
from syllabot.worker.answerers.base import as_read, for_reader
from syllabot.worker.indexes.retrieval import hit_from_chunk
from syllabot.worker.ingest.chunking import chunk_document
from syllabot.worker.ingest.loaders import load_document
from syllabot.worker.ingest.markdown_text import rendered
from syllabot.worker.text.display import BULLET, find_bullets, shown
from syllabot.worker.text.documents import Chunk
from tests.fakes import pdf_of

_LIMIT = 50 * 2**20


def _read(chunk: Chunk) -> str:
    return as_read(hit_from_chunk(chunk, 1, 0.0, 0.0, 0.0)).text


def test_symbol_bullets_are_shown_as_bullets_and_indexed_as_read() -> None:
    chunks = chunk_document(load_document(beamer_deck(), "lecture05.pdf", _LIMIT))
    index = "\n".join(c.text for c in chunks)
    student = "\n".join(_read(c) for c in chunks)
    # the index reads what PDFium reads: Beamer's msam triangle as "I"
    assert "I Reading a moisture probe" in index
    assert f"{BULLET} Reading a moisture probe" in student
    assert f"{BULLET} Sandy loam against clay" in student  # the nested list's smaller triangle too
    assert re.search(r"(?:^|\s)I (?:Reading|Sandy|Water|Irrigate)", student) is None, student
    # nothing else changes: same length, and a real letter "I" elsewhere stays
    assert [len(c.text) for c in chunks] == [len(_read(c)) for c in chunks]
    assert "dry when \u03b8 \u2264 0.2 and the top 5 cm crumble" in student


def test_a_pdfs_printed_asterisks_are_shown_as_asterisks_never_chat_emphasis() -> None:
    """A PDF's footnote marks ("use a kiln log** Glaze tests", "Kiln/ torch*") are the page's own
    characters: shown as "∗", the same look, so two of them never turn the words between into bold
    in Discord; a list's "* " bullet and a Markdown source's emphasis are left to their readers."""
    text = (
        "Probably fine, but best to check** Glaze tests (e.g., kiln logs) ✓? Kiln/ torch* use\n* Wedge first"
    )
    pdf = Chunk(chunk_id="p:0", doc_id="p", file="policy.pdf", title="Studio policy", text=text, page=2)
    student = _read(pdf)
    assert "check\u2217\u2217 Glaze" in student and "torch\u2217 use" in student
    assert "\n* Wedge first" in student and len(student) == len(text)
    assert not has_markup(student)
    md = dataclasses.replace(pdf, file="notes.md", text="Glaze **twice**.", markdown=True)
    assert "**" not in _read(md)  # rendered, as before


def test_bullets_are_found_by_non_space_offsets_whatever_the_spacing() -> None:
    text = "Grading\nI 40%  Two exams\nI 30% Homework"
    at = find_bullets(text, ["I40%Twoexams", "I30%Homework"])
    assert shown(text, at) == "Grading\n\u2022 40%  Two exams\n\u2022 30% Homework"
    assert (
        shown("Grading I 40% Two exams I 30% Homework", at)
        == "Grading \u2022 40% Two exams \u2022 30% Homework"
    )


def _pdf(content: bytes) -> bytes:
    """A one-page PDF: Helvetica as /F1, and as /F2 a CID font (Identity-H) with no ToUnicode map
    and no font program: PDFium reads its glyph numbers as characters."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Font /Subtype /Type0 /BaseFont /CodeSC /Encoding /Identity-H /DescendantFonts [7 0 R] >>",
        b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /CodeSC /CIDSystemInfo << /Registry (Adobe) "
        b"/Ordering (Identity) /Supplement 0 >> /FontDescriptor 8 0 R /DW 600 >>",
        b"<< /Type /FontDescriptor /FontName /CodeSC /Flags 4 /FontBBox [0 -200 1000 900] /ItalicAngle 0 "
        b"/Ascent 900 /Descent -200 /CapHeight 700 /StemV 80 >>",
    ]
    return pdf_of(objects)


def test_a_run_of_glyphs_no_map_reads_is_left_out_and_counted() -> None:
    content = (
        b"BT /F1 12 Tf 72 700 Td (Course:) Tj /F2 12 Tf 50 0 Td <0137014001350 1A601A401A5> Tj "
        b"/F1 12 Tf 50 0 Td (Greenhouse Crops) Tj ET\n"
        b"BT /F1 12 Tf 72 680 Td (The greenhouse crops lab meets on Tuesdays at nine.) Tj ET"
    )
    document = load_document(_pdf(content), "hort.pdf", _LIMIT)
    text = document.pages[0].text
    assert "Course:" in text and "Greenhouse Crops" in text and "meets on Tuesdays" in text
    assert re.search("[\u0100-\u024f]", text) is None, text
    assert document.dropped["undecoded_runs"] == 1
    report = FileReport(file="hort.pdf", ok=True, dropped=document.dropped)
    assert report.left_out() == "1 word in a font the PDF gives no letters for"


README = """# Greenhouse Crops

{% include toc.html %}

Download the [syllabus]({{ site.baseurl }}/assets/syllabus.pdf).
{: .btn .btn-blue}

Quizzes count for 15\\% of your grade and the **final project** for *40%*.
Light drives growth [@keeling:2019greenhouse; see @ortiz2021, p. 4], as @keeling:2019greenhouse shows.
Questions go to @crops_team or crops@example.edu; name files `week_1*draft*.csv`.

<table>
<tr><td>Week 1</td><td>Seed trays &amp; labels</td></tr>
</table>
"""


def test_a_markdown_source_is_read_rendered_and_indexed_as_today() -> None:
    chunks = chunk_document(load_document(README.encode(), "README.md", _LIMIT))
    index = "\n".join(c.text for c in chunks)
    student = "\n".join(_read(c) for c in chunks)
    assert "{{ site.baseurl }}" in index and "**final project**" in index  # the index as before
    for debris in ("{{", "{%", "{:", "@keeling", "[@", "\\%", "**", "*40%*", "&amp;", "<td>"):
        assert debris not in student, (debris, student)
    assert "Download the syllabus." in student
    assert "Quizzes count for 15% of your grade and the final project for 40%." in student
    assert "Light drives growth, as shows." in student
    assert "@crops_team or crops@example.edu" in student  # a handle and an address are words
    assert "`week_1*draft*.csv`" in student  # code as written
    assert "Week 1; Seed trays & labels" in student
    assert not has_markup(student)
    assert has_markup(index)


def test_rendered_reads_emphasis_only_where_markdown_makes_it() -> None:
    assert rendered("snake_case_name and 2 * 3 * 4 and a _note_ and ***all***") == (
        "snake_case_name and 2 * 3 * 4 and a note and all"
    )
    assert rendered("[see the notes](notes.md) [1]") == "see the notes [1]"


def _snapshot(chunks: list[Chunk]):
    from syllabot.worker.indexes.embedders.hashing import HashingEmbedder
    from syllabot.worker.indexes.index import build_snapshot

    embedder = HashingEmbedder(256)
    matrix = embedder.embed_documents([c.text for c in chunks])
    return build_snapshot("v1", "c", embedder.id, embedder.dim, chunks, matrix, "now"), embedder


def test_a_word_a_line_end_broke_is_shown_whole_when_the_collection_spells_it_whole(settings) -> None:
    """A course word no vocabulary holds ("sgraffito"), printed broken at a line end in one
    handout ("sgraf-fito" once the line is joined) and whole in the syllabus and another sheet:
    the reply shows it whole. A compound of two words ("kiln-fired") stays as printed, and so does
    a word the collection never spells whole."""
    from syllabot.worker.answerers.extractive import ExtractiveAnswerer
    from syllabot.worker.indexes.retrieval import related_hits, result_of, search_snapshot
    from syllabot.worker.query.reading import read_question

    def chunk(i: int, doc: str, text: str) -> Chunk:
        return Chunk(chunk_id=f"{doc}:{i}", doc_id=doc, file=f"{doc}.pdf", title=doc, text=text, page=1)

    chunks = [
        chunk(0, "syllabus", "Week 4 covers sgraffito on leather-hard pots."),
        chunk(1, "tools", "Sgraffito needs a loop tool and a coat of coloured slip."),
        chunk(
            2,
            "handout",
            "Studio handout. For sgraf-fito, brush the slip onto the pot and wait ten "
            "minutes. Kiln-fired pieces cool overnight. Use the glaze-tongs for dipping.",
        ),
    ]
    snapshot, embedder = _snapshot(chunks)
    question = "how long do i wait after brushing slip onto the pot"
    read = read_question(question, snapshot)
    vector = np.asarray(embedder.embed_query(read.text))
    selection, hits = search_snapshot(snapshot, vector, read, settings)
    result = result_of(
        snapshot, hits, related_hits(snapshot, read, hits), selection.fallback, "c", question, read
    )
    assert result.breaks == {"sgraf-fito": "sgraffito"}
    answer = ExtractiveAnswerer(settings).answer_sync(question, result, "c")
    assert "For sgraffito, brush the slip" in answer.text, answer.text
    assert "sgraf-fito" not in answer.text
    shown_handout = next(h.text for h in for_reader(result).hits if h.doc_id == "handout")
    assert "Kiln-fired pieces" in shown_handout and "glaze-tongs" in shown_handout
    # the index still reads what was printed
    assert "sgraf-fito" in snapshot.chunks[2].text


def test_broken_words_keeps_compounds_and_words_printed_broken_more_often() -> None:
    from syllabot.worker.text.display import broken_words, joined

    text = "Read the glaze-tongs note, then the trade-offs of reduc-tion firing."
    breaks = broken_words([text], lambda left, right: left + right != "glazetongs")
    # "trade-offs": two words; "glaze-tongs": printed broken at least as often as whole
    assert breaks == {"reduc-tion": "reduction"}
    assert joined(text, breaks) == "Read the glaze-tongs note, then the trade-offs of reduction firing."
