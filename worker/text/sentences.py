"""Split course text into sentences without cutting names, titles and abbreviations apart.

Why this exists: the naive rule "``.`` + space + capital ends a sentence" cut "Andrew S. Tanenbaum"
into "Andrew S." and "Tanenbaum, ...", so an answer quoting a textbook line lost the author's name.
Syllabi are full of such periods: initials ("James F. Kurose"), titles ("Prof.", "Dr."),
bibliographic abbreviations ("et al.", "Vol.", "pp.", "Ed."), money ("Rs. 500") and numbered items
("1. Computer Networks ... 2011. 2. Computer Networking ..."). This module keeps them whole.

Rules, in order (see :func:`split_sentences`):

* Paragraph breaks (a blank line) and a new line starting with a list marker ("1.", "•", "-",
  "CO1", "#") always start a new sentence — the same structure ``worker/ingest/chunking.py`` and the
  extractive answerer respect.
* ``।`` / ``॥`` (Bangla, Devanagari) and the full-width ``？ ！ 。`` end a sentence whether or not a
  space follows: those scripts have no capital letters to look at.
* ``. ! ?`` (optionally followed by closing quotes/brackets) end a sentence only when whitespace
  follows and the next character is not a lower-case letter and not ``, ; : ) ] }`` — i.e. a
  capital, a digit, an opening quote/bracket, a bullet, or a letter of a caseless script (Bangla).
* ``?`` and ``!`` always end a sentence under that condition. A ``.`` does not when it closes a
  single capital initial ("S."), a known abbreviation (case-insensitive, :data:`ABBREVIATIONS`), a
  dotted acronym ("U.S.", "e.g.", "i.e.", "Ph.D.") — except "a.m."/"p.m.", which often end a
  sentence — or a list marker standing alone ("1.", "ii.", "Q3.") at the start of a sentence.
  An ellipsis ("...", "…") never ends one: in syllabi it trails off inside a list of topics.

Known trade-off: "programming in C. The course ..." is not split, because "C." cannot be told from
an initial without a dictionary of names; keeping a name whole matters more than splitting there.

Pure: no I/O. Results are cached per text because the same 18 chunks come back question after
question.
"""

from __future__ import annotations

import re
from functools import lru_cache

from syllabot.worker.text.text_caches import PER_TEXT

__all__ = ["ABBREVIATIONS", "NUMBERED_ITEM", "ROUND_BULLETS", "split_sentences", "split_sentences_once"]

#: Words that end in "." without ending the sentence; lower case, without the final dot.
ABBREVIATIONS: frozenset[str] = frozenset(
    {
        # titles and names
        "prof", "profs", "dr", "drs", "mr", "mrs", "ms", "mx", "jr", "sr", "st", "mt", "smt", "shri",
        "hon", "capt", "lt", "col", "gen", "sgt", "rev", "fr", "mme", "mlle",
        # bibliography and document parts
        "al", "ed", "eds", "edn", "vol", "vols", "no", "nos", "pp", "p", "pg", "pgs", "fig", "figs",
        "ch", "chap", "sec", "secs", "eq", "eqn", "eqs", "ref", "refs", "sl", "ex", "tab",
        "appx", "para", "cf", "viz", "etc", "ibid", "op", "cit", "publ", "repr", "trans",
        # organisations
        "pvt", "ltd", "inc", "co", "corp", "bros", "dept", "univ", "govt", "assoc", "intl", "inst",
        # measures, comparisons, money
        "vs", "v", "approx", "est", "min", "max", "avg", "rs", "resp",
        # months
        "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
        # Bangla: ড. (Dr.), মো. (Md.)
        "ড", "মো", "মোসা",
    }
)  # fmt: skip

# A candidate end. Soft: ". ! ?" (or an ellipsis), closers, whitespace, then anything but an ASCII
# lower-case letter or ", ; : ) ] }". Hard: danda or full-width marks, whitespace optional. The
# leading lookahead lets the engine skip to a terminator quickly (the splitter runs over every chunk).
_BOUNDARY = re.compile(
    r"(?=[.!?…।॥。？！])"
    r"(?:(?P<soft>[.!?…]+)(?P<close>[\"'”’»)\]]*)\s+(?=[^\sa-z,;:)\]}])"
    r"|[।॥。？！]+[\"'”’»)\]]*\s*(?=\S))"
)
#: The round bullets that open a list item, with or without a space after them ("•Quick check-in":
#: Keynote and PowerPoint exports write none). The one definition the chunker, the answerer and the
#: conflict check share.
ROUND_BULLETS = "•●▪◦■"
#: A numbered item's opening, as PDFs print it: "1. ", "1) ", "1.) ", or "1.Email" (the space lost).
NUMBERED_ITEM = r"\d{1,2}[.)]\)?\s|\d{1,2}\.(?=[A-Z][a-z])"
#: A list item's start on its own line: a number, a bullet, a dash, "CO1" (not "## …", which in a
#: PDF is R console output). The one definition the chunker's windows and the conflict check share.
ITEM_START = re.compile(rf"^(?:{NUMBERED_ITEM}|[{ROUND_BULLETS}]|[\-*–]\s|CO\s*\d|CLO\s*\d)")

# Paragraph breaks and new lines opening a list item: always a new sentence.
_BLOCK_BREAK = re.compile(
    r"\n[ \t]*\n\s*"
    rf"|\n[ \t]*(?=(?:{NUMBERED_ITEM}|[{ROUND_BULLETS}]|[*–-]\s|CO\s*\d|CLO\s*\d|#{{1,6}}\s|\(\w{{1,3}}\)\s))"
)
_INITIAL = re.compile(r"[A-Z]")
_DOTTED = re.compile(r"(?:[A-Za-z]{1,2}\.)+[A-Za-z]{1,4}")  # U.S, e.g, i.e, Ph.D, B.Tech, a.m
_ENDING_DOTTED = frozenset({"a.m", "p.m"})
# A sentence that so far is only a list marker: "1", "(2", "iv", "a", "Q3", "Step 2", "1.2".
_MARKER_ONLY = re.compile(
    r"[(\[]?(?:(?:[A-Za-z]{1,4}\.?\s?)?\d{1,3}(?:\.\d{1,2})*|[ivxIVX]{1,4}|[A-Za-z])", re.ASCII
)
_MARKER_TOKEN = re.compile(r"\d{1,2}|[ivx]{1,4}|[IVX]{1,4}|[a-z]")
_OPENING = "([{\"'“‘«"


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``, stripped, empty parts dropped (see the module docstring for the rules).

    Inner whitespace, including single line breaks from wrapped PDF lines, is left as it is: this
    only decides where sentences end, so callers can map sentences back to the source text.
    """
    return list(_split_cached(text))


def split_sentences_once(text: str) -> list[str]:
    """:func:`split_sentences` for a text read once (the index-time record of versions reads every
    passage of a collection): not kept in the question path's cache, whose hot passages it would evict."""
    return list(_split_cached.__wrapped__(text))


@lru_cache(maxsize=PER_TEXT)
def _split_cached(text: str) -> tuple[str, ...]:
    out: list[str] = []
    for block in _BLOCK_BREAK.split(text):
        if block and not block.isspace():
            _split_block(block, out)
    return tuple(out)


def _split_block(block: str, out: list[str]) -> None:
    start = 0
    for m in _BOUNDARY.finditer(block):
        term = m.group("soft")
        if term is not None and not _ends_sentence(block, start, m, term):
            continue
        part = block[start : m.end()].strip()
        if part:
            out.append(part)
        start = m.end()
    tail = block[start:].strip()
    if tail:
        out.append(tail)


def _ends_sentence(block: str, start: int, m: re.Match[str], term: str) -> bool:
    """Whether the ``. ! ?`` run ``term`` matched by ``m`` ends the sentence begun at ``start``."""
    if block[m.end()].islower():
        return False  # a lower-case letter outside ASCII ("é"); ASCII is excluded by the pattern
    if term != ".":
        return "?" in term or "!" in term  # an ellipsis never ends a sentence
    dot = m.start()
    if m.group("close") == ")" and _MARKER_TOKEN.fullmatch(block[start:dot].strip()):
        return False  # "1.) What did I work on?": an item's marker
    if m.group("close"):
        return True  # 'He said "Stop." Then' -- the quote or bracket closed the sentence
    token = block[max(start, block.rfind(" ", start, dot) + 1) : dot]
    if "\n" in token or "\t" in token:
        token = token.split()[-1] if token.split() else ""
    token = token.lstrip(_OPENING)
    if not token:
        return True
    if _INITIAL.fullmatch(token) or token.lower() in ABBREVIATIONS:
        return False
    if _DOTTED.fullmatch(token):
        return token.lower() in _ENDING_DOTTED
    # "1." / "iv." / "Q3." opening an item is a marker, not a sentence: either all that the sentence
    # holds so far, or a numeral right after an unsplit end ("i. Paging. ii. Segmentation.").
    if dot - start <= 16 and _MARKER_ONLY.fullmatch(block[start:dot].strip()):
        return False
    if _MARKER_TOKEN.fullmatch(token):
        before = block[start : dot - len(token)].rstrip()
        if before.endswith(("!", "?")):
            return False
        if before.endswith("."):  # unless that "." was an abbreviation's: "Fig. 3. It ..."
            previous = before.rsplit(None, 1)[-1][:-1].lstrip(_OPENING).lower()
            return previous in ABBREVIATIONS
    return True


#: Code and console output: "## [1] 6" (printed output), "x <- c(1, 2)", "df %>% bind_rows()",
#: "sparklyr::spark_install()", "library(dplyr)", "> summary(fit)", "{{ }}" / "[[ ]]" runs.
_CODE = re.compile(r"(?:^|\s)##\s|<-|%>%|\|>|::|\blibrary\(|(?:^|\n)\s*>\s|[{}\[\]]{2}")


def looks_like_code(text: str) -> bool:
    """Whether ``text`` is code or console output rather than prose: its numbers are data and its
    words are identifiers, so it never answers what something is or how it is computed."""
    return _CODE.search(text) is not None
