"""Questions as students type them, reduced to what they ask.

Why this exists: retrieval and the "Not in your materials" decision both weigh the question's words.
"hi, quick question please: which module covers paging? thanks a lot!!" has eleven words of which
three matter; the eight others dilute the keyword score and the decision's word coverage until a
correct answer flips to "Not in your materials". A pasted mention (``<@123456789>``) or emoji does
the same. :func:`clean_question` removes that noise and nothing else: content words, code-like
tokens, numbers and letters of every script (Bangla) are kept.

References are normalised to the labels the chunker writes (``worker/ingest/chunking.py::module_label``)
so "mod 2", "M2", "module II" all match chunks labelled "Module 2", and "unit-2" matches "Unit II";
"co 3", "CO-3", "c.o. 3" become "CO3" as course-outcome tables write it. :func:`references` exposes
the outcomes and modules asked about for callers that filter or boost by them.

Pure: no I/O; all patterns compiled once at import.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["QuestionRefs", "clean_question", "normalise_references", "references"]


@dataclass(frozen=True)
class QuestionRefs:
    """Course outcomes and syllabus parts a question names.

    ``cos``: course-outcome numbers, sorted, without repeats ("CO3 and CO4" → ``(3, 4)``).
    ``modules``: normalised labels in order of first mention ("Module 2", "Unit II", "Chapter 3").
    """

    cos: tuple[int, ...] = ()
    modules: tuple[str, ...] = ()


# ----------------------------------------------------------------------------------------------
# Platform markup
# ----------------------------------------------------------------------------------------------

_SLACK_LINK = re.compile(r"<((?:https?|mailto):[^|>\s]+)(?:\|([^>]*))?>")
_MARKUP = re.compile(
    r"<a?:\w{1,64}:\d+>"  # Discord custom emoji
    r"|<@[!&]?\d+>"  # Discord user, nickname and role mentions
    r"|<#\d+>"  # Discord channel
    r"|<@[UWB][A-Z0-9]{2,}(?:\|[^>]*)?>"  # Slack user
    r"|<#C[A-Z0-9]{2,}(?:\|[^>]*)?>"  # Slack channel
    r"|<!(?:channel|here|everyone|subteam\^[A-Z0-9]+)(?:\|[^>]*)?>"  # Slack broadcasts
    r"|(?<![\w@])@(?:everyone|here|channel)\b"
)
_LEADING_HANDLE = re.compile(r"^(?:\s*@[\w.\-]{2,32}[,:]?)+\s+")  # "@Syllabot which module ..."
_SHORTCODE = re.compile(r"(?<![^\s(])(?::[a-z0-9_+\-]{2,40}:)+(?=[\s?!.,)]|$)")  # :pray: :+1::skin-tone-2:
_EMOTICON = re.compile(r"(?<!\S)(?:[:;=][-']?[()DPpO3/\\|\]\[]|<3|[xX]D|\^_?\^|T_T)(?!\S)")
_TEXT_MARKUP = re.compile(r"(\*\*|~~)(?=\S)(.+?)(?<=\S)\1")  # bold, strike ("2**3" and "a || b" stay)
_CODE_TICKS = re.compile(r"`+")
_QUOTE_PREFIX = re.compile(r"^\s*>+\s*")

# ----------------------------------------------------------------------------------------------
# Emoji: pictographs and their joiners, never letters of any script
# ----------------------------------------------------------------------------------------------

_EMOJI_CLASS = (
    "\U0001f000-\U0001faff"  # emoticons, pictographs, transport, flags, supplemental symbols
    "\u2600-\u2775\u2794-\u27bf"  # misc symbols and dingbats (not the dingbat digits ❶…➓)
    "\u231a\u231b\u2328\u23cf\u23e9-\u23f3\u23f8-\u23fa"  # watch, hourglass, media buttons
    "\u2b05-\u2b07\u2b1b\u2b1c\u2b50\u2b55\u203c\u2049\u3030\u303d\u3297\u3299"
)
_EMOJI = re.compile(
    rf"(?:[{_EMOJI_CLASS}]|[0-9#*]\ufe0f?\u20e3)"
    rf"(?:[\ufe0e\ufe0f\U000e0020-\U000e007f]|\u200d[{_EMOJI_CLASS}])*"
)
_STRAY_SELECTOR = re.compile("[\ufe0e\ufe0f]")
_EMOJI_QUESTION = re.compile("[\u2753\u2754\u2049]")  # ❓ ❔ ⁉ ask, so they become "?"

# ----------------------------------------------------------------------------------------------
# Punctuation and whitespace
# ----------------------------------------------------------------------------------------------

_QUESTION_RUN = re.compile(r"[?!？！]*[?？][?!？！]*")
_BANG_RUN = re.compile(r"[!！]{2,}")
_ELLIPSIS = re.compile(r"(?<!\d)\.{2,}|\.{2,}(?!\d)|…")
_COMMA_RUN = re.compile(r",{2,}")
_TRAILING_BANG = re.compile(r"(?<=[^\W\d_]{2})[!！]+$")  # "paging!" but not "n!" or "5!" (factorial)
_SPACE = re.compile(r"\s+")
_SPACE_BEFORE_COMMA = re.compile(r"\s+,")
_EDGE_PUNCT_LEAD = re.compile(r"^(?:[\s,!:;~–—]|[.\-](?![^\W_]))+")  # ".NET", "-1" keep their mark
_EDGE_PUNCT_TRAIL = re.compile(r"[\s,:;~\-–—]+$")
_HAS_CONTENT = re.compile(r"[^\W_]")

# ----------------------------------------------------------------------------------------------
# Chat words (whole tokens only)
# ----------------------------------------------------------------------------------------------

_SLANG: dict[str, str] = {
    "wat": "what",
    "wht": "what",
    "wut": "what",
    "whut": "what",
    "wats": "what is",
    "whats": "what is",
    "wat's": "what's",
    "wich": "which",
    "whch": "which",
    "wen": "when",
    "abt": "about",
    "hrs": "hours",
    "algo": "algorithm",
    "algos": "algorithms",
    "sem": "semester",
    "thru": "through",
    "coz": "because",
    "cuz": "because",
    "bcoz": "because",
    "ur": "your",
    "qp": "question paper",
    "ref": "reference",
    "refs": "references",
    "txtbook": "textbook",
    "txtbooks": "textbooks",
    # Chat words of any class, not of one course: what students type in a class chat
    # mapped to what syllabi and slides print.
    "hw": "homework",
    "hws": "homeworks",
    "hwk": "homework",
    "hmwk": "homework",
    "pset": "problem set",
    "psets": "problem sets",
    "assgn": "assignment",
    "assgns": "assignments",
    "prof": "instructor",
    "profs": "instructors",
    "prof's": "instructor's",
    "professor's": "instructor's",
    "ta": "TA",
    "tas": "TAs",
    "ya": "you",
    "w/o": "without",
    "w/": "with",
    "b4": "before",
    "ppl": "people",
    "bc": "because",
    "b/c": "because",
    "smth": "something",
    "sth": "something",
    "bout": "about",
    "tho": "though",
    "rly": "really",
    "rlly": "really",
    "sry": "sorry",
    "rn": "right now",
    "tmrw": "tomorrow",
    "tmr": "tomorrow",
    "hr": "hour",
    "mins": "minutes",
    "min": "minutes",
    "wk": "week",
    "wks": "weeks",
    "yr": "year",
    "lec": "lecture",
    "lecs": "lectures",
    "mid": "midterm",
    "mids": "midterms",
    "midsem": "midterm",
    "appt": "appointment",
    "appts": "appointments",
    "info": "information",
    "reqs": "requirements",
    "req": "requirement",
    "prereq": "prerequisite",
    "prereqs": "prerequisites",
    "pts": "points",
    "proj": "project",
    "pres": "presentation",
    "prez": "presentation",
    "diff": "difference",
    "wanna": "want to",
    "gonna": "going to",
    "gotta": "have to",
    "dont": "don't",
    "cant": "can't",
    "doesnt": "doesn't",
    "isnt": "isn't",
    "im": "I'm",
    "ive": "I've",
    "whens": "when is",
    "wheres": "where is",
    "hows": "how is",
    "whos": "who is",
    "waht": "what",
    "whta": "what",
    "til": "until",
    "till": "until",
    "param": "parameter",
    "params": "parameters",
    "qs": "questions",
    "qns": "questions",
    "qn": "question",
    "ques": "question",
    "whr": "where",
    "wer": "where",
    "shd": "should",
    "shld": "should",
    "hv": "have",
    "l8r": "later",
    "l8": "late",
    "reqd": "required",
    "xtra": "extra",
    "exm": "exam",
    "exms": "exams",
    "quizes": "quizzes",
}
# A lone "r" is "are" between words, but the language R or a variable after these words and before these.
_R_NOT_AFTER = frozenset(
    {"in", "using", "with", "learn", "of", "for", "and", "or", "on", "use", "through", "is", "are", "was",
     "were", "be", "the", "a", "an", "does", "do", "did", "value", "variable", "letter", "called", "named"}
)  # fmt: skip
_R_NOT_BEFORE = frozenset(
    {"programming", "language", "lang", "studio", "script", "scripts", "code", "lab", "package",
     "packages", "program", "programs", "markdown", "shiny", "and", "or"}
)  # fmt: skip
#: Lone letters of chat read as words between words ("wat r the COs", "days n times", "meet w the
#: instructor"), each with the words after which it is a language or a variable instead ("learn r",
#: "when n is large", "sample size n", "update w"); never before a non-word ("n = 5").
_LONE_NOT_AFTER = _R_NOT_AFTER | {"when", "if", "where", "size", "sample", "let", "than", "update", "vector"}
_LONE_LETTERS: dict[str, tuple[str, frozenset[str]]] = {
    "r": ("are", _R_NOT_AFTER),
    "n": ("and", _LONE_NOT_AFTER),
    "w": ("with", _LONE_NOT_AFTER),
}
_KIND_AFTER = frozenset({"what", "which", "this", "that", "a", "the", "any", "some", "same", "each"})
_MID_SLANG_AFTER = frozenset(
    {"is", "was", "so", "kinda", "pretty", "lowkey", "really", "very", "bit", "lowk"}
)
# Units' short forms spelt out after a hyphen too ("do we use the x-hrs").
_HYPHEN_UNITS = frozenset({"hrs", "hr", "mins", "wks", "wk", "pts", "yr", "sem"})
# "min"/"max" before these words is a limit ("min marks to pass", "max credits"), elsewhere "min" is
# minutes ("10 min late").
_LIMITED = frozenset(
    {"marks", "mark", "pass", "passing", "score", "scores", "attendance", "percent", "percentage", "grade",
     "grades", "gpa", "credits", "credit", "requirement", "requirements", "number", "points", "%"}
)  # fmt: skip
# "mod" is "module" after these words ("which mod?", "each mod"), never in "a mod b".
_MOD_AFTER = frozenset(
    {"which", "what", "wich", "each", "every", "the", "this", "that", "same", "last", "first", "next", "per"}
)
_TOKEN_EDGE = re.compile(r"^([(\[\"'“‘]*)(.*?)([)\]\"'”’,.?!:;]*)$")
_WORDLIKE = re.compile(r"[A-Za-z][A-Za-z0-9'’\-]*")
_ANYWHERE_POLITE = re.compile(r"(?<![\w'])(?:pl[sz]+|plea+s+e*|kindly)(?![\w'])[,!]?", re.I)

# ----------------------------------------------------------------------------------------------
# Greetings, thanks and filler at either end
# ----------------------------------------------------------------------------------------------

# Filler is only ever removed at the start or the end, and must be followed (start) or preceded
# (end) by a separator, so "history", "hill", "typhoon", "sir epidemic model" keep their words.
_ADDRESS = r"(?:guys|gyus|all|everyone|everybody|folks|people|bro+|bros|bruh+|bhai|dude|sir|ma['’]?am|madam|mam|there|team|y['’]?all)"
_THANKS = r"(?:thank\s+(?:you|u)|thanks*|thx|thnx|tnx|tysm|ty)(?:\s+(?:a\s+lot|so\s+much|very\s+much|in\s+advance|again|all|everyone|guys|bro|sir|ma['’]?am))*"
_LEAD_FILLER = "|".join(
    [
        rf"(?:h+i+|he+y+|hell+o+|hola|yo+|wa+s+up|namaste|namaskar|greetings|good\s+(?:morning|afternoon|evening|day))(?:\s+{_ADDRESS})?",
        # address alone; "all"/"everyone" only after a greeting ("everyone has to attend?" is content)
        r"bro+|bros|bruh+|bhai|dude|sir|ma['’]?am|madam|mam|guys|folks",
        r"(?:a\s+)?(?:quick|small|silly|simple|dumb|random|one)\s+(?:question|q|qn|doubt|query)(?:\s+but)?",
        r"(?:question|doubt|query|qn|q)(?=\s*(?::|[-–—]\s))",  # "Q: ..." but not "Q-learning"
        r"(?:can|could|would|will)\s+(?:some|any)(?:one|body)\s+(?:please\s+)?(?:tell|say)(?:\s+(?:me|us))?",
        r"(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+)?(?:tell|say)\s+(?:me|us)",
        r"(?:does|do)\s+(?:any|some)(?:one|body)\s+know|(?:any|some)(?:one|body)\s+knows?|do\s+(?:you|u)\s+know",
        r"(?:i\s+)?(?:just\s+)?want(?:ed)?\s+to\s+(?:ask|know)(?:\s+that)?",
        r"(?:i\s+)?(?:have|had|got)\s+a\s+(?:quick\s+|small\s+)?(?:question|doubt|query)",
        r"sorry(?:\s+to\s+(?:bother|disturb)(?:\s+(?:you|u|everyone|all|guys))?|\s+for\s+(?:the\s+)?(?:bother|disturbance))?",
        r"excuse\s+me|lol|lmao|haha+|ok(?:ay|k+)?(?:\s+so)?|um+|uh+|hmm+",
        rf"{_THANKS}|tia",  # "thanks in advance!! what all components ..."
    ]
)
_TRAIL_FILLER = "|".join(
    [
        _THANKS,
        r"tia|cheers|asap|anyone|any(?:one|body)\s+knows?",
        r"bro+|bros|bruh+|bhai|dude|sir|ma['’]?am|madam|mam|guys|folks|lol|lmao|haha+",
        r"or\s+nah|or\s+no|or\s+not|fr|ngl|tbh|pls\s+say\s+yes|i\s+keep\s+forgetting",
        "ধন্যবাদ",
    ]
)
# Runs of filler go in one match ("hi hi hi", "thanks thanks"), so peeling is not quadratic.
_LEAD = re.compile(rf"^(?:(?:{_LEAD_FILLER})(?:[\s,.!:;~\-–—]+|$))+", re.I)
_TRAIL = re.compile(rf"(?:(?:^|[\s,.!?:;~\-–—]+)(?:{_TRAIL_FILLER}))+[\s,.!?~]*$", re.I)

# ----------------------------------------------------------------------------------------------
# References: CO/PO/CLO, modules, units, chapters
# ----------------------------------------------------------------------------------------------

_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10}
_ROMAN = r"(?:xii|xi|x|ix|viii|vii|vi|v|iv|iii|ii|i)"
_ARABIC = r"[1-9]\d?"
# A lone "I"/"i" after "module"/"unit" is often the pronoun: "which unit i should study".
_PRONOUN_FOLLOWERS = frozenset(
    {"should", "need", "must", "have", "had", "am", "was", "will", "would", "can", "could", "think",
     "want", "study", "read", "prepare", "do", "did", "missed", "skip", "know", "got", "get", "see"}
)  # fmt: skip
_CONJ = r"\s*(?:,|&|/|\band\b|\bor\b)\s*"
# A later number followed by a quantity is not a reference: "module 2, 10 marks", "CO3 and 4 hours".
_NOT_QUANTITY = r"(?!\s+(?:marks?|hours?|hrs?|credits?|questions?|qns?|pages?|days?|weeks?|years?|times|mins?|minutes?|sem\w*|%))"
# Later numbers: no lone "i" ("module 2 and i think ...").
_LATER_ROMAN = r"(?:xii|xi|x|ix|viii|vii|vi|v|iv|iii|ii)"
_RANGE = r"\s*(?:-|–|—|\bto\b)\s*"


def _ref_pattern(keyword: str, roman: bool, prefix: str, flags: re.RegexFlag = re.I) -> re.Pattern[str]:
    """``keyword`` + first number, then further numbers joined by "," "and" "or" "&" or a range.

    ``prefix`` may repeat the keyword before later numbers ("CO1 to CO3", "module 2 and module 3").
    """
    end = r"(?![\w'’])(?!\.\w)"
    # Later numbers are written like the first ("Unit I and II", "module 2 and 3"): a roman letter
    # after an arabic number is a word ("module 2, x is ..."), so the conditional picks the kind.
    first_num = rf"(?:(?P<arabic>{_ARABIC})|{_ROMAN}){end}" if roman else rf"(?P<arabic>{_ARABIC}){end}"
    later_num = rf"(?(arabic){_ARABIC}|{_LATER_ROMAN}){end}{_NOT_QUANTITY}"
    first = rf"(?P<kw>{keyword})\s*(?:no\.?\s*|number\s+|#\s*)?[-–—.:]?\s*(?P<first>{first_num})"
    rest = rf"(?P<rest>(?:(?:{_RANGE}|{_CONJ})(?:(?i:{prefix})\s*[-–—.]?\s*)?{later_num})*)"
    return re.compile(rf"(?<![\w.\-]){first}{rest}", flags)


# Outcome families, each with its canonical spelling; plural forms are case-sensitive so that
# "cos 30" (cosine) is not read as outcomes.
_OUTCOME_RES: tuple[tuple[re.Pattern[str], str], ...] = (
    (_ref_pattern(r"c\.o\.?|co", False, r"c\.o\.?|cos?"), "CO"),
    (_ref_pattern(r"pso", False, r"psos?"), "PSO"),
    (_ref_pattern(r"po", False, r"pos?"), "PO"),
    (_ref_pattern(r"clo", False, r"clos?"), "CLO"),
    (_ref_pattern(r"COs|CO['’]s", False, r"cos?", re.NOFLAG), "CO"),
    (_ref_pattern(r"POs|PO['’]s", False, r"pos?", re.NOFLAG), "PO"),
    (_ref_pattern(r"CLOs|CLO['’]s", False, r"clos?", re.NOFLAG), "CLO"),
)
_MODULE_RE = _ref_pattern(r"modules?|mods?", True, r"modules?|mods?|m")
_M_SHORT_RE = re.compile(r"(?<![\w.\-])(?<!\d\s)[mM](?P<n>[1-9])(?![\w'’])(?!\.\d)")
_UNIT_RE = _ref_pattern(r"units?", True, r"units?")
_CHAPTER_RE = _ref_pattern(r"chapters?|chap|ch", True, r"chapters?|chap|ch\.?")
# Numbers inside the continuation; digits may follow a repeated keyword ("CO3"), numerals may not
# sit inside a word ("units").
_NUM_IN_REST = re.compile(rf"(?<!\d)({_ARABIC})(?!\d)|(?<![A-Za-z])({_ROMAN})(?![A-Za-z])", re.I)

_ORDINALS = {
    "1st": 1, "first": 1, "2nd": 2, "second": 2, "3rd": 3, "third": 3,
    "4th": 4, "fourth": 4, "5th": 5, "fifth": 5,
}  # fmt: skip
_CARDINALS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_ORDINAL_RE = re.compile(
    rf"(?<![\w\-])(?P<ord>{'|'.join(_ORDINALS)})\s+(?P<kw>module|mod|unit|chapter|ch)(?![\w'’])(?!\s*[-–—.:]?\s*\d)",
    re.I,
)
_CARDINAL_RE = re.compile(
    rf"(?<![\w\-])(?P<kw>module|unit|chapter)\s+(?P<num>{'|'.join(_CARDINALS)})(?![\w'’])", re.I
)

_LABEL_RE = re.compile(r"\b(?:Module [1-9]\d?|Unit (?:[IVXL]+|[1-9]\d?)|Chapter (?:[IVXL]+|[1-9]\d?))\b")
_CO_LABEL_RE = re.compile(r"(?<![\w.])CO([1-9]\d?)(?![\d\w])")
_CO_SPAN_RE = re.compile(rf"(?<![\w.])CO([1-9]\d?)(?:{_RANGE})CO([1-9]\d?)(?![\d\w])")


def _roman_to_int(numeral: str) -> int:
    values = [_ROMAN_VALUES[c] for c in numeral.lower()]
    return sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))


def _int_to_roman(n: int) -> str:
    out = []
    for value, sym in ((40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while n >= value:
            out.append(sym)
            n -= value
    return "".join(out)


def _numbers(m: re.Match[str]) -> tuple[list[str], str] | None:
    """The numbers of a reference match as written, ranges expanded; and the joining word.

    ``None`` when a range is implausible ("CO1-2020") so the text is left alone.
    """
    nums = [m.group("first")]
    rest = m.group("rest") or ""
    conj = "or" if re.search(r"\bor\b", rest, re.I) else "and"
    pos = 0
    for nm in _NUM_IN_REST.finditer(rest):
        between = rest[pos : nm.start()]
        pos = nm.end()
        number = nm.group(1) or nm.group(2)
        if re.search(r"[-–—]|\bto\b", between, re.I) and not re.search(
            r",|&|/|\band\b|\bor\b", between, re.I
        ):
            lo, hi = _value(nums[-1]), _value(number)
            if not lo < hi <= lo + 9:
                return None
            roman = not nums[-1].isdigit()
            nums.extend(_int_to_roman(v) if roman else str(v) for v in range(lo + 1, hi + 1))
        else:
            nums.append(number)
    return nums, conj


def _value(number: str) -> int:
    return int(number) if number.isdigit() else _roman_to_int(number)


def _join(labels: list[str], conj: str) -> str:
    unique = list(dict.fromkeys(labels))
    if len(unique) == 1:
        return unique[0]
    return f"{', '.join(unique[:-1])} {conj} {unique[-1]}"


def _lone_pronoun(m: re.Match[str], number: str) -> bool:
    """ "unit i should ..." / "module I need ...": the pronoun, not the numeral."""
    if number.lower() != "i":
        return False
    after = m.string[m.end() :]
    nxt = re.match(r"\s+([A-Za-z]+)|['’]", after)
    return nxt is not None and (nxt.group(1) is None or nxt.group(1).lower() in _PRONOUN_FOLLOWERS)


def _modulo(m: re.Match[str]) -> bool:
    """ "5 mod 2", "x mod 3", "(a+b) mod 7": arithmetic, not a module."""
    if not m.group("kw").lower().startswith("mod") or m.group("kw").lower().startswith("module"):
        return False
    before = m.string[: m.start()].rstrip()
    prev = re.search(r"(\S+)$", before)
    return prev is not None and (
        prev.group(1)[-1].isdigit() or prev.group(1)[-1] in ")]}" or len(prev.group(1)) == 1
    )


def _reference_sub(kind: str) -> Callable[[re.Match[str]], str]:
    """The replacement for one reference pattern; ``kind`` is "Module", "Unit", "Chapter" or an
    outcome family ("CO", "PO", "PSO", "CLO")."""

    def sub(m: re.Match[str]) -> str:
        if kind in ("Module", "Unit", "Chapter") and (
            _modulo(m) or (_lone_pronoun(m, m.group("first")) and not m.group("rest"))
        ):
            return m.group(0)
        parsed = _numbers(m)
        if parsed is None:
            return m.group(0)
        nums, conj = parsed
        if kind not in ("Module", "Unit", "Chapter"):
            return _join([f"{kind}{int(n)}" for n in nums], conj)
        if kind == "Module":
            return _join([f"Module {_value(n)}" for n in nums], conj)
        if kind == "Unit":
            return _join([f"Unit {_int_to_roman(v) if (v := _value(n)) <= 39 else v}" for n in nums], conj)
        return _join([f"Chapter {n.upper() if not n.isdigit() else int(n)}" for n in nums], conj)

    return sub


_OUTCOME_SUBS = tuple((pattern, _reference_sub(kind)) for pattern, kind in _OUTCOME_RES)
_MODULE_SUB = _reference_sub("Module")
_UNIT_SUB = _reference_sub("Unit")
_CHAPTER_SUB = _reference_sub("Chapter")
_CO_TRAILING_DOT = re.compile(r"(?<![\w.])((?:CO|PO|PSO|CLO)[1-9]\d?)\.(?=\s|$)")


def _ordinal_sub(m: re.Match[str]) -> str:
    return _label(m.group("kw"), _ORDINALS[m.group("ord").lower()])


def _cardinal_sub(m: re.Match[str]) -> str:
    return _label(m.group("kw"), _CARDINALS[m.group("num").lower()])


def _label(keyword: str, n: int) -> str:
    kw = keyword.lower()
    if kw.startswith("mod"):
        return f"Module {n}"
    if kw == "unit":
        return f"Unit {_int_to_roman(n)}"
    return f"Chapter {n}"


def normalise_references(text: str) -> str:
    """Rewrite outcome and syllabus references to the labels the indexed chunks carry.

    "CO 3", "co-3", "c.o. 3", "CO3." → "CO3" (also PO, PSO, CLO); "co 1-3" → "CO1, CO2 and CO3";
    "mod 2", "module-II", "M2", "1st module" → "Module 2"/"Module 1"; "unit 2", "Unit – ii",
    "second unit" → "Unit II" (units keep roman numerals, as syllabi print them); "ch 3" →
    "Chapter 3". "5 mod 2", "M2M", "unit i should ..." are left alone.
    """
    for pattern, sub in _OUTCOME_SUBS:
        text = pattern.sub(sub, text)
    text = _CO_TRAILING_DOT.sub(r"\1", text)
    text = _ORDINAL_RE.sub(_ordinal_sub, text)
    text = _CARDINAL_RE.sub(_cardinal_sub, text)
    text = _MODULE_RE.sub(_MODULE_SUB, text)
    text = _M_SHORT_RE.sub(lambda m: f"Module {m.group('n')}", text)
    text = _UNIT_RE.sub(_UNIT_SUB, text)
    return _CHAPTER_RE.sub(_CHAPTER_SUB, text)


def references(text: str) -> QuestionRefs:
    """The course outcomes and modules/units/chapters ``text`` asks about (after normalisation)."""
    norm = normalise_references(text)
    cos: set[int] = {int(n) for n in _CO_LABEL_RE.findall(norm)}
    for lo, hi in _CO_SPAN_RE.findall(norm):  # "CO1 to CO3" written out by the student
        if int(lo) < int(hi) <= int(lo) + 9:
            cos.update(range(int(lo), int(hi) + 1))
    modules = tuple(dict.fromkeys(_LABEL_RE.findall(norm)))
    return QuestionRefs(cos=tuple(sorted(cos)), modules=modules)


# ----------------------------------------------------------------------------------------------
# clean_question
# ----------------------------------------------------------------------------------------------


def _strip_markup(text: str) -> str:
    text = _SLACK_LINK.sub(lambda m: m.group(2) or m.group(1), text)
    text = _MARKUP.sub(" ", text)
    text = _LEADING_HANDLE.sub("", text)
    text = _SHORTCODE.sub(" ", text)
    text = _EMOJI_QUESTION.sub("?", text)
    text = _EMOJI.sub(" ", text)
    text = _STRAY_SELECTOR.sub("", text)
    text = _EMOTICON.sub(" ", text)
    text = _TEXT_MARKUP.sub(r"\2", text)
    text = _CODE_TICKS.sub("", text)
    return _QUOTE_PREFIX.sub("", text)


def _tidy_punctuation(text: str) -> str:
    text = _ELLIPSIS.sub(" ", text)
    text = _QUESTION_RUN.sub("?", text)
    text = _BANG_RUN.sub(" ", text)
    text = _COMMA_RUN.sub(",", text)
    text = _SPACE.sub(" ", text).strip()
    text = _SPACE_BEFORE_COMMA.sub(",", text)
    return text[:-2] + "?" if text.endswith(" ?") else text


#: A numbered homework as students type it ("hw1", "hw 3" is two tokens and already "homework 3").
_NUMBERED_HW = re.compile(r"hw(\d{1,2})")


def _expand_slang(text: str) -> str:
    """Whole-token chat words → words the materials use ("wat r the COs" → "what are the COs")."""
    tokens = text.split(" ")
    has_v = "v" in tokens
    out: list[str] = []
    for i, token in enumerate(tokens):
        m = _TOKEN_EDGE.match(token)
        assert m is not None  # the pattern matches any string
        lead, core, trail = m.groups()
        low = core.lower()
        if core not in (low, low.capitalize()):
            low = ""  # "SEM", "UR": an acronym, not chat
        prev = tokens[i - 1].lower().strip(",.?!:;") if i > 0 else ""
        nxt = tokens[i + 1].lower().strip(",.?!:;") if i + 1 < len(tokens) else ""
        if low == "mid" and prev in _MID_SLANG_AFTER:
            pass  # "the lecture was kinda mid": mediocre, not a midterm
        elif low in ("min", "max") and nxt in _LIMITED:
            core = "minimum" if low == "min" else "maximum"  # "min marks to pass", "max score"
            trail = trail.removeprefix(".")  # "min. marks": the abbreviation's dot
        elif low in _SLANG:
            repl = _SLANG[low]
            core = repl[0].upper() + repl[1:] if core[:1].isupper() else repl
        elif numbered := _NUMBERED_HW.fullmatch(low):
            core = f"homework {numbered.group(1)}"  # "hw1 due date": homework 1, as the materials print it
        elif "-" in low and low.rsplit("-", 1)[1] in _HYPHEN_UNITS:
            # "x-hrs", "office-hrs", "2-wks": a unit's short form after a hyphen (never the first
            # part: "mid-terms" is no "midterm-terms")
            head, _, unit = core.rpartition("-")
            core = f"{head}-{_SLANG[unit.lower()]}"
        elif low in ("mod", "mods") and prev in _MOD_AFTER:
            core = "module" if low == "mod" else "modules"
        elif (
            core == "r"
            and i == 0
            and nxt in ("we", "you", "u", "they", "there", "the", "these", "those", "all", "any")
        ):
            core = "Are"  # "r we allowed to ..."
        elif (
            core in _LONE_LETTERS
            and prev
            and _WORDLIKE.fullmatch(prev)
            and not trail
            and nxt[:1].isalpha()
            and prev not in _LONE_LETTERS[core][1]
            and nxt not in _R_NOT_BEFORE
        ):
            core = _LONE_LETTERS[core][0]
        elif low in ("kinda", "sorta"):
            # "what kinda test" asks a kind; "it's kinda like" only hedges, and its "kind" would
            # weigh as a word the passages lack
            core = f"{low[:4]} of" if prev in _KIND_AFTER else ""
        elif low == "acc" and nxt == "to":
            core = "according"  # "acc to the slides"
        elif (
            core == "u"
            and prev
            and _WORDLIKE.fullmatch(prev)
            and not has_v
            and (not nxt or nxt[:1].isalpha())
        ):
            core = "you"
        if core or lead or trail:
            out.append(f"{lead}{core}{trail}")
    return " ".join(out)


def _strip_filler(text: str) -> str:
    """Greetings and address at the start, thanks at the end, "pls"/"please" anywhere; repeated
    until nothing changes ("hey guys, quick question: ..."). A "?" inside removed trailing filler
    ("paging? thanks!!") is kept."""
    text = _SPACE.sub(" ", _ANYWHERE_POLITE.sub(" ", text)).strip()
    while True:
        before = text
        text = _EDGE_PUNCT_LEAD.sub("", _LEAD.sub("", text))
        m = _TRAIL.search(text)
        if m:
            kept = text[: m.start()]
            text = kept + "?" if "?" in m.group(0) and not kept.endswith("?") and kept else kept
        text = _EDGE_PUNCT_TRAIL.sub("", text)
        if text == before or not text:
            return text


_THANKED = re.compile(rf"(?<![\w'])(?:{_THANKS}|tia|cheers)(?![\w'])", re.I)
_GREETED = re.compile(
    r"^\W*(?:h+i+|he+y+|hell+o+|hola|yo+|wa+s+up|namaste|namaskar|greetings|good\s+(?:morning|afternoon|evening|day))"
    r"(?![\w'])",
    re.I,
)


@lru_cache(maxsize=1024)
def social_kind(text: str) -> str | None:
    """ "thanks" or "greeting" for a message that says nothing else ("hi", "thanks!", "ty 🙏", "hey
    guys"); None when it asks anything. Why: such a message searched as a question gets "Not in
    your materials" and a random passage, which reads as broken; it gets a short hello instead."""
    bare = _tidy_punctuation(_strip_markup(text))
    if _HAS_CONTENT.search(_strip_filler(_expand_slang(bare))):
        return None
    if _THANKED.search(bare):
        return "thanks"
    return "greeting" if _GREETED.search(bare) else None


@lru_cache(maxsize=1024)
def clean_question(text: str) -> str:
    """The question without platform markup, emoji, greetings, thanks and chat filler.

    Content words, code-like tokens, numbers and every script's letters are kept; references are
    normalised (:func:`normalise_references`); a final "?" is kept. If nothing meaningful would
    remain ("thanks!", "🙏"), the original stripped text is returned, so empty-question handling
    still sees only truly empty input.

    Cached: one ask cleans its question several times (the search, the answer cache's key, the
    question log), at ~0.1 ms each on the worker's hot path; the function is pure.
    """
    original = text.strip()
    cleaned = _tidy_punctuation(_strip_markup(text))
    cleaned = _expand_slang(cleaned)
    cleaned = _strip_filler(cleaned)
    cleaned = normalise_references(cleaned)
    cleaned = _tidy_punctuation(cleaned)
    cleaned = _EDGE_PUNCT_TRAIL.sub("", _EDGE_PUNCT_LEAD.sub("", _TRAILING_BANG.sub("", cleaned)))
    return cleaned if _HAS_CONTENT.search(cleaned) else original
