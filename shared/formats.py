"""The document formats Syllabot reads: one list for the loaders, the CLI and both bots.

Front-ends check a file's name against it before downloading anything; the loaders then check the
bytes themselves, so a wrong name still gets a clear error.
"""

from __future__ import annotations

#: File name suffix -> the loader that reads it.
DOCUMENT_KINDS = {
    ".pdf": "pdf",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
    ".docx": "docx",
    ".html": "html",
    ".htm": "html",
    ".rst": "rst",
}
DOCUMENT_SUFFIXES = tuple(DOCUMENT_KINDS)
#: For messages that tell a user what to upload instead.
SUPPORTED_TYPES = (
    "PDF (.pdf), Markdown (.md), plain text (.txt), Word (.docx), web pages (.html) and "
    "reStructuredText (.rst)"
)


def is_document_name(name: str) -> bool:
    return name.lower().endswith(DOCUMENT_SUFFIXES)


#: Unicode categories never kept in a file name or title: controls (NUL, newlines), format
#: characters (bidi overrides such as U+202E, zero-width spaces and joiners), surrogates and
#: private-use characters. A name with U+202E shows "syllabus\u202efdp.md" as "syllabusdm.pdf".
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co"})


def clean_name(text: str, fallback: str = "document") -> str:
    """``text`` without control, format (bidi, zero-width), surrogate and private-use characters,
    its runs of spaces collapsed; ``fallback`` when nothing is left. Applied to every file name and
    title before it is stored or shown."""
    import unicodedata

    # Whitespace controls (tab, newline) separate words; the split below collapses them.
    kept = "".join(ch for ch in text if ch.isspace() or unicodedata.category(ch) not in _UNSAFE_CATEGORIES)
    return " ".join(kept.split()) or fallback
