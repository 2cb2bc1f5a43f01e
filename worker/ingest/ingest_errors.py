"""The errors an upload can be refused with, one class per thing the admin can do about it.

Why a module of their own: the format readers (``loaders``, ``pdf_text``, ``web_text``) each raise
them, and ``loaders`` imports the readers; the classes here import nothing, so no reader has to
import the loader that dispatches to it. ``worker.ingest.loaders`` re-exports them for its callers.
"""

from __future__ import annotations


class IngestError(ValueError):
    """A file that cannot be indexed; the message says what is wrong and what to do."""

    def __init__(self, message: str, *, file: str | None = None) -> None:
        super().__init__(message)
        self.file = file


class TooLarge(IngestError):
    """Over a size limit: the upload, what it unpacks to, or its text."""


class UnsupportedType(IngestError):
    """A format Syllabot does not read (or content that is not what its extension claims)."""


class CorruptFile(IngestError):
    """Damaged or truncated, or not a valid file of the type its name claims."""


class EncryptedFile(IngestError):
    """Password-protected, and the empty password does not open it."""


class NoTextLayer(IngestError):
    """A PDF with no extractable text on any page, typically a scan."""


class EmptyDocument(IngestError):
    """Readable, but there is no text in it."""


def short(exc: BaseException) -> str:
    """An exception in one line of at most 120 characters, for a message an admin reads."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 120 else text[:117] + "..."
