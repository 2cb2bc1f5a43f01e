"""Markdown read as the words a reader sees on GitHub: links, HTML, headings, tables (pure functions).

Why: course READMEs are mostly links ("| [Quadrat lab](https://github.com/FieldLab/
field-methods/blob/main/labs/quadrat_lab.pdf) | 10 points |"; "1. Introduction
\\[[**.html**](https://raw.githack.com/…) | [**.pdf**](…)\\]"). Chunked as written, the URLs' path
words ("github", "fieldlab", "field", "methods", "blob", "main") matched half the
questions, and answers quoted link syntax. So, before a Markdown document is chunked:

* a link is read as its text and the site it points to ("Slack (bio210.slack.com)"); a link whose
  text only names a file's kind ("PDF", "**.html**", "KEY") or is a relative link as its text; one
  whose text is the address itself as that address; an image's alt text the same way;
* Markdown's backslash escapes ("\\[") are read as the characters they escape;
* HTML is read as GitHub shows it: a table row's cells written on one line stay apart ("Week 1;
  Seed trays"), tags are layout (an image is its alt text, "<h2>…</h2>" a
  heading), comments are nothing; a reference link ("[the syllabus][syl]") is its text and the line
  defining it nothing; a line underlined with "=" or "-" is a heading, "---" after a blank line a
  rule (nothing);
* a table's row is a record labelled by its columns ("| Assignment: Pitch session lab; Point value:
  10 points; Due date: April 7, 2025 |"), its header and ``|---|`` rows left blank: the chunker
  keeps each row a sentence of its own, so a row far below the header still says what its cells
  are, and a quote is the one row asked about, not the whole table run together.

Fenced code blocks are left as they are; every line in gives one line out.

What a student reads goes further (:func:`rendered`, which the answerers apply to the passages of
these sources before they quote them, ``answerers.base.as_read``): what a site generator or
pandoc reads and no reader sees is nothing: Liquid (Jekyll) output and tags ("{{ site.baseurl }}",
"{% include toc.html %}"), kramdown attribute lists ("{: .btn}"), pandoc citations
("[@dirckx:2006anatomical]", "[see @a, p. 3; @b]", and an in-text key holding a colon or a year,
"@dirckx:2006anatomical"; a handle "@teaching_team" stays); emphasis ("**Due:**", "*inactive*",
"_note_"; "snake_case_name" is no emphasis) and any escaped punctuation ("15\\%") are read as
their words; entities as their characters ("&amp;"); any HTML tag is layout. Code spans stay as
written. This is
kept out of the index text: read there, it moved retrieval on the tuning courses (page R@1
0.771 -> 0.766, ``docs/BENCHMARKS.md``).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

__all__ = ["TABLE_ROW", "markdown_lines", "plain_links", "rendered", "setext_level"]

_LINK = re.compile(r"!?\[([^\[\]]*)\]\(\s*<?([^()\s<>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
#: Link texts that only say what kind of file the link is.
_FILE_WORDS = frozenset(
    {"pdf", "html", "key", "ppt", "pptx", "doc", "docx", "slides", "link", "here", "download", "rmd",
     "ipynb", "md", "zip", "code", "source", "video", "recording"}
)  # fmt: skip
_EMPHASIS = re.compile(r"(\*\*|__|\*|_|`)(?=\S)(.+?)(?<=\S)\1")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|])")
#: Any ASCII punctuation escaped (CommonMark), as a reader sees it: "15\\%", "\\$20", "\\_".
_ANY_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
#: Emphasis around words: "**Due:**", "*inactive*", "__x__" anywhere; "_x_" only between words'
#: edges (an identifier such as "snake_case_name" is no emphasis). An escaped marker is no opener.
_STARS = re.compile(r"(?<![\\*])(\*{1,3})(?=[^\s*])(.+?)(?<=[^\s\\*])\1(?!\*)")
_UNDERSCORES = re.compile(r"(?<![\w\\])(_{1,3})(?=[^\s_])(.+?)(?<=[^\s\\_])\1(?!\w)")
#: A bold marker left after the pairs are read (bold over two lines): nothing a reader sees.
_LONE_BOLD = re.compile(r"(?<!\\)\*\*")
_CODE_SPAN = re.compile(r"(`+)(?:.+?)\1")
#: Liquid output and tags ("{{ site.baseurl }}", "{% include toc.html %}", "{%- if x -%}").
_LIQUID = re.compile(r"\{\{.*?\}\}|\{%.*?%\}")
#: A kramdown inline attribute list: "{: .btn .btn-blue}", "{:toc}", "{:.no_toc}".
_KRAMDOWN = re.compile(r"[ \t]*\{:[^{}\n]*\}")
#: A pandoc citation group, "[@key]" or "[see @a, p. 3; -@b]", with the space before it.
_CITE_GROUP = re.compile(r"[ \t]*\[([^\[\]]*@[^\[\]]*)\](?!\()")
_CITE_KEY = re.compile(r"(?:^|(?<=[\s;\[-]))-?@[A-Za-z0-9_][\w:.#$%&+?<>~/-]*")
#: An in-text pandoc citation: "@dirckx:2006anatomical", "@smith2020" (a colon or a year in its
#: key; "@teaching_team", a handle, stays). Its trailing punctuation is the sentence's.
_CITE_IN_TEXT = re.compile(
    r"[ \t]*(?<![\w@.])-?@(?=[A-Za-z][\w:.#$%&+?<>~/-]*?(?::|\d{4}))[A-Za-z][\w:.#$%&+?<>~/-]*[\w]"
)
_ENTITY = re.compile(r"&(?:#\d+|#x[0-9a-fA-F]+|[A-Za-z]{2,8});")
#: Between two cells of an HTML table row written on one line: "</td><td>".
_CELL_END = re.compile(r"</t[dh]>\s*(?=<t[dh]\b)", re.IGNORECASE)
_FENCE = ("```", "~~~")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
#: A table row as a line of its own, bars at both ends (stripped): a row as written, and the record
#: :func:`markdown_lines` writes for it, which the chunker keeps a sentence of its own.
TABLE_ROW = re.compile(r"^\|.*\|$")
#: HTML inside Markdown ("<p align="center">", "<br>", "<b>…</b>", "<details><summary>…"): its
#: tags are layout, their text is kept; an image is its alt text.
_INDEX_TAGS = (
    "a|abbr|b|big|blockquote|br|center|code|del|details|div|em|figcaption|figure|font|h[1-6]|hr|i|iframe"
    "|img|ins|kbd|li|mark|ol|p|picture|pre|s|section|small|source|span|strike|strong|sub|summary|sup"
    "|table|tbody|td|th|thead|tr|u|ul|video"
)
_TAGS = (
    "a|abbr|article|aside|b|big|blockquote|br|caption|center|cite|code|col|colgroup|dd|del|details|div"
    "|dl|dt|em|figcaption|figure|font|footer|h[1-6]|header|hr|i|iframe|img|ins|kbd|li|main|mark|nav|ol"
    "|p|picture|pre|q|s|section|small|source|span|strike|strong|sub|summary|sup|table|tbody|td|tfoot"
    "|th|thead|tr|u|ul|video"
)
#: A tag's attributes are name=value pairs ("a<b and c>d" in prose is no tag).
_ATTRS = r"""(?:\s+[\w:-]+\s*=\s*(?:"[^"]*"|'[^']*'|[^\s<>"']+))*"""
_HTML_TAG = re.compile(rf"</?(?:{_INDEX_TAGS}){_ATTRS}\s*/?>", re.IGNORECASE)
#: As a reader sees it, any tag of those is layout.
_ANY_TAG = re.compile(rf"</?(?:{_TAGS}){_ATTRS}\s*/?>", re.IGNORECASE)
#: "<h2 align="center">Schedule</h2>" on a line of its own: a heading, as "##" writes it.
_HTML_HEADING = re.compile(r"^\s*<h([1-6])\b[^<>]*>(.*?)</h\1>\s*$", re.IGNORECASE)
_HTML_IMG = re.compile(r"<img\b[^<>]*>", re.IGNORECASE)
_ALT = re.compile(r"\balt\s*=\s*[\"']([^\"']*)[\"']", re.IGNORECASE)
_HTML_COMMENT = re.compile(r"<!--.*?-->")
#: A reference-style link ("[the syllabus][syl]", "[Canvas][]") is its text; a line defining one
#: ("[syl]: https://…") says nothing.
_REF_LINK = re.compile(r"(?<!!)\[([^\[\]]+)\]\[[^\[\]]*\]")
_REF_DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*\S+(?:\s+[\"'(].*[\"')])?\s*$")
#: A setext heading's underline ("=====" under a title, "-----" under a part); after a blank line,
#: a rule of dashes or stars is a thematic break.
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_BREAK = re.compile(r"^\s{0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$")


def _link(m: re.Match[str]) -> str:
    text = _EMPHASIS.sub(r"\2", m.group(1)).strip()
    host = urlsplit(m.group(2)).netloc.lower().removeprefix("www.")
    if not host or text.lower().lstrip(".") in _FILE_WORDS:
        return text
    if not text:
        return host
    if host in text.lower():
        return text  # the text is the address itself
    return f"{text} ({host})"


def _img(m: re.Match[str]) -> str:
    alt = _ALT.search(m.group(0))
    return alt.group(1) if alt else ""


def _cites(m: re.Match[str]) -> str:
    """A bracketed group of pandoc citations is nothing; a bracket holding anything else stays."""
    parts = m.group(1).split(";")
    return "" if all(_CITE_KEY.search(part) for part in parts) else m.group(0)


def _words(text: str) -> str:
    """Text outside code spans with emphasis read as its words and pandoc citations left out."""
    text = _CITE_GROUP.sub(_cites, text)
    text = _CITE_IN_TEXT.sub("", text)
    for _ in range(2):  # "***both***", "**_both_**"
        text = _UNDERSCORES.sub(r"\2", _STARS.sub(r"\2", text))
    text = _LONE_BOLD.sub("", text)
    return _ANY_ESCAPE.sub(r"\1", text)


def plain_links(line: str) -> str:
    """``line`` with each link read as its text and site, and escapes resolved (see the module):
    what the index reads."""
    heading = _HTML_HEADING.match(line)
    if heading:
        line = f"{'#' * int(heading.group(1))} {heading.group(2)}"
    if "<" in line:  # a table row on one line keeps its cells apart: "Week 1; Seed trays"
        line = _HTML_IMG.sub(_img, _CELL_END.sub("; ", line))
        line = _HTML_TAG.sub("", line)
    line = _REF_LINK.sub(r"\1", line)
    for _ in range(3):  # an image inside a link: "[![DOI](badge.svg)](https://zenodo.org/…)"
        new = _LINK.sub(_link, line)
        if new == line:
            break
        line = new
    return _ESCAPE.sub(r"\1", line)


def rendered(text: str) -> str:
    """A passage of a Markdown-shaped source (as :func:`markdown_lines` made it for the index) as a
    reader sees it rendered: template and citation markup out, HTML tags and entities read, a table
    row's cells apart, emphasis and escapes read (see the module). Code spans stay as written.

    Apart from the index text because reading these in the index moved retrieval on the tuning
    courses (page R@1 0.771 -> 0.766, ``docs/BENCHMARKS.md``): the answerers quote through it
    (``answerers.base.as_read``)."""
    return "\n".join(_rendered_line(line) for line in text.split("\n"))


def _rendered_line(line: str) -> str:
    if "{" in line:
        line = _KRAMDOWN.sub("", _LIQUID.sub("", line))
    if "<" in line:
        line = _ANY_TAG.sub("", _HTML_IMG.sub(_img, line))
    if "](" in line:
        line = _LINK.sub(_link, line)
    if "&" in line:
        line = _ENTITY.sub(lambda m: html.unescape(m.group(0)), line)
    if not any(c in line for c in "*_\\@"):
        return line
    out: list[str] = []
    last = 0
    for m in _CODE_SPAN.finditer(line):
        out.append(_words(line[last : m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(_words(line[last:]))
    return "".join(out)


def markdown_lines(lines: Iterable[str]) -> list[str]:
    """The lines of a Markdown document with links and escapes read, one out for each in; the
    lines of fenced code blocks as they are."""
    out: list[str] = []
    fenced = False
    header: list[str] | None = None  # the column names of the table being read
    comment = False  # inside an HTML comment that spans lines
    lines = list(lines)
    for at, line in enumerate(lines):
        fence = line.lstrip().startswith(_FENCE)
        if fence:
            fenced = not fenced
        if fenced or fence:
            header = None
            out.append(line)
            continue
        if comment or "<!--" in line:
            # an HTML comment, on one line or over several
            line = _HTML_COMMENT.sub("", line)
            if comment or "<!--" in line:
                comment = "-->" not in line
                line = line.split("-->", 1)[1] if "-->" in line else ""
                if not line.strip():
                    out.append("")
                    continue
        previous = out[-1] if out else ""
        level = setext_level(previous, line) if header is None else None
        if level:
            # "Schedule" over "--------": a heading of level 1 (=) or 2 (-), as "#" or "##" writes it
            out[-1] = f"{'#' * level} {previous.strip()}"
            out.append("")
            continue
        if _REF_DEFINITION.match(line) or (_BREAK.match(line) and not previous.strip()):
            out.append("")
            continue
        row = _cells(line)
        if row is not None and at + 1 < len(lines) and _TABLE_RULE.match(lines[at + 1]):
            header = row  # the column names: each row below is labelled with them
            out.append("")
        elif header is not None and _TABLE_RULE.match(line):
            out.append("")
        elif header is not None and row is not None:
            out.append(table_record(header, row))
        else:
            header = None
            out.append(plain_links(line))
    return out


def setext_level(previous: str, line: str) -> int | None:
    """1 when ``line`` underlines ``previous`` with "=" as a heading, 2 with "-"; else None."""
    underline = _SETEXT.match(line)
    if underline is None or not _is_heading_text(previous):
        return None
    return 1 if underline.group(1)[0] == "=" else 2


def _is_heading_text(line: str) -> bool:
    """A line a setext underline can make a heading: text, not a list item, table row or heading."""
    stripped = line.strip()
    return (
        bool(stripped)
        and not stripped.startswith(("#", "|", "-", "*", "+", ">"))
        and not re.match(r"\d+[.)]\s", stripped)
    )


def _cells(line: str) -> list[str] | None:
    """A table row's cells, links read; None for any other line."""
    stripped = line.strip()
    if not TABLE_ROW.match(stripped):
        return None
    return [plain_links(c).strip() for c in stripped[1:-1].split("|")]


def table_record(header: list[str], row: list[str]) -> str:
    """One table row as a record of its own, each cell labelled by its column ("| Assignment: Pitch
    session lab; Point value: 10 points; Due date: April 7, 2025 |"); cells that only name a file's
    kind ("KEY", "PDF") and empty ones left out. The bars keep it a row for the chunker (one
    sentence) and the answerer (one block)."""
    fields = []
    for k, cell in enumerate(row):
        if not cell or cell.lower().lstrip(".") in _FILE_WORDS:
            continue
        name = header[k] if k < len(header) else ""
        fields.append(f"{name}: {cell}" if name and name.lower() != cell.lower() else cell)
    return f"| {'; '.join(fields)} |" if fields else ""
