"""A PDF's text layer through PDFium (``pypdfium2``), one page at a time, without what no reader sees.

Why PDFium: it keeps the spaces between words where pypdf ran justified lines together (99 words of
22+ letters over the 88 PDFs of ../shared/data, against 11), and it reads them ~17x faster (1.2 s
against 20.2 s, ``docs/EXTRACTION.md``). It marks a glyph it could not map to Unicode (a ligature without a
ToUnicode entry, a line-end hyphen) with U+FFFE; ``pdf_repair`` reads those marks.

Why the hidden-text check: a syllabus can carry an answer key in white text, or text at a size of
zero, that a reader never sees but an extractor reads like any other; a student's question must
never be answered from it. Text is hidden when it is drawn in white, fully transparent or in
PDFium's "invisible" render mode *and* nothing is drawn under it (white text on a dark slide, or an
OCR layer over a scanned image, is read as usual), when it is set in a font under half a point,
or when it lies wholly outside its clipping path (another page placed in a form XObject and cut
down to its letterhead: a syllabus printed over an exam's instructions).

PDFium is not thread-safe, and a worker may load two uploads at once on its write threads: every
call into it here holds :data:`_PDFIUM`.
"""

from __future__ import annotations

import ctypes
import itertools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from syllabot.worker.ingest.ingest_errors import CorruptFile, EmptyDocument, EncryptedFile, short
from syllabot.worker.ingest.pdf_figures import Marked, blanked, mark_page

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
    #: Characters of plots left out (marks, legends, tick labels: ``pdf_figures``).
    figure_chars: int = 0
    #: Runs of glyphs no map reads, left out (``pdf_figures``).
    undecoded_runs: int = 0
    #: Symbol-font bullets, each as (page, its glyph and what follows it on its line) (``pdf_figures``).
    bullets: list[tuple[int, str]] = field(default_factory=list)
    title: str | None = None


def read_pdf(
    data: bytes, name: str, check: Callable[[], None] | None = None, *, on_page: Callable[[int], None]
) -> PdfText:
    """Every page's text, in physical order; typed :mod:`~worker.ingest.ingest_errors` when it cannot.

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
                    text, hidden, marked = _page_text(pdf, index)
                except Exception:  # a single broken content stream must not lose the other pages
                    log.warning("%s: page %d unreadable", name, index + 1, exc_info=True)
                    out.failed.append(index + 1)
                    text, hidden, marked = "", 0, Marked()
                out.pages.append(text.replace("\r\n", "\n").replace("\r", "\n"))
                out.hidden_chars += hidden
                out.figure_chars += marked.figure
                out.undecoded_runs += marked.undecoded
                out.bullets.extend((index + 1, probe) for probe in marked.bullets)
                total += len(text)
                on_page(total)
            return out
        finally:
            pdf.close()


def _open_error(exc: Exception, name: str) -> Exception:
    import pypdfium2.raw as pdfium_c

    code = getattr(exc, "err_code", None)  # PDFium's FPDF_GetLastError(), as pypdfium2 5 keeps it
    if code is None and "password" in str(exc).lower():
        code = pdfium_c.FPDF_ERR_PASSWORD
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


def _page_text(pdf: Any, index: int) -> tuple[str, int, Marked]:
    """The page's text, how many hidden characters were left out of it, and what of its plots was
    left out (``pdf_figures``); a blank line where the page
    leaves more space between two lines than between the lines of a paragraph."""
    page = pdf[index]
    try:
        textpage = page.get_textpage()
        try:
            raw = textpage.get_text_range()
            breaks = _paragraph_breaks(textpage, raw)
            marked = mark_page(textpage, raw)
            hidden = _hidden_objects(page)
            if hidden:
                text, dropped = _text_without(textpage, hidden, breaks, marked)
                return text, dropped, marked
            if marked.drop:
                return _with_breaks(blanked(raw, marked.drop), breaks), 0, marked
            return _with_breaks(raw, breaks), 0, marked
        finally:
            textpage.close()
    finally:
        page.close()


#: A line starts a new paragraph when the space above it is more than this share of its height…
_PARAGRAPH_GAP = 0.35
#: …and more than this many times the page's usual space between lines.
_USUAL_GAPS = 1.5


def _paragraph_breaks(textpage: Any, raw: str) -> set[int]:
    """The character indices of the lines that start a paragraph: more space above them than
    between a paragraph's own lines, or a jump up the page (the next column, a side box).

    Why: PDFium writes one line after another with no blank line between paragraphs, so a heading
    ("Course details") runs into the paragraph before it and the chunker, which reads a short line
    after a blank one as a heading, no longer sees it; a page's layout says where the author broke
    the text. Each line is measured by its first character's loose box (the font's ascent and
    descent, not the glyph's ink), so a bullet or a descender does not move it."""
    starts: list[int] = []
    i, n = 0, len(raw)
    while i < n:
        j = i
        while j < n and raw[j] in " \t":
            j += 1
        if j < n and raw[j] not in "\r\n":
            starts.append(j)
        k = raw.find("\n", i)
        if k < 0:
            break
        i = k + 1
    boxes = [textpage.get_charbox(j, loose=True) for j in starts]  # (left, bottom, right, top)
    gaps = [
        (prev[1] - cur[3], min(prev[3] - prev[1], cur[3] - cur[1])) for prev, cur in itertools.pairwise(boxes)
    ]
    usual = sorted(g for g, _ in gaps if g > 0)
    median = usual[len(usual) // 2] if usual else 0.0
    out: set[int] = set()
    for start, (gap, height) in zip(starts[1:], gaps, strict=True):
        if gap > max(_PARAGRAPH_GAP * height, _USUAL_GAPS * median) or gap < -2 * height:
            out.add(start)
    return out


def _with_breaks(raw: str, breaks: set[int]) -> str:
    """``raw`` with a blank line before each line in ``breaks`` (its preceding line end doubled)."""
    if not breaks:
        return raw
    parts: list[str] = []
    last = 0
    for start in sorted(breaks):
        parts.append(raw[last:start])
        parts.append("\n")
        last = start
    parts.append(raw[last:])
    return "".join(parts)


_VOID_AT = ctypes.c_void_p.from_buffer


def _address(handle: Any) -> int:
    """Where PDFium keeps an object: the key its characters are matched against (read straight
    from the pointer, 3x cheaper than ``ctypes.cast`` on a page of thousands)."""
    return _VOID_AT(handle).value or 0


class _Probe:
    """Reusable out-parameters for PDFium's object queries."""

    def __init__(self) -> None:
        import pypdfium2.raw as pdfium_c

        self.c = pdfium_c
        self.r, self.g, self.b, self.a = (ctypes.c_uint() for _ in range(4))
        self.box = [ctypes.c_float() for _ in range(4)]
        self.size = ctypes.c_float()
        self.matrix = pdfium_c.FS_MATRIX()
        self.fill, self.stroke = ctypes.c_int(), ctypes.c_int()
        self.x, self.y = ctypes.c_float(), ctypes.c_float()
        self.areas: dict[int, tuple[float, float, float, float] | None] = {}

    def white(self, obj: Any) -> bool | None:
        """True: filled white; False: another colour; None: fully transparent."""
        if not self.c.FPDFPageObj_GetFillColor(obj, self.r, self.g, self.b, self.a):
            return False
        if self.a.value == 0:
            return None
        return min(self.r.value, self.g.value, self.b.value) >= _WHITE

    def clipped(self, obj: Any) -> bool:
        """Entirely outside its clipping path (the bounding box of each of its paths, in the same
        space as the object's bounds): drawn, and cut away before anyone sees it."""
        c = self.c
        clip = c.FPDFPageObj_GetClipPath(obj)
        if not clip:
            return False
        box = None
        for path in range(c.FPDFClipPath_CountPaths(clip)):
            area = self._clip_area(clip, path)
            if area is None:
                continue
            box = box or self.bounds(obj)
            if box and (box[2] < area[0] or box[0] > area[2] or box[3] < area[1] or box[1] > area[3]):
                return True
        return False

    def _clip_area(self, clip: Any, path: int) -> tuple[float, float, float, float] | None:
        """The bounding box of one path of a clip, remembered by where PDFium keeps its points: the
        objects of a form share their clip's points, so each shape is read once."""
        c = self.c
        first = c.FPDFClipPath_GetPathSegment(clip, path, 0)
        if not first:
            return None
        key = _address(first)
        if key in self.areas:
            return self.areas[key]
        count = c.FPDFClipPath_CountPathSegments(clip, path)
        x, y = self.x, self.y
        xs, ys = [], []
        for index in range(count):
            segment = c.FPDFClipPath_GetPathSegment(clip, path, index)
            if segment and c.FPDFPathSegment_GetPoint(segment, x, y):
                xs.append(x.value)
                ys.append(y.value)
        area = (min(xs), min(ys), max(xs), max(ys)) if xs else None
        self.areas[key] = area
        return area

    def bounds(self, obj: Any) -> tuple[float, float, float, float] | None:
        left, bottom, right, top = self.box
        if not self.c.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
            return None
        return left.value, bottom.value, right.value, top.value


def _hidden_objects(page: Any) -> set[int]:
    """Addresses of the page's text objects no reader sees (see the module's docstring).

    One flat loop of PDFium's own calls over every object, those inside form XObjects too: a page
    of a plot holds thousands, and pypdfium2's wrapper objects cost 3x the check. What is painted
    under text is only looked at on a page that has white, clear or invisible text at all.
    """
    probe = _Probe()
    c = probe.c
    get_type, get_mode = c.FPDFPageObj_GetType, c.FPDFTextObj_GetTextRenderMode
    get_fill, get_size, get_matrix = (
        c.FPDFPageObj_GetFillColor,
        c.FPDFTextObj_GetFontSize,
        c.FPDFPageObj_GetMatrix,
    )
    text_kind, form_kind, invisible = (
        c.FPDF_PAGEOBJ_TEXT,
        c.FPDF_PAGEOBJ_FORM,
        c.FPDF_TEXTRENDERMODE_INVISIBLE,
    )
    r, g, b, a, size, m = probe.r, probe.g, probe.b, probe.a, probe.size, probe.matrix
    hidden: set[int] = set()
    suspects: list[Any] = []
    others: list[Any] = []
    white, tiny = _WHITE, _MIN_VISIBLE_PT**2
    raw = page.raw
    level = [c.FPDFPage_GetObject(raw, i) for i in range(c.FPDFPage_CountObjects(raw))]
    nested = False
    while level:
        forms: list[Any] = []
        for obj in level:
            kind = get_type(obj)
            if kind != text_kind:
                (forms if kind == form_kind else others).append(obj)
                continue
            # Set at (nearly) no size (font size times the matrix's scale): nothing to see.
            if get_size(obj, size) and get_matrix(obj, m):
                scale = size.value**2 * abs(m.a * m.d - m.b * m.c)
                if scale < tiny:
                    hidden.add(_address(obj))
                    continue
            if get_mode(obj) == invisible or (
                get_fill(obj, r, g, b, a)
                and ((r.value >= white and g.value >= white and b.value >= white) or a.value == 0)
            ):
                suspects.append(obj)
            elif nested and probe.clipped(obj):
                hidden.add(_address(obj))  # a page placed under another, clipped to its letterhead
        level = [c.FPDFFormObj_GetObject(f, i) for f in forms for i in range(c.FPDFFormObj_CountObjects(f))]
        nested = True
    if suspects:
        grounds = _grounds(probe, others)
        for obj in suspects:
            # Bounds are in the space of the object's form, as are those of a background drawn in
            # the same form (a plot's dark panel under its white labels).
            box = probe.bounds(obj)
            if box is not None and not _over_any(box, grounds):
                hidden.add(_address(obj))
    return hidden


def _grounds(probe: _Probe, objects: list[Any]) -> list[tuple[float, float, float, float]]:
    """Bounds of what is painted besides text: images and shadings (a scan under its OCR layer),
    filled non-white shapes (a slide's dark panel)."""
    c = probe.c
    out = []
    for obj in objects:
        kind = c.FPDFPageObj_GetType(obj)
        if kind == c.FPDF_PAGEOBJ_PATH:
            drawn = c.FPDFPath_GetDrawMode(obj, probe.fill, probe.stroke)
            if not drawn or not probe.fill.value or probe.white(obj) is not False:
                continue
        elif kind not in (c.FPDF_PAGEOBJ_IMAGE, c.FPDF_PAGEOBJ_SHADING):
            continue
        box = probe.bounds(obj)
        if box is not None:
            out.append(box)
    return out


def _over_any(
    box: tuple[float, float, float, float], grounds: list[tuple[float, float, float, float]]
) -> bool:
    x, y = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return any(left <= x <= right and bottom <= y <= top for left, bottom, right, top in grounds)


def _text_without(textpage: Any, hidden: set[int], breaks: set[int], marked: Marked) -> tuple[str, int]:
    """The page's text character by character, leaving out those of the ``hidden`` objects and
    those ``marked`` drops, with a blank line before each line in ``breaks``."""
    import pypdfium2.raw as pdfium_c

    kept: list[str] = []
    dropped = 0
    for i in range(textpage.count_chars()):
        code = pdfium_c.FPDFText_GetUnicode(textpage.raw, i)
        owner = pdfium_c.FPDFText_GetTextObject(textpage.raw, i)
        char = chr(code)
        if i in breaks:
            kept.append("\n")
        if owner and not char.isspace() and _address(owner) in hidden:
            dropped += 1  # its spaces stay: the words either side of a hidden one stay apart
            continue
        if i in marked.drop:
            continue
        kept.append(char)
    return "".join(kept), dropped
