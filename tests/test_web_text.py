"""Course web pages and reStructuredText read as a reader sees them (worker/ingest/web_text.py), and
loaded and chunked like Markdown (worker/ingest/loaders.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from syllabot.shared.formats import is_document_name
from syllabot.worker.ingest.chunking import chunk_document
from syllabot.worker.ingest.loaders import CorruptFile, UnsupportedType, load_document
from syllabot.worker.ingest.web_text import html_text, rst_text

PAGE = """<!doctype html>
<html lang="en-GB"><head><title>STAT 20 syllabus</title>
<style>p { color: red }</style><script>var secret = "script text";</script></head>
<body>
<nav><a href="/">Home</a> <a href="/people">People</a></nav>
<div role="banner">University site banner</div>
<main>
  <h1>STAT 20: Introduction to probability</h1>
  <p>Office hours are on <b>Tuesdays</b> at 2pm in
     room 110.</p>
  <h2>Grading</h2>
  <table>
    <tr><th>Component</th><th>Weight</th></tr>
    <tr><td>Problem sets</td><td>40%</td></tr>
    <tr><td>Final exam</td><td>60%</td></tr>
  </table>
  <ul><li>Bring a calculator</li><li>Late work loses <em>10%</em> per day</li></ul>
  <div style="display: none">answer key: (b)</div>
  <p hidden>draft paragraph</p>
  <dl><dt>Instructor</dt><dd>Dr. Lovelace</dd><dt>Room</dt><dd>Evans 60</dd></dl>
  <pre>x &lt;- c(1, 2)
mean(x)</pre>
</main>
<footer>Copyright the university</footer>
</body></html>"""


def test_a_page_is_its_main_content_with_headings_rows_and_lists() -> None:
    page = html_text(PAGE)
    assert page.title == "STAT 20 syllabus" and page.lang == "en"
    lines = page.text.split("\n\n")
    assert lines[:3] == [
        "# STAT 20: Introduction to probability",
        "Office hours are on Tuesdays at 2pm in room 110.",
        "## Grading",
    ]
    assert "| Component: Problem sets; Weight: 40% |" in lines
    assert "| Component: Final exam; Weight: 60% |" in lines
    assert "• Late work loses 10% per day" in lines
    assert "Instructor: Dr. Lovelace" in lines and "Room: Evans 60" in lines
    assert "x <- c(1, 2)\nmean(x)" in lines  # code keeps its lines


@pytest.mark.parametrize(
    "never", ["script text", "color", "Home", "People", "site banner", "answer key", "draft", "Copyright"]
)
def test_navigation_scripts_styles_and_hidden_elements_are_not_read(never: str) -> None:
    assert never not in html_text(PAGE).text


def test_a_page_without_main_reads_its_body_and_names_itself_by_its_heading() -> None:
    page = html_text("<body><h1>Week 3</h1><p>Sampling <a href='x.pdf'>notes</a> and more.</p></body>")
    assert page.text == "# Week 3\n\nSampling notes and more."
    assert page.title == "Week 3" and page.lang is None


RST = """STAT 20 syllabus
================

:Instructor: Dr. Lovelace
:Room: Evans 60

Grading
-------

+--------------+--------+
| Component    | Weight |
+==============+========+
| Problem sets | 40%    |
+--------------+--------+
| Final exam   | 60%    |
+--------------+--------+

.. include:: /etc/passwd

.. raw:: html

   <b>raw html</b>

* Bring a calculator
* Late work loses 10% per day

.. note:: Quizzes are weekly.

Schedule
--------

Week 1
   Probability spaces.
"""


def test_rst_headings_fields_grid_tables_and_lists() -> None:
    page = rst_text(RST)
    assert page.title == "STAT 20 syllabus"
    lines = page.text.split("\n\n")
    assert lines[0] == "# STAT 20 syllabus"
    assert "Instructor: Dr. Lovelace" in lines and "## Grading" in lines and "## Schedule" in lines
    assert "| Component: Problem sets; Weight: 40% |" in lines
    assert "• Late work loses 10% per day" in lines and "Quizzes are weekly." in lines
    assert "Week 1: Probability spaces." in lines


def test_rst_never_reads_a_file_of_the_server_or_passes_raw_markup() -> None:
    text = rst_text(RST).text
    assert "root:" not in text and "passwd" not in text and "raw html" not in text


def test_web_pages_and_rst_load_and_chunk_by_their_headings() -> None:
    doc = load_document(PAGE.encode(), "stat20.html", 10_000_000)
    assert (doc.kind, doc.title, doc.doc_id) == ("html", "STAT 20 syllabus", "stat20")
    sections = {c.section for c in chunk_document(doc)}
    assert "Grading" in sections
    doc = load_document(RST.encode(), "stat20.rst", 10_000_000)
    assert doc.kind == "rst" and "Grading" in {c.section for c in chunk_document(doc)}
    assert load_document(PAGE.encode(), "old.htm", 10_000_000).kind == "html"


def test_the_names_every_front_end_accepts_include_web_pages_and_rst(tmp_path: Path) -> None:
    assert all(is_document_name(n) for n in ("a.html", "b.HTM", "c.rst", "d.pdf", "e.md"))
    assert not is_document_name("f.pptx")


def test_a_web_page_named_md_or_binary_named_html_is_refused() -> None:
    with pytest.raises(UnsupportedType, match=r"rename it to \.html"):
        load_document(PAGE.encode(), "notes.md", 10_000_000)
    with pytest.raises(CorruptFile, match="not readable text"):
        load_document(b"\x00\x01\x02binary" * 20, "page.html", 10_000_000)
