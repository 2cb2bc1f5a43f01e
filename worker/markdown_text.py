"""Markdown's links read as the words they stand for (pure functions).

Why: course READMEs are mostly links ("| [Pitch session lab](https://github.com/ContextLab/
experimental-psychology/blob/main/labs/pitch_session_lab.pdf) | 10 points |"; "1. Introduction
\\[[**.html**](https://raw.githack.com/…) | [**.pdf**](…)\\]"). Chunked as written, the URLs' path
words ("github", "contextlab", "experimental", "psychology", "blob", "main") matched half the
questions, and answers quoted link syntax. So, before a Markdown document is chunked:

* a link is read as its text and the site it points to ("Slack (psyc11.slack.com)"); a link whose
  text only names a file's kind ("PDF", "**.html**", "KEY") or is a relative link as its text; one
  whose text is the address itself as that address; an image's alt text the same way;
* Markdown's backslash escapes ("\\[") are read as the characters they escape.

Fenced code blocks are left as they are. Tables keep their rows: read as records labelled by the
header they measured no better (docs/BENCHMARKS.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

__all__ = ["markdown_lines", "plain_links"]

_LINK = re.compile(r"!?\[([^\[\]]*)\]\(\s*<?([^()\s<>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
#: Link texts that only say what kind of file the link is.
_FILE_WORDS = frozenset(
    {"pdf", "html", "key", "ppt", "pptx", "doc", "docx", "slides", "link", "here", "download", "rmd",
     "ipynb", "md", "zip", "code", "source", "video", "recording"}
)  # fmt: skip
_EMPHASIS = re.compile(r"(\*\*|__|\*|_|`)(?=\S)(.+?)(?<=\S)\1")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|])")
_FENCE = ("```", "~~~")


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


def plain_links(line: str) -> str:
    """``line`` with each link read as its text and site, and escapes resolved (see the module)."""
    for _ in range(3):  # an image inside a link: "[![DOI](badge.svg)](https://zenodo.org/…)"
        new = _LINK.sub(_link, line)
        if new == line:
            break
        line = new
    return _ESCAPE.sub(r"\1", line)


def markdown_lines(lines: Iterable[str]) -> list[str]:
    """The lines of a Markdown document with links and escapes read, one out for each in; the
    lines of fenced code blocks as they are."""
    out: list[str] = []
    fenced = False
    for line in lines:
        fence = line.lstrip().startswith(_FENCE)
        if fence:
            fenced = not fenced
        out.append(line if fenced or fence else plain_links(line))
    return out
