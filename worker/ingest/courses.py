"""Which courses a question names, by the names students use (pure).

Why: students never type "21CS42". They write "ADA", "DAA", "OS", "CN", "dbms", "the AI course" or
"operating system", and "CO4 of ADA" must be answered from 21CS42's outcomes, not from whichever
course's CO4 scores best. The names are learned per collection from the chunks' ``subject`` ("21CS44
Operating Systems" = course code + printed title, see :mod:`worker.ingest.chunking`), so a new course needs
no configuration:

* its **code** ("21cs44", also typed "21CS 44" or "21-cs-44");
* its **title**, singular or plural ("operating system(s)"), "&" for "and", "-isation"/"-ization";
* the title's **initials** without stopwords ("design and analysis of algorithms" → "daa",
  "database management systems" → "dms");
* **acronyms printed in the title** ("AI Foundations for Engineers" → "ai", "DBMS Laboratory" → "dbms");
* the **well-known short forms and older titles** a document family knows (``worker.ingest.families``: the VTU table), applied when the title
  matches: VTU's older "Analysis and Design of Algorithms" is why "ADA" names 21CS42 "Design and
  Analysis of Algorithms"; "dbms", "os", "cn", "ai", "ml", "toc", "oop(s)" ...

Safety, because a named course *restricts* the search to its chunks (a false mention is worse than
none): aliases match as whole tokens only ("ai" never inside "said", "os" never inside "cost"); an
alias equal to a stopword ("is", "it", "in", "a") is never made; short forms that are also ordinary
words or chat slang ("SE", "CD", "CG", "DMS" vs Discord's "DMs") count only when typed in capitals,
and not in a question typed all in capitals.

Several courses may share a name ("DBMS" is 21CS53 of the 2021 scheme and BCS403 of the 2022 scheme):
all are returned, unless the question narrows it — by a code or a name only one of them has
("BCS403"), by a scheme year ("2022 scheme"), or by "new"/"latest" vs "old"/"previous" right next to
the name ("the new DBMS", "DBMS old scheme"). VTU encodes the scheme in the code
(``worker.ingest.families.scheme_year``).

Cost: :meth:`CourseCatalog.from_chunks` runs once per index load (one pass over the chunks and one
compiled regular expression); :meth:`CourseCatalog.mentioned` runs per question (one regex scan).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from syllabot.worker.ingest.chunking import split_subject
from syllabot.worker.ingest.families import family_aliases, scheme_year
from syllabot.worker.text.documents import Chunk

# ----------------------------------------------------------------------------------------------
# Vocabulary
# ----------------------------------------------------------------------------------------------

_STOPWORDS = frozenset(
    "a an and as at by for from in into of on or the to with using based its is it be".split()
)
"""Left out of initials, and never an alias on their own."""

_NEVER = _STOPWORDS | frozenset(
    "am are do go he hi i if me my no ok so up us we co po pso clo cie see rbt ipcc lab tlp".split()
)
"""Aliases that would fire on ordinary sentences or on syllabus vocabulary ("CO 3" is a course
outcome, never "Computer Organization"): never made."""

_UPPER_ONLY = frozenset(
    "se cd cg cc pp pm dms ace art bad big can cat end fun hot law let map may net new old "
    "one run sad set sum top use war way web who why win flat".split()
)
"""Short forms that are also everyday words or chat slang: they name a course only in capitals."""

_LOWER_OK = frozenset({"os", "cn", "ai", "ml", "dl", "ds"})
"""Two-letter short forms students type in lower case; any other two-letter alias needs capitals."""


_ACRONYM = re.compile(r"\b(?=[A-Za-z]*[A-Z][A-Za-z]*[A-Z])[A-Z][A-Za-z]{1,5}\b")
_ROMAN = re.compile(r"^[IVX]+$")
_PAREN = re.compile(r"\s*\([^)]*\)")


# ----------------------------------------------------------------------------------------------
# Courses and their aliases
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Course:
    """One course of a collection and the names it answers to.

    ``key`` is the chunk ``subject`` exactly ("21CS44 Operating Systems"): what chunks carry, so a
    mention maps to chunks without any other lookup. ``aliases`` are canonical lower-case phrases;
    matching also accepts the spelling variants described in the module docstring.
    """

    key: str
    code: str
    title: str
    aliases: frozenset[str]

    @property
    def scheme(self) -> int | None:
        return scheme_year(self.code)


def _title_words(title: str) -> list[str]:
    return re.findall(r"[a-z0-9+#]+", title.lower().replace("&", " and "))


def aliases_for(code: str, title: str) -> frozenset[str]:
    """Every alias of a course, canonical lower-case phrases (see the module docstring)."""
    out = {code.lower()}
    if any(c.islower() for c in title):  # in an ALL-CAPS title every short word looks like an acronym
        out.update(a.lower() for a in _ACRONYM.findall(title) if not _ROMAN.match(a))
    plain = " ".join(_title_words(_PAREN.sub(" ", title)))
    if plain:
        out.add(plain)
        content = [w for w in plain.split() if w not in _STOPWORDS]
        if len(content) >= 2 and all(w[0].isalpha() for w in content):
            out.add("".join(w[0] for w in content))
        out |= family_aliases(code, plain)  # a family's well-known short forms ("ADA", "DBMS")
    return frozenset(a for a in out if len(a) >= 2 and a not in _NEVER)


def _upper_only(alias: str) -> bool:
    """Whether an alias names its course only when typed in capitals."""
    if " " in alias or any(c.isdigit() for c in alias):
        return False
    return alias in _UPPER_ONLY or (len(alias) == 2 and alias not in _LOWER_OK)


def _word_pattern(word: str) -> str:
    """One title word, singular or plural ("system" ~ "systems", "technology" ~ "technologies")."""
    if word == "and":
        return r"(?:and|&)"
    w = re.escape(word)
    if len(word) <= 3 or not word.isalpha() or word in _STOPWORDS:
        return w
    w = re.sub(r"i[sz]ation", "i[sz]ation", w)
    if word.endswith(("ss", "sh", "ch", "x", "z")):
        return f"{w}(?:es)?"
    if word.endswith(("is", "us")):
        return w
    if word.endswith("ies"):
        return f"{w[:-3]}(?:y|ies)"
    if word.endswith("y") and word[-2] not in "aeiou":
        return f"{w[:-1]}(?:y|ies)"
    if word.endswith("s"):
        return f"{w[:-1]}s?"
    return f"{w}s?"


def _alias_pattern(alias: str, code: str) -> str:
    """The regex for one alias: a code tolerates spaces and hyphens between its letter and digit runs."""
    if alias == code.lower():
        return r"[\s-]?".join(re.escape(run) for run in re.findall(r"[a-z]+|\d+", alias))
    if _upper_only(alias):
        return re.escape(alias.upper())
    return r"(?:\s*-\s*|\s+)".join(_word_pattern(w) for w in alias.split())


# ----------------------------------------------------------------------------------------------
# Scheme qualifiers next to a name
# ----------------------------------------------------------------------------------------------

_QUALIFIER = r"(?P<q>new|newer|newest|latest|current|recent|old|older|oldest|previous|earlier|prior)"
_FILLER = r"(?:(?:vtu|scheme|syllabus|version|one|course)\s+)*"
_BEFORE = re.compile(rf"\b{_QUALIFIER}\s+{_FILLER}$", re.IGNORECASE)
_AFTER = re.compile(
    rf"^\s*[(\[,-]?\s*(?:(?:of|in|from)\s+)?(?:the\s+)?{_QUALIFIER}\s+(?:scheme|syllabus|version)\b", re.I
)
_YEAR = re.compile(r"\b(?:20)?(1[5-9]|2\d)\s*-?\s*scheme\b|\bscheme\s*(?:of\s+)?(?:20)?(1[5-9]|2\d)\b", re.I)
_NEWER = frozenset("new newer newest latest current recent".split())


def _shouting(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return len(letters) >= 8 and sum(c.isupper() for c in letters) >= 0.8 * len(letters)


# ----------------------------------------------------------------------------------------------
# The catalog
# ----------------------------------------------------------------------------------------------


class CourseCatalog:
    """The courses of one collection, with one compiled pattern for all their aliases."""

    def __init__(self, courses: Sequence[Course], rows: np.ndarray | None = None) -> None:
        self.courses: tuple[Course, ...] = tuple(courses)
        self._by_key = {c.key: i for i, c in enumerate(self.courses)}
        self._rows = rows  # per chunk of from_chunks(): index of its course, -1 for none
        # Aliases with one pattern ("database management system(s)") are one name for all their courses.
        owners: dict[tuple[str, bool], list[int]] = {}
        for i, course in enumerate(self.courses):
            for alias in course.aliases:
                pattern = _alias_pattern(alias, course.code)
                upper = _upper_only(alias) and alias != course.code.lower()
                if i not in owners.setdefault((pattern, upper), []):
                    owners[(pattern, upper)].append(i)
        self._groups: list[tuple[tuple[int, ...], bool]] = []
        alternatives: list[str] = []
        # Longest first: "real time operating systems" wins over "operating systems" at one position.
        for pattern, upper in sorted(owners, key=lambda k: (-len(k[0]), k[0], k[1])):
            name = f"g{len(self._groups)}"
            self._groups.append((tuple(owners[(pattern, upper)]), upper))
            alternatives.append(f"(?P<{name}>{pattern})" if upper else f"(?P<{name}>(?i:{pattern}))")
        self._pattern = (
            re.compile(r"(?<!\w)(?:" + "|".join(alternatives) + r")(?!\w)") if alternatives else None
        )

    @classmethod
    def from_chunks(cls, chunks: Sequence[Chunk]) -> CourseCatalog:
        """One course per distinct chunk subject that starts with a course code.

        A subject that is a code alone ("21CS52": another course's tail whose own file is not
        indexed) is a course of its own key but answers to the names of the titled course with the
        same code when there is one, so "CN" reaches both.
        """
        order: dict[str, int] = {}
        for c in chunks:
            if c.subject is not None and c.subject not in order:
                order[c.subject] = len(order)
        found: list[tuple[str, str, str]] = []
        for subject in order:
            code, title = split_subject(subject)
            if code:
                found.append((subject, code, title))
        titled: dict[str, set[str]] = {}
        for _, code, title in found:
            if title:
                titled.setdefault(code, set()).update(aliases_for(code, title))
        courses = [
            Course(
                key,
                code,
                title,
                aliases_for(code, title) if title else frozenset(titled.get(code, {code.lower()})),
            )
            for key, code, title in found
        ]
        index = {c.key: i for i, c in enumerate(courses)}
        rows = np.fromiter(
            (index.get(c.subject or "", -1) for c in chunks), dtype=np.int32, count=len(chunks)
        )
        return cls(courses, rows)

    def __len__(self) -> int:
        return len(self.courses)

    def __iter__(self) -> Iterator[Course]:
        return iter(self.courses)

    def get(self, key: str) -> Course | None:
        i = self._by_key.get(key)
        return None if i is None else self.courses[i]

    def mentioned(self, question: str) -> tuple[str, ...]:
        """Keys of the courses the question names, in the order they are first named (empty: none)."""
        if self._pattern is None:
            return ()
        shouting = _shouting(question)
        hits: list[tuple[int, int, tuple[int, ...]]] = []
        for m in self._pattern.finditer(question):
            owners, upper = self._groups[int((m.lastgroup or "g0")[1:])]
            if upper and shouting:
                continue
            hits.append((m.start(), m.end(), owners))
        if not hits:
            return ()
        # A name only one course has ("BCS403", "21CS53") settles a shared one ("DBMS") it overlaps.
        specific = {i for _, _, owners in hits if len(self._codes(owners)) == 1 for i in owners}
        year = self._asked_year(question)
        result: list[int] = []
        for start, end, owners in hits:
            chosen = owners
            if len(self._codes(owners)) > 1:
                chosen = tuple(i for i in owners if i in specific) or self._narrow(
                    owners, question[:start], question[end:], year
                )
            result.extend(i for i in chosen if i not in result)
        return tuple(self.courses[i].key for i in result)

    def without_mentions(self, question: str) -> str:
        """The question with its course names and scheme years blanked out: what it asks *about*.

        Why: once search is restricted to the named course, "OS" in "how many credits is OS" is no
        longer evidence; left in, it makes "CLO 1. Demonstrate the need for OS" the best sentence.
        """
        text = _YEAR.sub(" ", question)
        if self._pattern is not None:
            text = self._pattern.sub(" ", text)
        return " ".join(text.split())

    def _codes(self, owners: Iterable[int]) -> set[str]:
        return {self.courses[i].code for i in owners}

    @staticmethod
    def _asked_year(question: str) -> int | None:
        m = _YEAR.search(question)
        return 2000 + int(m.group(1) or m.group(2)) if m else None

    def _narrow(self, owners: tuple[int, ...], before: str, after: str, year: int | None) -> tuple[int, ...]:
        """Courses sharing a name, narrowed by scheme when the question says which; else all of them."""
        schemes = {i: self.courses[i].scheme for i in owners}
        known = {s for s in schemes.values() if s is not None}
        if year is not None:
            exact = tuple(i for i in owners if schemes[i] == year)
            if exact:
                return exact
        qualifier = _BEFORE.search(before) or _AFTER.search(after)
        if qualifier is None or len(known) < 2:
            return owners
        wanted = max(known) if qualifier.group("q").lower() in _NEWER else min(known)
        return tuple(i for i in owners if schemes[i] == wanted)

    def mask(self, keys: Iterable[str]) -> np.ndarray:
        """:func:`course_mask` for the chunks this catalog was built from, without touching them.

        Why: a search runs per question over every chunk; comparing one precomputed int32 array is
        ~100× faster than reading each chunk's subject in Python.
        """
        if self._rows is None:
            raise ValueError("this catalog was not built with from_chunks()")
        wanted = [self._by_key[k] for k in keys if k in self._by_key]
        return np.isin(self._rows, np.asarray(wanted, dtype=np.int32))


def course_mask(chunks: Sequence[Chunk], keys: Iterable[str]) -> np.ndarray:
    """True for the chunks whose subject is one of ``keys`` (a bool array aligned with ``chunks``).

    Why a mask rather than row indices: search scores every row of the index matrix at once, and a
    mask combines with its other per-row masks (superseded versions) in one vectorised operation.
    """
    wanted = frozenset(keys)
    return np.fromiter((c.subject in wanted for c in chunks), dtype=bool, count=len(chunks))
