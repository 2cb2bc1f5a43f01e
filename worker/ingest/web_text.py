"""Course web pages (HTML) and reStructuredText read as the Markdown-shaped text the chunker knows.

Why: teachers publish syllabi as course websites (a saved page, a Sphinx or GitHub Pages site), and
a page read as raw text is mostly its menu, scripts and styles. Here a page is read through a
well-kept parser (BeautifulSoup over lxml; docutils for reStructuredText), never with regular
expressions: what a reader sees of the page's main content, its headings as "#" headings (so
sections and modules are found as in Markdown), list items as bullets, and each table row as a
record labelled by its column headings, exactly as ``markdown_text`` reads a Markdown table
("| Week: 3; Topic: Deadlocks |"). Navigation, scripts, styles, forms and hidden elements are left
out; reStructuredText is parsed with file inclusion and raw passthrough off, so an upload can never
read a file of the server.

Pure: text in, (title, text, language) out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from syllabot.worker.ingest.markdown_text import table_record

#: Elements whose content is never the page's text.
_DROPPED = frozenset(
    {
        "script", "style", "noscript", "template", "nav", "form", "button", "select", "textarea",
        "svg", "canvas", "iframe", "object", "embed", "head", "menu", "dialog",
    }
)  # fmt: skip
#: Elements that start a new line of text (all others are read inline).
_BLOCKS = frozenset(
    {
        "p", "div", "section", "article", "main", "aside", "header", "footer", "ul", "ol", "li", "dl",
        "dt", "dd", "table", "thead", "tbody", "tfoot", "tr", "td", "th", "caption", "pre",
        "blockquote", "figure", "figcaption", "address", "hr", "br", "details", "summary", "body", "html",
        "h1", "h2", "h3", "h4", "h5", "h6",
    }
)  # fmt: skip
_HEADINGS = {f"h{n}": n for n in range(1, 7)}


@dataclass
class WebText:
    """What a page says: its title (None when it names none), its text, its language (None: unsaid)."""

    title: str | None
    text: str
    lang: str | None = None


def _words(text: str) -> str:
    return " ".join(text.split())


# ----------------------------------------------------------------------------------------------
# HTML
# ----------------------------------------------------------------------------------------------


def html_text(markup: str) -> WebText:
    """The main content of an HTML page (``<main>``, else its one ``<article>``, else ``<body>``)."""
    from bs4 import BeautifulSoup, FeatureNotFound

    try:
        soup = BeautifulSoup(markup, "lxml")
    except FeatureNotFound:  # lxml missing: the standard library's parser reads any page too
        soup = BeautifulSoup(markup, "html.parser")
    title = _words(soup.title.get_text()) if soup.title else ""
    root = soup.find("html")
    lang = root.get("lang") if root is not None else None
    for tag in soup.find_all(_hidden):
        if not tag.decomposed:  # inside one already dropped
            tag.decompose()
    articles = soup.find_all("article")
    main = (
        soup.find("main")
        or soup.find(role="main")
        or (articles[0] if len(articles) == 1 else None)
        or soup.body
        or soup
    )
    out: list[str] = []
    _html_blocks(main, out)
    heading = next((ln.lstrip("# ") for ln in out if ln.startswith("# ")), None)
    return WebText(
        title=title or heading or None,
        text="\n\n".join(out),
        lang=str(lang).split("-")[0].lower() if isinstance(lang, str) and lang.strip() else None,
    )


def _hidden(tag: Any) -> bool:
    """Elements never read: dropped kinds, the site's banner and menus, what the page hides."""
    if tag.name in _DROPPED:
        return True
    attrs = getattr(tag, "attrs", None) or {}
    if "hidden" in attrs or str(attrs.get("aria-hidden", "")).lower() == "true":
        return True
    style = str(attrs.get("style", "")).replace(" ", "").lower()
    if "display:none" in style or "visibility:hidden" in style:
        return True
    return str(attrs.get("role", "")).lower() in {"navigation", "banner", "search", "contentinfo"}


def _html_blocks(node: Any, out: list[str]) -> None:
    """Append ``node``'s lines of text: one per block, headings as "#" lines, rows as records."""
    from bs4 import NavigableString, Tag
    from bs4.element import Comment, Declaration, Doctype, ProcessingInstruction

    inline: list[str] = []

    def flush() -> None:
        text = _words("".join(inline))
        if text:
            out.append(text)
        inline.clear()

    for child in node.children:
        if isinstance(child, Comment | Declaration | Doctype | ProcessingInstruction):
            continue
        if isinstance(child, NavigableString):
            inline.append(str(child))
            continue
        if not isinstance(child, Tag):
            continue
        name = child.name
        if name not in _BLOCKS:
            inline.append(child.get_text())  # a, span, em, code ...: part of the running line
            continue
        flush()
        if name in _HEADINGS:
            text = _words(child.get_text(" "))
            if text:
                out.append(f"{'#' * _HEADINGS[name]} {text}")
        elif name == "table":
            out.extend(_html_table(child))
        elif name == "pre":
            out.append(child.get_text().strip("\n"))
        elif name == "li":
            inner: list[str] = []
            _html_blocks(child, inner)
            if inner:
                out.append(f"• {inner[0]}")
                out.extend(inner[1:])
        elif name == "dl":
            out.extend(_html_pairs(child))
        else:
            _html_blocks(child, out)
    flush()


def _html_pairs(dl: Any) -> list[str]:
    """A definition list as "term: definition" lines: a syllabus's "Instructor: Dr. Ada"."""
    out: list[str] = []
    term = ""
    for item in dl.find_all(["dt", "dd"]):
        text = _words(item.get_text(" "))
        if item.name == "dt":
            if term:
                out.append(term)
            term = text
        elif text:
            out.append(f"{term}: {text}" if term else text)
            term = ""
    if term:
        out.append(term)
    return out


def _html_table(table: Any) -> list[str]:
    """Each row as a record of its cells labelled by the header row's (``markdown_text``)."""
    rows = []
    for tr in table.find_all("tr"):
        if tr.find_parent("table") is not table:
            continue  # a nested table's rows are read as its cell's text
        cells = tr.find_all(["td", "th"], recursive=False)
        rows.append(([_words(c.get_text(" ")) for c in cells], all(c.name == "th" for c in cells)))
    header: list[str] = []
    out = []
    for k, (cells, is_header) in enumerate(rows):
        if is_header and k == 0:
            header = cells
            continue
        line = table_record(header, cells)
        if line:
            out.append(line)
    return out


# ----------------------------------------------------------------------------------------------
# reStructuredText
# ----------------------------------------------------------------------------------------------

_RST_SETTINGS = {
    "file_insertion_enabled": False,  # ".. include:: /etc/passwd" reads nothing
    "raw_enabled": False,
    "report_level": 5,  # never print warnings; a malformed page still reads as text
    "halt_level": 5,
    "warning_stream": False,
    "input_encoding": "unicode",
    "syntax_highlight": "none",
}
#: reStructuredText nodes that carry no text a reader sees.
_RST_SKIPPED = frozenset(
    {"comment", "substitution_definition", "target", "system_message", "raw", "pending", "image"}
)


def rst_text(source: str) -> WebText:
    """A reStructuredText document's text: section titles as "#" headings, lists as bullets,
    definition and field lists as "term: definition", tables (grid or simple) as records."""
    from docutils.core import publish_doctree

    doctree = publish_doctree(source, settings_overrides=_RST_SETTINGS)
    out: list[str] = []
    _rst_blocks(doctree, 1, out)
    titles = [node for node in doctree.children if node.tagname == "title"]
    heading = next((ln.lstrip("# ") for ln in out if ln.startswith("#")), None)
    title = _words(titles[0].astext()) if titles else heading
    return WebText(title=title or None, text="\n\n".join(out))


def _rst_blocks(node: Any, depth: int, out: list[str]) -> None:
    for child in node.children:
        kind = child.tagname
        if kind in _RST_SKIPPED:
            continue
        if kind == "section":
            _rst_blocks(child, depth + 1, out)
        elif kind in {"title", "subtitle"}:
            out.append(f"{'#' * min(depth, 6)} {_words(child.astext())}")
        elif kind in {"literal_block", "doctest_block"}:
            out.append(child.astext())
        elif kind in {"bullet_list", "enumerated_list"}:
            for item in child.children:
                inner: list[str] = []
                _rst_blocks(item, depth, inner)
                if inner:
                    out.append(f"• {inner[0]}")
                    out.extend(inner[1:])
        elif kind in {"definition_list", "field_list", "docinfo"}:
            out.extend(_rst_pairs(child))
        elif kind == "table":
            out.extend(_rst_table(child))
        elif kind == "#text" or not child.children or kind in {"paragraph", "line_block", "rubric"}:
            text = _words(child.astext())
            if text:
                out.append(text)
        else:  # containers: block quotes, admonitions ("note"), topics
            _rst_blocks(child, depth, out)


def _rst_pairs(node: Any) -> list[str]:
    """``term: definition`` for each item of a definition list, field list or document info."""
    out = []
    for item in node.children:
        parts = [_words(part.astext()) for part in item.children if part.tagname not in _RST_SKIPPED]
        parts = [p for p in parts if p]
        if parts:
            out.append(f"{parts[0]}: {' '.join(parts[1:])}" if len(parts) > 1 else parts[0])
    return out


def _rst_table(table: Any) -> list[str]:
    from docutils import nodes

    header: list[str] = []
    out: list[str] = []
    for group in table.findall(nodes.tgroup):
        for part in group.children:
            rows = [[_words(entry.astext()) for entry in row.children] for row in part.findall(nodes.row)]
            if part.tagname == "thead":
                header = rows[-1] if rows else []
                continue
            out.extend(line for line in (table_record(header, row) for row in rows) if line)
    return out
