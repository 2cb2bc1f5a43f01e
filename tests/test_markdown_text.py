"""Markdown links read as words before chunking (worker/ingest/markdown_text.py)."""

from __future__ import annotations

from syllabot.worker.ingest.chunking import chunk_document
from syllabot.worker.ingest.loaders import load_document
from syllabot.worker.ingest.markdown_text import markdown_lines, plain_links
from syllabot.worker.text.documents import Chunk, Document, Page

README = """# Field Ecology Lab

## Assignments

| Assignment | Point value | Status | Due date |
|------------|-------------|--------|----------|
| [Leaf litter lab](https://github.com/Lab/ecology/blob/main/labs/leaf_litter_lab.pdf) | 0 points | *inactive* | N/A |
| [Quadrat survey lab](https://github.com/Lab/ecology/blob/main/labs/quadrat_lab.pdf) | 15 points | *inactive* | March 14, 2025 |

```
see [x](https://example.org/raw)
```
"""


def test_a_link_is_its_text_and_its_site() -> None:
    assert plain_links("join [Slack](http://bio210.slack.com) now") == "join Slack (bio210.slack.com) now"
    assert (
        plain_links("[PDF](https://github.com/a/b/c.pdf) | [**.html**](https://x.org/y.html)")
        == "PDF | .html"
    )
    assert plain_links("see [the notes](notes.md#week-2)") == "see the notes"  # a relative link: its words
    assert plain_links("[https://www.example.edu](https://www.example.edu)") == "https://www.example.edu"
    assert (
        plain_links("[![DOI](https://zenodo.org/badge/1.svg)](https://zenodo.org/doi/1)")
        == "DOI (zenodo.org)"
    )
    assert plain_links(r"1. Introduction \[[**.pdf**](https://g.com/1.pdf)\]") == "1. Introduction [.pdf]"


def test_code_blocks_are_left_as_written_and_every_line_is_kept() -> None:
    lines = README.splitlines()
    read = markdown_lines(lines)
    assert len(read) == len(lines) and "see [x](https://example.org/raw)" in read
    assert (
        "| Assignment: Quadrat survey lab (github.com); Point value: 15 points; Status: *inactive*; "
        "Due date: March 14, 2025 |" in read
    )


def test_a_chunked_readme_holds_no_url_path() -> None:
    doc = Document(
        doc_id="readme", file="README.md", title="Field Ecology Lab", kind="markdown", pages=[Page(1, README)]
    )
    text = "\n".join(c.text for c in chunk_document(doc))
    assert "Quadrat survey lab (github.com)" in text and "March 14, 2025" in text
    assert "blob/main" not in text.replace("example.org/raw", "")


def readme_chunks(text: str) -> list[Chunk]:
    """``text`` uploaded as README.md: loaded and chunked as the worker does."""
    return chunk_document(load_document(text.encode(), "README.md", 10**6))


def test_a_tables_rows_are_records_labelled_by_its_columns() -> None:
    """Each row says what its cells are and stands alone: joined into one run, a table of
    assignments was one "sentence" holding every lab's due date, and a row far from the header
    said "10 points | April 14, 2025" of nothing named."""
    rows = "\n".join(
        f"| Lab {n} | {n} points | April {n}, 2025 | [PDF](https://x.org/{n}.pdf) |" for n in range(1, 41)
    )
    text = f"# Course\n\n## Assignments\n\nAll work is due at noon.\n\n| Assignment | Points | Due | Link |\n|---|:---:|---|---|\n{rows}\n"
    chunks = readme_chunks(text)
    assert len(chunks) > 1  # windows over the rows
    lines = [ln for c in chunks for ln in c.text.split("\n")]
    assert "| Assignment: Lab 9; Points: 9 points; Due: April 9, 2025 |" in lines  # no "PDF" cell
    assert not any("---" in ln or ln.count("| |") for ln in lines)
    from syllabot.worker.answerers.extractive import sentences

    quoted = sentences(chunks[-1].text)
    assert "Assignment: Lab 40; Points: 40 points; Due: April 40, 2025" in quoted


def test_readme_parts_under_any_heading_level_are_sections_of_their_own() -> None:
    """READMEs put their parts under "#" headings and subparts under "###": each is a section, and
    only the first "# Title" is the document's title."""
    text = (
        "# Archives for Historians\n\nCourse materials.\n\n# Lectures\n\n1. Intro\n2. Git\n\n"
        "### Extras\n\nSome extras.\n\n# Projects\n\nProposal due March 1.\n"
    )
    by_section = {c.section: c.text for c in readme_chunks(text)}
    assert by_section[None] == "Archives for Historians\nCourse materials."
    assert by_section["Lectures"].startswith("Archives for Historians — Lectures\n1. Intro")
    assert "Some extras" in by_section["Extras"] and "Some extras" not in by_section["Lectures"]
    assert by_section["Projects"].endswith("Proposal due March 1.")


def test_html_reference_links_and_underlined_headings_read_as_a_reader_sees_them() -> None:
    """What GitHub renders is what is indexed: HTML tags are layout (an image is its alt text, an
    "<h2>" a heading), a reference link is its text and its definition line nothing, a title
    underlined with "=" is the title and one with "-" a section; prose with "<" stays as written."""
    text = (
        "Archives for Historians\n===========================\n\n"
        '<p align="center"><img src="logo.png" alt="Course logo" width="200"/></p>\n'
        "<!-- maintainers: update\nevery term -->\n\n"
        "Read the [syllabus][syl] first.<br>\nOffice hours: <b>Tuesdays 2-4pm</b>.\n\n---\n\n"
        "Schedule\n--------\n\nIf a<b and c>d the code fails.\n\n"
        '<h2 align="center">Grading</h2>\n\nHomework 40%.\n\n[syl]: https://example.edu/syllabus.pdf\n'
    )
    doc = load_document(text.encode(), "README.md", 10**6)
    assert doc.title == "Archives for Historians"
    by_section = {c.section: c.text for c in chunk_document(doc)}
    assert by_section[None] == (
        "Archives for Historians\nCourse logo\n\nRead the syllabus first.\nOffice hours: Tuesdays 2-4pm."
    )
    assert by_section["Schedule"].endswith("If a<b and c>d the code fails.")
    assert by_section["Grading"].endswith("Homework 40%.")
    assert "example.edu" not in " ".join(by_section.values())
    assert len(markdown_lines(text.splitlines())) == len(text.splitlines())
