"""VTU-style syllabus booklets: what only this family of documents needs.

A VTU scheme booklet prints course after course, ordered by code, with a course header (code,
title, credits, CIE/SEE marks) at the start of each; a syllabus PDF is a page range cut from it,
so the text before its first header is the end of the previous course. Course codes carry the
scheme's year ("21CS53", "BCS403"), and students name courses by well-known short forms ("ADA",
"DBMS", "OS"). None of this is true of a syllabus from elsewhere, so it lives here, behind the
small interface of :mod:`worker.ingest.families`, not in the general chunker or catalogue.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from syllabot.worker.ingest.chunking import chunk_body, relabelled, split_subject
from syllabot.worker.ingest.headings import HeadingRule
from syllabot.worker.text.documents import Chunk

_I = re.IGNORECASE

#: The blocks a VTU scheme booklet prints beside the general ones (``headings.HEADINGS``): the CIE
#: and SEE marks split and its rubrics, the lab programs and the "Laboratory Component" inside a
#: module, the suggested resources and activities. A rule's ``whole`` keeps its block in one chunk.
HEADINGS: tuple[HeadingRule, ...] = (
    HeadingRule(
        re.compile(r"^assessment\s+details\b", _I), "section", "Assessment details", True, whole=True
    ),
    HeadingRule(
        re.compile(r"^continuous\s+internal\s+evaluation\s*:?\s*$", _I),
        "section",
        "Continuous Internal Evaluation",
        True,
        whole=True,
    ),
    HeadingRule(
        re.compile(r"^semester\s+end\s+exam(?:ination)?\s*:?\s*$", _I),
        "section",
        "Semester End Examination",
        True,
        whole=True,
    ),
    HeadingRule(re.compile(r"^(?:CIE|SEE)\s+for\s+\S.{0,70}$"), "section", None, True, whole=True),
    HeadingRule(
        re.compile(r"^suggested\s+learning\s+resources\b", _I),
        "section",
        "Suggested learning resources",
        True,
    ),
    HeadingRule(re.compile(r"^web\s*-?\s*links\b", _I), "section", "Web links and video lectures", True),
    HeadingRule(
        re.compile(r"^activity\s+based\s+learning\b", _I), "section", "Activity based learning", True
    ),
    HeadingRule(
        re.compile(r"^practical\s+component\b", _I), "section", "Practical component", True, whole=True
    ),
    # "List of experiments" opens a lab list even after the last module (strong); a bare "Lab programs:"
    # line inside a module is that module's lab component (weak), like "Laboratory Component:".
    HeadingRule(
        re.compile(r"^list\s+of\s+(?:lab(?:oratory)?\s+)?(?:experiments|programs|programmes)\b.{0,40}$", _I),
        "section",
        "Lab programs",
        True,
        whole=True,
    ),
    HeadingRule(
        re.compile(r"^lab(?:oratory)?\s+(?:experiments|programs|programmes)\s*:?\s*$", _I),
        "section",
        "Lab programs",
        False,
        whole=True,
    ),
    HeadingRule(re.compile(r"^RUBRICS?\s+FOR\b"), "section", None, True, whole=True),
    HeadingRule(
        re.compile(r"^teaching\s*-?\s*learning\s+process\s*(?:\(general\s+instructions\))?\s*:?\s*$", _I),
        "section",
        "Teaching-learning process",
        False,
    ),
    HeadingRule(
        re.compile(r"^laboratory\s+component\s*:?\s*$", _I),
        "section",
        "Laboratory component",
        False,
        whole=True,
    ),
)

_KNOWN: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = tuple(
    (re.compile(pattern), frozenset(aliases.split("|")))
    for pattern, aliases in (
        (
            r"\b(?:design and analysis|analysis and design) of algorithms?\b",
            "ada|daa|design and analysis of algorithms|analysis and design of algorithms",
        ),
        (r"\bdatabase management systems?\b", "dbms"),
        (r"\boperating systems?\b", "os"),
        (r"\bcomputer networks?\b", "cn"),
        (r"\bartificial intelligence\b|^ai\b", "ai|artificial intelligence"),
        (r"\bmachine learning\b", "ml"),
        (r"\bdeep learning\b", "dl"),
        (r"\btheory of computation\b|\bautomata theory\b", "toc|theory of computation"),
        (r"\bcompiler design\b|\bcompilers?\b", "cd"),
        (r"\bsoftware engineering\b", "se"),
        (r"\bobject[- ]oriented programming\b", "oop|oops"),
        (r"\bdata structures?\b", "ds"),
        (r"\bcomputer organi[sz]ation\b", "coa"),
        (r"\bcomputer graphics\b", "cg"),
        (r"\binternet of things\b", "iot"),
        (r"\bcloud computing\b", "cc"),
    )
)
"""Well-known short forms and older titles, added to a course whose (lower-case) title matches."""


def scheme_year(code: str) -> int | None:
    """The VTU scheme a course code belongs to: "21CS53" → 2021, "18CS53" → 2018, "BCS403" → 2022.

    VTU prefixes codes with the scheme's year up to the 2021 scheme and with "B" from the 2022 scheme
    on; other codes ("CI114TA") have no known scheme.
    """
    m = re.match(r"^(\d{2})[A-Z]", code)
    if m:
        return 2000 + int(m.group(1))
    if re.match(r"^B[A-Z]{2,4}\d{3}", code):
        return 2022
    return None


def known_aliases(title: str) -> frozenset[str]:
    """The well-known short forms and older titles of a course by its (lower-case) title."""
    found: set[str] = set()
    for pattern, aliases in _KNOWN:
        if pattern.search(title):
            found |= aliases
    return frozenset(found)


_MIN_EVIDENCE = 8
"""Shingles (5-word runs) a tail must share with one other course, beyond boilerplate, to be relabelled
by content: about a dozen words only that course prints (one textbook entry)."""


def _shingles(text: str, k: int = 5) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", text.lower())
    if len(words) < k:
        return {tuple(words)} if words else set()
    return {tuple(words[i : i + k]) for i in range(len(words) - k + 1)}


def may_be_relinked(chunk: Chunk) -> bool:
    """Whether :func:`link_course_tails` may rewrite this chunk (a tail carrying a course code
    without its title); every other chunk leaves it unchanged, so its text can be embedded before
    the rest of the batch is read (``worker/indexes/pipeline.py``)."""
    code, title = split_subject(chunk.subject)
    return code is not None and not title


def link_course_tails(chunks: Sequence[Chunk], min_coverage: float = 0.6) -> list[Chunk]:
    """Give tail chunks the full subject of the course they really belong to, when it is indexed.

    A PDF's text before its first course header is the end of the previous course in the booklet and
    carries only a guessed code (see :func:`preceding_code`: "21CS52" on 21CS53's p1). The whole
    tail is one course's, so it is linked as one group:

    1. a known subject with the guessed code ("21CS52 Computer Networks") completes the guess;
    2. otherwise the tail's own words decide, but only words that identify one course: the CIE/SEE
       rules every VTU syllabus prints verbatim are shared by many courses and are no evidence. (They
       once were: each tail chunk took the first course whose boilerplate covered it, and 21CS52's
       CIE rules on 21CS53 p1 were cited as "21CS42 Design and Analysis of Algorithms".) One course
       must hold at least ``min_coverage`` of the tail's distinctive shingles (and
       :data:`_MIN_EVIDENCE` of them); else the guess stays. Only chunks marked ``foreign`` are
       relabelled this way: a file's own course, even untitled, is never given to another course.

    A tail chunk with neither module nor section (a block continued from the previous page, such as
    the end of 21CS52's CIE rules) also takes the module/section of the chosen course's chunk that
    holds at least ``min_coverage`` of its words. Pure: returns new chunks, the others unchanged.
    """
    tails: dict[tuple[str, str], list[int]] = {}
    titled: dict[str, Counter[str]] = {}  # code -> full subjects seen with it (own files count double)
    for i, c in enumerate(chunks):
        code, title = split_subject(c.subject)
        if code is None:
            continue
        if not title:
            tails.setdefault((c.doc_id, code), []).append(i)
        else:
            titled.setdefault(code, Counter())[c.subject or ""] += 1 if c.foreign else 2
    out = list(chunks)
    if not tails or not titled:
        return out
    by_code: dict[str, tuple[set[tuple[str, ...]], set[str]]] | None = None
    common: set[tuple[str, ...]] = set()
    for (doc_id, guess), rows in tails.items():
        subject: str | None = None
        if guess in titled:
            subject = titled[guess].most_common(1)[0][0]
        elif all(chunks[i].foreign for i in rows):  # never re-assign a file's own (untitled) course
            if by_code is None:
                by_code, common = _shingles_by_code(chunks)
            mine = set().union(*(_shingles(chunk_body(chunks[i].text)) for i in rows)) - common
            votes = Counter(
                {
                    code: len(mine & shingles)
                    for code, (shingles, docs) in by_code.items()
                    if docs - {doc_id}  # the tail's own file is no witness
                }
            )
            if mine and votes:
                code, hits = votes.most_common(1)[0]
                if hits >= _MIN_EVIDENCE and hits >= min_coverage * len(mine) and code in titled:
                    subject = titled[code].most_common(1)[0][0]
        if subject is None:
            continue
        owners = [c for c in chunks if c.subject == subject and c.doc_id != doc_id]
        for i in rows:
            out[i] = _relabel(chunks[i], subject, owners, min_coverage)
    return out


def _shingles_by_code(
    chunks: Sequence[Chunk],
) -> tuple[dict[str, tuple[set[tuple[str, ...]], set[str]]], set[tuple[str, ...]]]:
    """Each titled course's shingles and documents, and the shingles printed under two courses or more
    (boilerplate: VTU's CIE/SEE rules, the teaching-learning strategies)."""
    by_code: dict[str, tuple[set[tuple[str, ...]], set[str]]] = {}
    for c in chunks:
        code, title = split_subject(c.subject)
        if code and title:
            shingles, docs = by_code.setdefault(code, (set(), set()))
            shingles.update(_shingles(chunk_body(c.text)))
            docs.add(c.doc_id)
    seen: Counter[tuple[str, ...]] = Counter()
    for shingles, _ in by_code.values():
        seen.update(shingles)
    return by_code, {s for s, n in seen.items() if n > 1}


def _relabel(chunk: Chunk, subject: str, owners: Sequence[Chunk], min_coverage: float) -> Chunk:
    """``chunk`` under ``subject``; a label-less continuation also takes its block's module/section."""
    module, section, kind = chunk.module, chunk.section, chunk.kind
    if module is None and section is None:
        mine = _shingles(chunk_body(chunk.text))
        best = max(owners, key=lambda o: len(mine & _shingles(chunk_body(o.text))), default=None)
        if (
            best is not None
            and mine
            and len(mine & _shingles(chunk_body(best.text))) >= min_coverage * len(mine)
        ):
            module, section, kind = best.module, best.section, best.kind
    return relabelled(chunk, subject, module, section, kind)


def preceding_code(code: str) -> str | None:
    """The course printed just before ``code`` in a scheme booklet: 21CS53 -> 21CS52.

    Why a guess at all: syllabus PDFs are page ranges cut from a university booklet ordered by
    course code, so text before the first header is the end of the previous course. Calling it
    21CS53 would put 21CS52's textbooks under the wrong course; ``worker.ingest.families.vtu.link_course_tails`` replaces
    the guess with evidence when the other course's PDF is indexed too.
    """
    m = re.match(r"^(?P<prefix>.*?)(?P<num>\d+)$", code)
    if not m or int(m.group("num")) <= 1:
        return None
    num = m.group("num")
    return f"{m.group('prefix')}{int(num) - 1:0{len(num)}d}"
