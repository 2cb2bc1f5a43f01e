"""A PDF's text layer through PDFium (``pypdfium2``), one page at a time, without what no reader sees.

Why PDFium: it keeps the spaces between words where pypdf ran justified lines together (99 words of
22+ letters over the 88 PDFs of ../shared/data, against 11), and it is ~15x faster
(``docs/EXTRACTION.md``). It marks a glyph it could not map to Unicode (a ligature without a
ToUnicode entry, a line-end hyphen) with U+FFFE; ``pdf_repair`` reads those marks.

Why the hidden-text check: a syllabus can carry an answer key in white text, or text at a size of
zero, that a reader never sees but an extractor reads like any other; a student's question must
never be answered from it. Text is hidden when it is drawn in white, fully transparent or in
PDFium's "invisible" render mode *and* nothing is drawn under it (white text on a dark slide, or an
OCR layer over a scanned image, is read as usual), or when it is smaller than half a point.

PDFium is not thread-safe, and a worker may load two uploads at once on its write threads: every
call into it here holds :data:`_PDFIUM`.
"""

from __future__ import annotations

import ctypes
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from syllabot.worker.ingest_errors import CorruptFile, EmptyDocument, EncryptedFile, short

log = logging.getLogger("syllabot.pdf_text")

_PDFIUM = threading.Lock()
#: Text drawn smaller than this (in points, on the page) is not read by anyone.
_MIN_VISIBLE_PT = 0.5
#: A fill whose channels are all at least this is white on paper.
_WHITE = 250


@dataclass
class PdfText:
    """What PDFium read: each page's raw text ("\\n" line ends), the pages it could not read."""

    pages: list[str]
    failed: list[int] = field(default_factory=list)
    #: Characters of hidden text left out (white on nothing, invisible, zero-size).
    hidden_chars: int = 0
    title: str | None = None


def read_pdf(
    data: bytes, name: str, check: Callable[[], None] | None = None, *, on_page: Callable[[int], None]
) -> PdfText:
    """Every page's text, in physical order; typed :mod:`~worker.ingest_errors` when it cannot.

    ``check`` runs before each page (a cancelled build raises from it); ``on_page`` gets the
    running count of characters read, so a caller can stop a document whose text is over its limit.
    """
    import pypdfium2 as pdfium

    with _PDFIUM:
        try:
            pdf = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as exc:
            raise _open_error(exc, name) from exc
        try:
            count = len(pdf)
            if count == 0:
                raise EmptyDocument(f"{name} has no pages; re-export it or upload the original", file=name)
            out = PdfText(pages=[], title=_title(pdf))
            total = 0
            for index in range(count):
                if check is not None:
                    check()
                try:
                    text, hidden = _page_text(pdf, index)
                except Exception:  # a single broken content stream must not lose the other pages
                    log.warning("%s: page %d unreadable", name, index + 1, exc_info=True)
                    out.failed.append(index + 1)
                    text, hidden = "", 0
                out.pages.append(text.replace("\r\n", "\n").replace("\r", "\n"))
                out.hidden_chars += hidden
                total += len(text)
                on_page(total)
            return out
        finally:
            pdf.close()


def _open_error(exc: Exception, name: str) -> Exception:
    import pypdfium2.raw as pdfium_c

    code = getattr(exc, "err_code", None)
    if code == pdfium_c.FPDF_ERR_PASSWORD:
        return EncryptedFile(
            f"{name} is password-protected; remove the password (open it and print or save it as an "
            "unprotected PDF) and upload it again",
            file=name,
        )
    if code == pdfium_c.FPDF_ERR_SECURITY:
        return EncryptedFile(
            f"{name} is encrypted with a security handler this installation cannot open ({short(exc)}); "
            "save an unprotected copy (print to PDF) and upload that",
            file=name,
        )
    return CorruptFile(
        f"{name} is not a readable PDF ({short(exc)}); re-export it or upload the original", file=name
    )


def _title(pdf: Any) -> str | None:
    try:
        title = pdf.get_metadata_value("Title") or ""
    except Exception:  # broken Info dictionaries are common and never fatal
        log.debug("unreadable PDF metadata", exc_info=True)
        return None
    return " ".join(str(title).split()) or None


def _page_text(pdf: Any, index: int) -> tuple[str, int]:
    """The page's text and how many hidden characters were left out of it."""
    page = pdf[index]
    try:
        textpage = page.get_textpage()
        try:
            hidden = _hidden_objects(page)
            if not hidden:
                return textpage.get_text_range(), 0
            return _text_without(textpage, hidden)
        finally:
            textpage.close()
    finally:
        page.close()


def _address(handle: Any) -> int:
    return ctypes.cast(handle, ctypes.c_void_p).value or 0


def _hidden_objects(page: Any) -> set[int]:
    """Addresses of the page's text objects no reader sees (see the module's docstring)."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    suspects: list[tuple[int, tuple[float, float, float, float] | None]] = []
    r, g, b, a = (ctypes.c_uint() for _ in range(4))
    size = ctypes.c_float()
    for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_TEXT]):
        try:
            left, bottom, right, top = obj.get_bounds()
            matrix = obj.get_matrix()
        except pdfium.PdfiumError:  # an object PDFium cannot place: leave it to the text layer
            continue
        if pdfium_c.FPDFTextObj_GetFontSize(obj.raw, size):
            scale = abs(matrix.a * matrix.d - matrix.b * matrix.c) ** 0.5
            if size.value * scale < _MIN_VISIBLE_PT:
                suspects.append((_address(obj.raw), None))  # nothing to see at any colour
                continue
        mode = pdfium_c.FPDFTextObj_GetTextRenderMode(obj.raw)
        filled = pdfium_c.FPDFPageObj_GetFillColor(obj.raw, r, g, b, a)
        white = filled and min(r.value, g.value, b.value) >= _WHITE
        clear = filled and a.value == 0
        if mode == pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE or white or clear:
            # Bounds are in the space of the object's form, as are those of a background drawn in
            # the same form (a plot's dark panel under its white labels).
            suspects.append((_address(obj.raw), (left, bottom, right, top)))
    if not suspects:
        return set()
    grounds = _grounds(page) if any(box for _, box in suspects) else []
    return {addr for addr, box in suspects if box is None or not _over_any(box, grounds)}


def _grounds(page: Any) -> list[tuple[float, float, float, float]]:
    """Bounds of what is painted on the page besides text: images and filled, non-white shapes."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    kinds = [pdfium_c.FPDF_PAGEOBJ_IMAGE, pdfium_c.FPDF_PAGEOBJ_PATH, pdfium_c.FPDF_PAGEOBJ_SHADING]
    r, g, b, a = (ctypes.c_uint() for _ in range(4))
    fill, stroke = ctypes.c_int(), ctypes.c_int()
    out = []
    for obj in page.get_objects(filter=kinds):
        if obj.type == pdfium_c.FPDF_PAGEOBJ_PATH:
            if not pdfium_c.FPDFPath_GetDrawMode(obj.raw, fill, stroke) or not fill.value:
                continue
            if (
                pdfium_c.FPDFPageObj_GetFillColor(obj.raw, r, g, b, a)
                and min(r.value, g.value, b.value) >= _WHITE
            ):
                continue
        try:
            out.append(obj.get_bounds())
        except pdfium.PdfiumError:  # unplaceable: it covers nothing we can tell
            continue
    return out


def _over_any(
    box: tuple[float, float, float, float], grounds: list[tuple[float, float, float, float]]
) -> bool:
    x, y = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return any(left <= x <= right and bottom <= y <= top for left, bottom, right, top in grounds)


def _text_without(textpage: Any, hidden: set[int]) -> tuple[str, int]:
    """The page's text character by character, leaving out those of the ``hidden`` objects."""
    import pypdfium2.raw as pdfium_c

    kept: list[str] = []
    dropped = 0
    for i in range(textpage.count_chars()):
        code = pdfium_c.FPDFText_GetUnicode(textpage.raw, i)
        owner = pdfium_c.FPDFText_GetTextObject(textpage.raw, i)
        char = chr(code)
        if owner and not char.isspace() and _address(owner) in hidden:
            dropped += 1  # its spaces stay: the words either side of a hidden one stay apart
            continue
        kept.append(char)
    return "".join(kept), dropped
