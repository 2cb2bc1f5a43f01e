"""How a retrieved chunk's text reads back: its body, and its paragraphs, list items and rows.

Why here, beside the chunker: a chunk's text starts with the context line :mod:`chunking` wrote
for the embedder and may carry slide furniture (:mod:`pdf_repair`); every stage that reads a
passage back (search carrying a list across passages, the answerer quoting one) must take the
same body and split it into the same blocks, or a list item one finds the other misses. Pure
functions, cached by text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePath

from syllabot.shared.schema import Hit
from syllabot.worker.ingest.chunking import context_line, field_key
from syllabot.worker.ingest.pdf_repair import without_furniture
from syllabot.worker.text.sentences import NUMBERED_ITEM
from syllabot.worker.text.text_caches import PER_TEXT

#: What an answer puts before a quoted list item that has no number of its own ("- Quick check-in"
#: for "•Quick check-in"); ``answerers.base.narrowed`` looks the item up without it.
LIST_DASH = "- "

_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|[•●▪◦]\s*|[-*+]\s+|>\s*)")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")
LIST_ITEM = re.compile(
    rf"^\s*(?:[-*•●▪◦+\uf0b7]\s*|{NUMBERED_ITEM}|\d{{1,2}}\s+(?=[A-Z][a-z])|(?:CO|CLO|PO)\s?-?\d+\s*[.:)\-]?\s|[a-z][.)]\s+|\(?[ivx]{{1,4}}\)\s+)"
)


def passage(hit: Hit) -> str:
    """The chunk's text without the context line the chunker puts first for the embedder, and
    without slide furniture (its file stem, a page label, a line of symbols: ``is_furniture``),
    which is never quoted."""
    return _body(
        hit.text, hit.subject or hit.title, hit.module or hit.section, PurePath(hit.file).stem, hit.title
    )


@lru_cache(maxsize=PER_TEXT)
def _body(text: str, head: str, part: str | None, stem: str, title: str) -> str:
    """:func:`passage` of a chunk's text, cached: the answer path reads the same hits' bodies some
    forty times a question, and the furniture check reads every line against the names."""
    first, _, rest = text.partition("\n")
    body = rest if rest and first.strip() == context_line(head, part) else text
    return without_furniture(body, (stem, title))


@dataclass(frozen=True)
class Block:
    """A paragraph, list item or table row of a chunk (``item``: it was a list item)."""

    text: str
    item: bool = False
    row: bool = False  # a table row


#: A sentence that announces what follows it ("Please view the materials below …", "… the following
#: sections:"): the table or list after it is what it introduces.
ANNOUNCING = r"\b(?:below|following)\b"
ANNOUNCES = re.compile(rf":$|{ANNOUNCING}", re.IGNORECASE)


@lru_cache(maxsize=PER_TEXT)
def read_blocks(text: str) -> tuple[Block, ...]:
    """Paragraphs and list items, with lines that a layout wrapped mid-sentence joined back.

    Markdown and PDF text both wrap long sentences over several lines; a blank line, a list item,
    a table row or a header record following another starts a new block. Cached: the same chunks
    come back question after question.
    """
    out: list[Block] = []
    current: list[str] = []
    item = False
    previous = ""  # the line read last

    def flush() -> None:
        if current:
            out.append(Block(" ".join(current), item))
            current.clear()

    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or _TABLE_RULE.match(line):
            flush()
            continue
        if stripped.startswith("|"):
            flush()
            cells = [c.strip() for c in stripped.strip("|").split("|") if c.strip()]
            if cells:
                # the rows of a table that a sentence announces are the items of its list
                last = out[-1] if out else None
                listed = last is not None and (
                    last.item if last.row else len(last.text) <= 200 and bool(ANNOUNCES.search(last.text))
                )
                text = ": ".join(cells)
                if listed and len(cells) == 1 and ";" not in text and field_key(text):
                    text = text.split(":", 1)[1].strip()  # "Description: Belmont Report" as an item
                out.append(Block(text, listed, row=True))
            continue
        # a header record after another ("Teaching Assistant: Bo Lindqvist; Email: …; Office Hours:
        # MWF 11:30AM" after the instructor's) is its own block, as a list item or heading is
        record = bool(current) and field_key(previous) is not None and field_key(stripped) is not None
        starts_item = bool(LIST_ITEM.match(stripped))
        if starts_item or stripped.startswith("#") or record:
            flush()
        if not current:
            item = starts_item
        current.append(_MARKUP.sub("", stripped).strip() if not current else stripped)
        previous = stripped
    flush()
    return tuple(b for b in out if b.text)


def leading_items(found: Sequence[Block]) -> Sequence[Block]:
    """The list items a passage's blocks ``found`` start with: what continues a list cut at the
    passage before it; empty when it starts with anything else."""
    k = next((n for n, block in enumerate(found) if not block.item), len(found))
    return found[:k]


def blocks(text: str) -> list[str]:
    """The texts of :func:`read_blocks`."""
    return [b.text for b in read_blocks(text)]


def item_line(text: str) -> str:
    """A quoted list item's line: its own number kept ("2.) What am I planning…"), else a dash."""
    return text if LIST_ITEM.match(text) else f"{LIST_DASH}{text}"
