"""Turn uploaded bytes into a :class:`~worker.text.documents.Document`, or say exactly why not.

Why so many checks: uploads come from admins in a chat window, not from a pipeline. A scanned PDF,
a password-protected file, a phone photo renamed ``.pdf`` or a 60 MB booklet must each produce a
message the admin can act on ("... run OCR and upload the result"), never an empty index or a
stack trace. Every such failure is an :class:`IngestError` (a ``ValueError``) whose message says
what is wrong and what to do, so a batch can report it per file and carry on with the rest.

Dispatch looks at the extension *and* the first bytes: a real PDF or DOCX is loaded whatever its
name (with a warning when the name disagrees); content that is something else (a PNG named
``.pdf``, a ZIP that is not a Word document) is refused with a message naming what it really is.

Formats: PDF (PDFium via ``pdf_text``, page by page, 1-based *physical* page numbers — printed page
labels such as "Page 64" are ignored), Markdown with ``---`` front matter (``id, title, version,
status, lang``), plain text, DOCX (python-docx: paragraphs, headings and table cells in document
order, one page), and web pages and reStructuredText (``web_text``: main content, headings, table
rows as records; one page). Pure apart from parsing the bytes it is given; no file system or network access.
"""

from __future__ import annotations

import codecs
import io
import logging
import re
import unicodedata
import zipfile
from collections.abc import Callable
from pathlib import PurePath, PureWindowsPath

from syllabot.shared.formats import DOCUMENT_KINDS, SUPPORTED_TYPES, clean_name
from syllabot.worker.ingest.chunking import detect_subject
from syllabot.worker.ingest.doc_titles import cite_title_of
from syllabot.worker.ingest.ingest_errors import (
    CorruptFile,
    EmptyDocument,
    EncryptedFile,
    IngestError,
    NoTextLayer,
    TooLarge,
    UnsupportedType,
    short,
)
from syllabot.worker.ingest.markdown_text import setext_level
from syllabot.worker.ingest.pdf_repair import repair_pages
from syllabot.worker.ingest.pdf_text import read_pdf
from syllabot.worker.ingest.web_text import html_text, rst_text
from syllabot.worker.ingest.zip_bounds import Overflow, StrangeCompression, unpacked_size
from syllabot.worker.text.documents import Document, Page

log = logging.getLogger("syllabot.loaders")

_EXTENSIONS = DOCUMENT_KINDS
_LITTLE_TEXT_CHARS = 20  # non-space characters below which a page counts as "little text"
#: A PDF is warned about as a scan when more than this share of its pages has little text: a slide
#: deck's picture slides (8 of 12 real decks had one or more) are no scan.
SCANNED_SHARE = 0.5

__all__ = [
    "CorruptFile",
    "EmptyDocument",
    "EncryptedFile",
    "IngestError",
    "NoTextLayer",
    "TooLarge",
    "UnsupportedType",
    "load_document",
    "parse_front_matter",
    "slugify",
]


# ----------------------------------------------------------------------------------------------
# Sniffing
# ----------------------------------------------------------------------------------------------

_DESCRIPTIONS = {
    "pdf": "a PDF document",
    "docx": "a Word document",
    "xlsx": "an Excel workbook",
    "pptx": "a PowerPoint presentation",
    "odf": "an OpenDocument file",
    "epub": "an EPUB e-book",
    "zip": "a ZIP archive",
    "zip-damaged": "a damaged ZIP archive",
    "ole": "a legacy Microsoft Office file (.doc/.xls/.ppt, 97-2003 format)",
    "ooxml-encrypted": "a password-protected Office document",
    "png": "a PNG image",
    "jpeg": "a JPEG image",
    "gif": "a GIF image",
    "tiff": "a TIFF image",
    "webp": "a WebP image",
    "rtf": "an RTF document",
    "html": "an HTML page",
    "gzip": "a gzip archive",
    "text": "plain text",
    "binary": "binary data",
}

_IMAGE_KINDS = frozenset({"png", "jpeg", "gif", "tiff", "webp"})


def _sniff(data: bytes) -> str:
    """What the bytes are, from their signature (extension-independent)."""
    head = data[:1024]
    at = head.find(b"%PDF-")
    # Readers accept junk before the header (e.g. a mail gateway's binary prefix), but a text file
    # that merely mentions "%PDF-" is still text.
    if at == 0 or (at > 0 and (not head[:at].strip() or any(b == 0 or b >= 0x80 for b in head[:at]))):
        return "pdf"
    if data.startswith(b"PK\x03\x04") or data.startswith(b"PK\x05\x06"):
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                names = set(archive.namelist())
        except (zipfile.BadZipFile, OSError, ValueError):
            return "zip-damaged"
        if "word/document.xml" in names:
            return "docx"
        if any(n.startswith("xl/") for n in names):
            return "xlsx"
        if any(n.startswith("ppt/") for n in names):
            return "pptx"
        if "META-INF/container.xml" in names:
            return "epub"
        if "content.xml" in names and "mimetype" in names:
            return "odf"
        return "zip"
    if data.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        if "EncryptedPackage".encode("utf-16-le") in data[:1_000_000]:
            return "ooxml-encrypted"
        return "ole"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "gif"
    if data.startswith((b"II*\x00", b"MM\x00*")):
        return "tiff"
    if data.startswith(b"RIFF") and data[8:12] == b"WEBP":
        return "webp"
    if data.startswith(b"\x1f\x8b"):
        return "gzip"
    if data.lstrip().startswith(b"{\\rtf"):
        return "rtf"
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "text"
    lowered = head.lstrip().lower()
    if lowered.startswith((b"<!doctype html", b"<html")):
        return "html"
    if b"\x00" in data[:8192]:
        return "binary"
    return "text"


def _advice_for(kind: str) -> str:
    if kind in _IMAGE_KINDS:
        return "export it to PDF and run OCR so it has a text layer (e.g. `ocrmypdf`), or upload the original"
    if kind == "ole":
        return "open it in Word (or LibreOffice) and save it as .docx or PDF"
    if kind == "html":
        return "rename it to .html (Syllabot reads web pages as such)"
    if kind in {"xlsx", "pptx", "odf", "epub", "rtf"}:
        return "save or export it as PDF, .docx, .md or .txt"
    return "upload the original file"


# ----------------------------------------------------------------------------------------------
# Public entry point
# ----------------------------------------------------------------------------------------------


#: Defaults of what an upload may expand to (``SYLLABOT_MAX_EXPANDED_MB``, ``SYLLABOT_MAX_TEXT_MB``).
DEFAULT_MAX_EXPANDED_BYTES = 100 * 1024 * 1024
DEFAULT_MAX_TEXT_CHARS = 20_000_000
#: A DOCX part over :data:`RATIO_CHECKED_BYTES` unpacked that expands more than this many times is
#: a decompression bomb: real Word XML deflates 5-20x, images and fonts barely at all.
MAX_EXPANSION_RATIO = 100
RATIO_CHECKED_BYTES = 1024 * 1024


def load_document(
    data: bytes,
    filename: str,
    max_bytes: int,
    check: Callable[[], None] | None = None,
    *,
    max_expanded_bytes: int = DEFAULT_MAX_EXPANDED_BYTES,
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
) -> Document:
    """Load one uploaded file; raise a specific :class:`IngestError` subclass when it cannot be used.

    The size limit is checked first, before anything looks inside the bytes, so an oversized upload
    costs no parsing. ``check`` is called between a PDF's pages (a cancelled build raises from it:
    a long PDF must not hold a Ctrl-C for seconds). The file name and the titles come back without
    control or format characters (``clean_name``): a bidi override must never reach a citation.

    Bounded by what the bytes expand to, not only by their size: a DOCX's parts are checked for
    their unpacked size (``max_expanded_bytes``) and expansion ratio before anything is parsed, and
    the text extracted from any format for its length (``max_text_chars``); each refusal is
    :class:`TooLarge`. A 78 KB DOCX unpacking to 25 MB of XML costs no parsing.
    """
    doc = _load_document(data, filename, max_bytes, check, max_expanded_bytes, max_text_chars)
    _check_text(doc, max_text_chars)
    doc.title = clean_name(doc.title, doc.file)
    if doc.kind != "pdf":  # a PDF's is read from its first page as printed (``_load_pdf``)
        doc.cite_title = cite_title_of(doc, doc.pages[0].text)
    shown = clean_name(doc.cite_title or "", doc.title)
    doc.cite_title = shown if shown != doc.title else None
    return doc


def _load_document(
    data: bytes,
    filename: str,
    max_bytes: int,
    check: Callable[[], None] | None,
    max_expanded_bytes: int,
    max_text_chars: int,
) -> Document:
    name = PureWindowsPath(filename).name if "\\" in filename else PurePath(filename).name
    name = clean_name(name)
    size = len(data)
    if size > max_bytes:
        raise TooLarge(
            f"{name} is {_mb(size)}, over the {_mb(max_bytes)} limit; split it into smaller files or "
            "re-export it without embedded images (an operator can raise SYLLABOT_MAX_DOCUMENT_MB)",
            file=name,
        )
    if size == 0:
        raise EmptyDocument(f"{name} is empty (0 bytes); check you uploaded the right file", file=name)
    ext = PurePath(name).suffix.lower()
    claimed = _EXTENSIONS.get(ext)
    actual = _sniff(data)

    if actual in {"pdf", "docx"}:
        warnings = []
        if claimed != actual:
            warnings.append(
                f"{name} is named {ext or 'without an extension'} but contains {_DESCRIPTIONS[actual]}; "
                f"loaded it as {_DESCRIPTIONS[actual]}"
            )
        if actual == "docx":
            _check_expansion(data, name, max_expanded_bytes, check)
            doc = _load_docx(data, name)
        else:
            doc = _load_pdf(data, name, check, max_text_chars)
        doc.warnings[:0] = warnings
        return doc
    if actual == "ooxml-encrypted":
        raise EncryptedFile(
            f"{name} is a password-protected Office document; open it, remove the password "
            "(File > Info > Protect Document > Encrypt with Password, clear it), save and upload it again",
            file=name,
        )
    if claimed is None:
        what = _DESCRIPTIONS.get(actual, "an unknown format")
        raise UnsupportedType(
            f"{name} is {what} ({ext or 'no extension'}), which Syllabot cannot index; "
            f"supported types are {SUPPORTED_TYPES}"
            + ("; if it is plain text, rename it to .txt or .md" if actual == "text" else ""),
            file=name,
        )
    if claimed == "pdf":
        if actual in {"text", "binary", "zip-damaged"}:
            raise CorruptFile(
                f"{name} is not a readable PDF (it has no PDF header: the file is damaged or is not a PDF); "
                "re-export it or upload the original",
                file=name,
            )
        raise UnsupportedType(
            f"{name} is named .pdf but contains {_DESCRIPTIONS[actual]}, not a PDF; {_advice_for(actual)}. "
            f"Supported types are {SUPPORTED_TYPES}",
            file=name,
        )
    if claimed == "docx":
        if actual in {"zip", "zip-damaged", "text", "binary"}:
            detail = {
                "zip": "a ZIP archive without word/document.xml",
                "zip-damaged": "a damaged or truncated ZIP container",
            }.get(actual, "not a ZIP container at all")
            raise CorruptFile(
                f"{name} is not a readable Word document ({detail}); save it again from Word as .docx "
                "or upload a PDF",
                file=name,
            )
        raise UnsupportedType(
            f"{name} is named .docx but contains {_DESCRIPTIONS[actual]}; {_advice_for(actual)}. "
            f"Supported types are {SUPPORTED_TYPES}",
            file=name,
        )
    if claimed == "html" and actual in {"html", "text"}:
        return _load_web(data, name, "html")
    # .md / .txt / .rst
    if actual != "text":
        if actual == "binary":
            raise CorruptFile(
                f"{name} is not readable text (it contains binary data); upload the original text file, "
                "or a PDF or .docx",
                file=name,
            )
        raise UnsupportedType(
            f"{name} is named {ext} but contains {_DESCRIPTIONS[actual]}; {_advice_for(actual)}. "
            f"Supported types are {SUPPORTED_TYPES}",
            file=name,
        )
    if claimed == "rst":
        return _load_web(data, name, "rst")
    return _load_markdown(data, name) if claimed == "markdown" else _load_text(data, name)


def _check_expansion(
    data: bytes, name: str, max_expanded_bytes: int, check: Callable[[], None] | None = None
) -> None:
    """Refuse a DOCX whose parts unpack to more than ``max_expanded_bytes`` together, or one part
    of which expands more than :data:`MAX_EXPANSION_RATIO` times: first from the sizes its ZIP
    directory declares (milliseconds), then by inflating every part in bounded steps
    (``zip_bounds``), which catches a directory that understates them: before python-docx parses it."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return  # the loader reports the damaged container itself
    total = sum(m.file_size for m in members)
    if total > max_expanded_bytes:
        raise TooLarge(
            f"{name} unpacks to {_mb(total)}, over the {_mb(max_expanded_bytes)} limit for what a Word "
            "document may expand to; save it again from Word (or as PDF) and upload that (an operator "
            "can raise SYLLABOT_MAX_EXPANDED_MB)",
            file=name,
        )
    for m in members:
        if m.file_size > RATIO_CHECKED_BYTES and m.file_size > MAX_EXPANSION_RATIO * max(m.compress_size, 1):
            raise TooLarge(
                f"{name} looks like a decompression bomb: its part {m.filename} expands "
                f"{m.file_size // max(m.compress_size, 1)} times (to {_mb(m.file_size)}); save it again "
                "from Word (or as PDF) and upload that",
                file=name,
            )
    try:
        unpacked_size(data, max_expanded_bytes, check)
    except StrangeCompression as exc:
        raise CorruptFile(
            f"{name} is not a Word document Word wrote: its part {exc.part} uses ZIP compression method "
            f"{exc.method}, which Word never writes; save it again from Word as .docx or upload a PDF",
            file=name,
        ) from exc
    except Overflow as exc:
        if exc.unpacked > exc.declared:
            what = (
                f"its part {exc.part} unpacks to more than the {_mb(exc.declared)} its ZIP directory declares"
            )
        else:
            what = f"it unpacks to over the {_mb(max_expanded_bytes)} limit for what a Word document may expand to"
        raise TooLarge(
            f"{name} was refused as too large: {what}; save it again from Word (or as PDF) and upload "
            "that (an operator can raise SYLLABOT_MAX_EXPANDED_MB)",
            file=name,
        ) from exc


def _check_text(doc: Document, max_text_chars: int) -> None:
    """Refuse a document whose extracted text is over ``max_text_chars``."""
    chars = sum(len(p.text) for p in doc.pages)
    if chars > max_text_chars:
        raise TooLarge(
            f"{doc.file} holds {chars / 1e6:.1f} million characters of text, over the "
            f"{max_text_chars / 1e6:g} million limit; split it into smaller files (an operator can raise "
            "SYLLABOT_MAX_TEXT_MB)",
            file=doc.file,
        )


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB"


# ----------------------------------------------------------------------------------------------
# Helpers shared by the formats
# ----------------------------------------------------------------------------------------------

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_PUA = re.compile("[\ue000-\uf8ff]")
_LETTER = re.compile(r"[^\W\d_]")
_BENGALI = re.compile("[\u0980-\u09ff]")


def _clean(text: str, *, compat: bool = False) -> str:
    """Normalise extracted text: newlines, control characters, symbol-font bullets.

    ``compat`` applies NFKC, which undoes PDF ligatures ("ﬁ" -> "fi") and full-width forms.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = unicodedata.normalize("NFKC" if compat else "NFC", text)
    text = _PUA.sub("•", text)
    return _CONTROL.sub("", text)


def slugify(text: str) -> str:
    """A stable doc_id from a file stem: "RVCE_CI114TA AI" -> "rvce-ci114ta-ai"."""
    slug = re.sub(r"[\W_]+", "-", text.lower()).strip("-")
    return slug or "document"


def _stem(name: str) -> str:
    return PurePath(name).stem or name  # "shipping.bn.md" -> "shipping.bn", distinct from "shipping"


def _guess_lang(text: str) -> str:
    """Return "bn" when Bengali script dominates the letters, else "en" (front matter overrides it)."""
    letters = len(_LETTER.findall(text))
    if not letters:
        return "en"
    bengali = len(_BENGALI.findall(text))
    return "bn" if bengali / letters > 0.3 else "en"


def _decode(data: bytes, name: str) -> tuple[str, list[str]]:
    """UTF-8 (a BOM is fine), UTF-16 with a BOM; otherwise Windows-1252 with a warning."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16"), []
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as exc:
        where = exc.start
    for encoding in ("cp1252", "latin-1"):
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        return text, [
            f"{name} is not valid UTF-8 (first bad byte at offset {where}); read it as {encoding}, so some "
            "accented or non-Latin characters may be wrong: save it as UTF-8 and upload it again"
        ]
    raise AssertionError("latin-1 decodes every byte string")  # pragma: no cover


def _require_text(pages: list[Page], name: str) -> None:
    if not any(p.text.strip() for p in pages):
        raise EmptyDocument(
            f"{name} contains no text; add content or check you uploaded the right file", file=name
        )


# ----------------------------------------------------------------------------------------------
# PDF
# ----------------------------------------------------------------------------------------------

_JUNK_TITLES = re.compile(
    r"^(?:untitled|microsoft word\b.*|document\d*|\s*)$|\.(?:docx?|pdf|pptx?|odt)$", re.I
)


def _load_pdf(
    data: bytes,
    name: str,
    check: Callable[[], None] | None = None,
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
) -> Document:
    """Page by page through PDFium (``pdf_text``), repaired (``pdf_repair``); physical page numbers;
    scans and encryption reported clearly."""

    def bounded(read: int) -> None:
        if read > max_text_chars:  # stop reading: the rest is refused anyway
            raise TooLarge(
                f"{name} holds over {max_text_chars / 1e6:g} million characters of text; split it into "
                "smaller files (an operator can raise SYLLABOT_MAX_TEXT_MB)",
                file=name,
            )

    read = read_pdf(data, name, check, on_page=bounded)
    failed = read.failed
    raw = [_clean(text, compat=True) for text in read.pages]
    if len(failed) == len(raw):
        raise CorruptFile(
            f"{name} is not a readable PDF (text extraction failed on every page); re-export it or upload "
            "the original",
            file=name,
        )
    if not any(text.strip() for text in raw):
        raise NoTextLayer(
            f"{name} has no extractable text (scanned PDF?): none of its {len(raw)} page(s) has a text "
            "layer; run OCR on it (e.g. `ocrmypdf in.pdf out.pdf`, or Acrobat's Recognize Text) and upload "
            "the result",
            file=name,
        )
    texts, dropped = repair_pages(raw)
    dropped.hidden_chars = read.hidden_chars
    dropped.plot_glyphs = read.figure_chars
    dropped.undecoded_runs = read.undecoded_runs
    pages = [Page(number, text) for number, text in enumerate(texts, start=1)]
    warnings: list[str] = []
    if failed:
        warnings.append(f"{name}: could not read the text of page(s) {_pages(failed)}; they are not indexed")
    thin = [
        n
        for n, text in enumerate(raw, start=1)
        if n not in failed and len("".join(text.split())) < _LITTLE_TEXT_CHARS
    ]
    if len(thin) > len(raw) * SCANNED_SHARE:  # picture slides among text slides are no scan
        warnings.append(
            f"{name}: {len(thin)} of {len(raw)} pages have no text layer (page(s) {_pages(thin)}; scanned?); "
            "their content will not be found unless you OCR the file and upload it again"
        )
    # The title and course come from the pages as printed, running header included.
    printed = [Page(number, text) for number, text in enumerate(raw, start=1)]
    stem = _stem(name)
    subject = detect_subject(printed, prefer=stem)
    title = read.title if read.title and not _JUNK_TITLES.search(read.title) else None
    doc = Document(
        doc_id=slugify(stem),
        file=name,
        title=title or subject or stem,
        pages=pages,
        kind="pdf",
        lang=_guess_lang(" ".join(p.text for p in pages)[:20000]),
        subject=subject,
        warnings=warnings,
        dropped=dropped.as_report(),
        bullets=tuple((page, "".join(_clean(probe, compat=True).split())) for page, probe in read.bullets),
    )
    # Slides, notes, US-style syllabi: the course and title their first page prints, for citations.
    doc.cite_title = cite_title_of(doc, raw[0])
    return doc


def _pages(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:10])
    return shown + (f" and {len(numbers) - 10} more" if len(numbers) > 10 else "")


# ----------------------------------------------------------------------------------------------
# Markdown and plain text
# ----------------------------------------------------------------------------------------------

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(?P<body>.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
_MD_H1 = re.compile(r"^#\s+(?P<title>.+?)\s*#*\s*$", re.M)


def parse_front_matter(text: str) -> tuple[dict[str, str], str, list[str]]:
    """Split ``---`` front matter (simple ``key: value`` lines) from the body.

    Returns (fields with lower-case keys, body, warnings). Deliberately not YAML: the fields are flat
    strings, and a YAML parser would turn ``version: 3.10`` into the float 3.1.
    """
    if not text.startswith("---"):
        return {}, text, []
    m = _FRONT_MATTER.match(text)
    if not m:
        return {}, text, ["front matter starts with --- but has no closing --- line; it was read as text"]
    fields: dict[str, str] = {}
    for line in m.group("body").split("\n"):
        if not line.strip() or line.lstrip().startswith("#") or ":" not in line:
            continue
        key, value = line.split(":", 1)
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        fields[key.strip().lower()] = value
    return fields, text[m.end() :], []


def _load_markdown(data: bytes, name: str) -> Document:
    text, warnings = _decode(data, name)
    text = _clean(text)
    fields, body, fm_warnings = parse_front_matter(text)
    warnings += [f"{name}: {w}" for w in fm_warnings]
    pages = [Page(1, body)]
    _require_text(pages, name)
    stem = _stem(name)
    return Document(
        doc_id=fields.get("id") or slugify(stem),
        file=name,
        title=fields.get("title") or _markdown_title(body) or stem,
        pages=pages,
        kind="markdown",
        version=fields.get("version") or None,
        status=(fields.get("status") or "current").lower(),
        lang=(fields.get("lang") or _guess_lang(body)).lower(),
        subject=fields.get("subject") or None,
        warnings=warnings,
    )


def _markdown_title(body: str) -> str | None:
    """The first level-1 heading: a "# Title" line, or a line underlined with "=" (the one rule the
    chunker reads underlines by, ``markdown_text.setext_level``)."""
    lines = body.split("\n")
    for k, line in enumerate(lines):
        atx = _MD_H1.match(line)
        if atx:
            return atx.group("title")
        if k + 1 < len(lines) and setext_level(line, lines[k + 1]) == 1:
            return line.strip()
    return None


def _load_web(data: bytes, name: str, kind: str) -> Document:
    """A web page or a reStructuredText file, read by ``web_text`` as Markdown-shaped text (the
    chunker then finds its headings and table rows as in Markdown)."""
    text, warnings = _decode(data, name)
    try:
        page = html_text(text) if kind == "html" else rst_text(text)
    except Exception as exc:  # a parser's internal error on hostile markup: still a per-file refusal
        raise CorruptFile(
            f"{name} could not be read as {'a web page' if kind == 'html' else 'reStructuredText'} "
            f"({short(exc)}); save it again or upload it as PDF",
            file=name,
        ) from exc
    pages = [Page(1, _clean(page.text))]
    _require_text(pages, name)
    stem = _stem(name)
    subject = detect_subject(pages, prefer=stem)
    return Document(
        doc_id=slugify(stem),
        file=name,
        title=page.title or subject or stem,
        pages=pages,
        kind=kind,
        lang=page.lang or _guess_lang(pages[0].text),
        subject=subject,
        warnings=warnings,
    )


def _load_text(data: bytes, name: str) -> Document:
    text, warnings = _decode(data, name)
    pages = [Page(1, _clean(text))]
    _require_text(pages, name)
    stem = _stem(name)
    subject = detect_subject(pages, prefer=stem)
    heading = _MD_H1.search(pages[0].text)
    return Document(
        doc_id=slugify(stem),
        file=name,
        title=(heading.group("title") if heading else None) or subject or stem,
        pages=pages,
        kind="text",
        lang=_guess_lang(pages[0].text),
        subject=subject,
        warnings=warnings,
    )


# ----------------------------------------------------------------------------------------------
# DOCX
# ----------------------------------------------------------------------------------------------


def _load_docx(data: bytes, name: str) -> Document:
    """Paragraphs and tables in document order; headings become ``#``/``##`` lines for the chunker."""
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    try:
        document = docx.Document(io.BytesIO(data))
        lines = list(_docx_blocks(document))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError, OSError, AttributeError) as exc:
        raise CorruptFile(
            f"{name} is not a readable Word document ({short(exc)}); save it again from Word as .docx or "
            "upload a PDF",
            file=name,
        ) from exc
    except Exception as exc:  # lxml syntax errors and the like from damaged XML parts
        raise CorruptFile(
            f"{name} is not a readable Word document (damaged XML: {short(exc)}); save it again from Word "
            "as .docx or upload a PDF",
            file=name,
        ) from exc
    pages = [Page(1, _clean("\n".join(lines)))]
    _require_text(pages, name)
    stem = _stem(name)
    subject = detect_subject(pages, prefer=stem)
    try:
        core_title = (document.core_properties.title or "").strip()
    except Exception:  # damaged docProps/core.xml: the title is optional
        log.debug("%s: unreadable core properties", name, exc_info=True)
        core_title = ""
    first_heading = next((ln.lstrip("# ").strip() for ln in lines if ln.startswith("#")), None)
    return Document(
        doc_id=slugify(stem),
        file=name,
        title=core_title or first_heading or subject or stem,
        pages=pages,
        kind="docx",
        lang=_guess_lang(pages[0].text),
        subject=subject,
    )


def _docx_blocks(container: object, styles: dict[str | None, str] | None = None) -> list[str]:
    """``styles``: style id -> name, with None for the document's default paragraph style, read
    once: python-docx's ``Paragraph.style`` looks the default up by scanning every style for each
    paragraph without one (3,000 short paragraphs took 17 s)."""
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    if styles is None:
        styles = _style_names(container)
    out: list[str] = []
    for block in container.iter_inner_content():  # type: ignore[attr-defined]
        if isinstance(block, Paragraph):
            text = block.text.strip()
            if not text:
                out.append("")
                continue
            style_id = block._p.style  # the pStyle id, or None
            style = styles.get(style_id, "") if style_id in styles else styles.get(None, "")
            out.append(_heading_prefix(style) + text)
        elif isinstance(block, Table):
            out.extend(_docx_table(block, styles))
    return out


def _style_names(container: object) -> dict[str | None, str]:
    """Paragraph style id -> name, and None -> the default paragraph style's name."""
    from docx.enum.style import WD_STYLE_TYPE

    part = getattr(container, "part", None)
    document = getattr(part, "document", None)
    if document is None:
        return {}
    names: dict[str | None, str] = {}
    try:
        for style in document.styles:
            if style.type == WD_STYLE_TYPE.PARAGRAPH:
                names[style.style_id] = style.name or ""
        default = document.styles.default(WD_STYLE_TYPE.PARAGRAPH)
    except Exception:  # damaged styles.xml: headings are then not recognised, the text still is
        log.debug("unreadable styles", exc_info=True)
        return names
    names[None] = (default.name or "") if default is not None else ""
    return names


def _heading_prefix(style: str) -> str:
    """Title -> "# ", Heading 1/2 -> "## ", deeper -> "### ", list items -> "• "."""
    if style == "Title":
        return "# "
    m = re.match(r"Heading\s*(\d)", style)
    if m:
        return "## " if int(m.group(1)) <= 2 else "### "
    if style.startswith("List"):
        return "• "
    return ""


def _docx_table(table: object, styles: dict[str | None, str]) -> list[str]:
    """One line per row, cells joined by spaces (as PDF extraction reads a table); merged cells once."""
    lines: list[str] = []
    for row in table.rows:  # type: ignore[attr-defined]
        seen: set[int] = set()
        cells: list[str] = []
        for cell in row.cells:
            key = id(cell._tc)
            if key in seen:
                continue
            seen.add(key)
            inner = [ln for ln in _docx_blocks(cell, styles) if ln.strip()]
            if inner:
                cells.append(" ".join(inner))
        if cells:
            lines.append(" ".join(cells))
    return lines
