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
}
DOCUMENT_SUFFIXES = tuple(DOCUMENT_KINDS)
#: For messages that tell a user what to upload instead.
SUPPORTED_TYPES = "PDF (.pdf), Markdown (.md), plain text (.txt) and Word (.docx)"


def is_document_name(name: str) -> bool:
    return name.lower().endswith(DOCUMENT_SUFFIXES)
