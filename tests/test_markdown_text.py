"""Markdown links read as words before chunking (worker/markdown_text.py)."""

from __future__ import annotations

from syllabot.worker.chunking import chunk_document
from syllabot.worker.documents import Document, Page
from syllabot.worker.markdown_text import markdown_lines, plain_links

README = """# Lab in Psych

## Assignments

| Assignment | Point value | Status | Due date |
|------------|-------------|--------|----------|
| [Birthday lab](https://github.com/Lab/psych/blob/main/labs/birthday_lab.pdf) | 0 points | *inactive* | N/A |
| [Pitch session lab](https://github.com/Lab/psych/blob/main/labs/pitch_lab.pdf) | 10 points | *inactive* | April 7, 2025 |

```
see [x](https://example.org/raw)
```
"""


def test_a_link_is_its_text_and_its_site() -> None:
    assert plain_links("join [Slack](http://psyc11.slack.com) now") == "join Slack (psyc11.slack.com) now"
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
    assert "| Pitch session lab (github.com) | 10 points | *inactive* | April 7, 2025 |" in read


def test_a_chunked_readme_holds_no_url_path() -> None:
    doc = Document(
        doc_id="readme", file="README.md", title="Lab in Psych", kind="markdown", pages=[Page(1, README)]
    )
    text = "\n".join(c.text for c in chunk_document(doc))
    assert "Pitch session lab (github.com)" in text and "April 7, 2025" in text
    assert "blob/main" not in text.replace("example.org/raw", "")
