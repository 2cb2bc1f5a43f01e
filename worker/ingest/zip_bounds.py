"""What a ZIP container (a DOCX) really unpacks to, found out within a fixed amount of memory.

Why: a ZIP's directory *declares* each part's size, and the declared sizes are cheap to check, but a
crafted archive can understate them (``word/document.xml`` declared 200 KB, really 400 MB).
``zipfile`` then hands python-docx a part it inflates in one call: the worker grew to 1-2 GB before
``Bad CRC-32``. Here every deflated part is inflated in small steps with a running total, straight
from its compressed bytes and past its declared size, so an archive that lies is refused as too
large as soon as the total passes the limit, holding one step's output at a time.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Callable

#: Bytes inflated per step: what the check holds in memory at once, besides the upload itself.
STEP = 64 * 1024
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, then file name and extra field lengths
_LOCAL_SIGNATURE = b"PK\x03\x04"


class Overflow(Exception):
    """The parts unpack to more than the limit, or a part to more than the directory declares for
    it (``unpacked > declared``); ``part`` is the one that did."""

    def __init__(self, part: str, unpacked: int, declared: int) -> None:
        super().__init__(part)
        self.part = part
        self.unpacked = unpacked
        self.declared = declared


class StrangeCompression(Exception):
    """A part compressed with a method Word never writes (bzip2, LZMA …): ``zipfile`` would inflate
    it with no bound on its output, so it is refused rather than measured."""

    def __init__(self, part: str, method: int) -> None:
        super().__init__(part)
        self.part = part
        self.method = method


def unpacked_size(data: bytes, limit: int, check: Callable[[], None] | None = None) -> int:
    """The bytes all parts of the archive ``data`` inflate to; :class:`Overflow` past ``limit``,
    :class:`StrangeCompression` for a part neither stored nor deflated.

    A damaged container or part is not this function's to report: it returns what it counted and
    leaves the refusal to the parser. ``check`` runs between steps (a cancelled build raises).
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return 0
    total = 0
    view = memoryview(data)
    for member in members:
        if member.compress_type == zipfile.ZIP_DEFLATED:
            start = _data_start(data, member.header_offset)
            if start is None:
                continue
            total = _inflate(view[start:], member, total, limit, check)
        elif member.compress_type == zipfile.ZIP_STORED:  # what it holds is what it takes
            total += member.compress_size
            if total > limit:
                raise Overflow(member.filename, total, member.file_size)
        else:  # zipfile inflates bzip2 and LZMA without an output bound: never let it try
            raise StrangeCompression(member.filename, member.compress_type)
    return total


def _data_start(data: bytes, offset: int) -> int | None:
    if offset < 0 or offset + _LOCAL_HEADER.size > len(data):
        return None
    signature, name_len, extra_len = _LOCAL_HEADER.unpack_from(data, offset)
    if signature != _LOCAL_SIGNATURE:
        return None
    return offset + _LOCAL_HEADER.size + int(name_len) + int(extra_len)


def _inflate(
    compressed: memoryview,
    member: zipfile.ZipInfo,
    total: int,
    limit: int,
    check: Callable[[], None] | None,
) -> int:
    """``total`` plus what ``member``'s deflate stream inflates to, read to its real end (its
    declared compressed size may lie too), one :data:`STEP` of output at a time."""
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    fed = part = 0
    while not inflater.eof:
        chunk: bytes | memoryview = inflater.unconsumed_tail
        if not chunk:
            if fed >= len(compressed):
                break  # truncated: the parser reports the damaged part
            chunk = compressed[fed : fed + STEP]
            fed += len(chunk)
        try:
            out = inflater.decompress(chunk, STEP)
        except zlib.error:
            break  # damaged: the parser reports it
        part += len(out)
        total += len(out)
        if total > limit or part > member.file_size:  # over the limit, or the directory lied
            raise Overflow(member.filename, part, member.file_size)
        if check is not None:
            check()
    return total
