"""Deciding from retrieval evidence alone whether the materials answer a question: three outcomes.

Why three: a rule forced to say yes or no tells a student "Not in your materials" for what the
syllabus says whenever the evidence is middling, which is as wrong as inventing an answer. Between
"the cited passages answer it" and "not in your materials" lies "these are the closest passages
and they may not answer it" — honest, and still useful. Each outcome has its own band:

* ``answered``: not a fallback, the kind of value asked for is present, and either the cosine is
  high on its own or cosine and word coverage are both good;
* ``not_in_materials``: a fallback (nothing cleared the score threshold), or both the cosine and
  the coverage are low, or the cosine is middling and most of what the question weighs is words
  the whole collection never uses, or the asked-for value is absent *and* the topic is weakly
  covered;
* ``uncertain``: everything in between.

The thresholds are per embedder (cosine scales differ) and calibrated on held-apart tuning data;
see ``docs/ANSWERING.md`` and ``bench/calibrate_answering.py``. Pure functions; no model calls.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from syllabot.shared.schema import AnswerStatus, Hit
from syllabot.worker.indexes.embedders.hashing import DEFAULT_DIM as HASHING_DIM
from syllabot.worker.indexes.embedders.hashing import HashingEmbedder
from syllabot.worker.indexes.embedders.minilm import GRAPHS
from syllabot.worker.text.terms import term_set, terms


def weights(question_terms: Sequence[str], hits: Sequence[Hit]) -> dict[str, float]:
    """Rarer-among-the-retrieved-chunks words weigh more (a smoothed IDF over the hits)."""
    docs = [term_set(hit.text) for hit in hits]
    n = len(docs)
    return {t: math.log(1.0 + (n + 1) / (0.5 + sum(t in d for d in docs))) for t in set(question_terms)}


@dataclass(frozen=True)
class Evidence:
    """What retrieval says about whether the materials answer a question."""

    fallback: bool
    top_score: float
    top_cosine: float
    coverage: float  # weighted share of the question's content words in the best of the top chunks
    n_terms: int
    type_found: bool = True  # a cited-to-be passage holds the kind of value asked for
    #: weighted share of the question's content words that the whole collection never uses
    unknown: float = 0.0


#: The signals a calibrated verdict weighs, in the order of ``Calibration.weights``.
FEATURES = (
    "top_cosine",  # best cosine of the top course's top passages
    "coverage",  # rarity-weighted share of the question's words in the best of them
    "unknown",  # share of those words the whole collection never uses
    "value_missing",  # a value was asked ("when", "how many") and no quotable sentence holds one
    "value_overlap",  # the question's share in the best sentence holding the asked value
    "list_named",  # the best unit is a list headed by what was asked
    "chosen_overlap",  # the question's share in the sentence an answer would quote
    "top_score",  # best hybrid score (cosine and keywords)
    "words",  # how many content words the question has (of 10)
)


@dataclass(frozen=True)
class Calibration:
    """A logistic verdict over :data:`FEATURES`, fitted on the tuning courses of the question
    corpus (``python -m bench.train_decision``): ``answered`` from probability ``answer_at``,
    ``not_in_materials`` under ``refuse_below``, ``uncertain`` between. Why a fit and not bands:
    on real courses the signals separate answerable from unanswerable questions well, but bands
    set by hand against an adversarial benchmark left half of them uncertain."""

    weights: tuple[float, ...]
    bias: float
    answer_at: float
    refuse_below: float

    def probability(self, s: Signals) -> float:
        z = self.bias + sum(w * x for w, x in zip(self.weights, features(s), strict=True))
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


@dataclass(frozen=True)
class Thresholds:
    """The calibrated bands (see the module docstring).

    answered iff ``cosine >= sure_cosine`` and ``coverage >= sure_coverage``, or ``cosine >=
    min_cosine`` and ``coverage >= min_coverage``; not in the materials iff ``cosine < floor_cosine`` or ``coverage <
    floor_coverage``, or ``cosine < min_cosine`` and ``unknown >= max_unknown`` (each with the
    cosine under ``sure_cosine``); uncertain otherwise.
    """

    min_cosine: float
    min_coverage: float
    sure_cosine: float
    floor_cosine: float = 0.0
    floor_coverage: float = 0.0
    #: A value question ("how many", "when") is answered outright by a sentence holding the value
    #: and at least this share of the question's rarity-weighted words.
    value_overlap: float = 0.5
    #: A value question answered by the bands is answered only by a sentence holding the value and
    #: at least this share of the question's rarity-weighted words (else ``uncertain``).
    value_floor: float = 0.25
    #: A list whose lead-in holds at least this share of the question's rarity-weighted words (and a
    #: cosine of at least ``min_cosine``) answers it outright.
    list_lead: float = 0.3
    #: Not in the materials when the collection never uses at least this share of the question's
    #: rarity-weighted words and the cosine is under ``min_cosine``.
    max_unknown: float = 0.6
    #: A cosine at ``sure_cosine`` answers on its own only with at least this share of the
    #: question's rarity-weighted words in the passages: "does biol 210 count toward the bio major
    #: requirements" is close in meaning to the course description (0.69) and holds none of
    #: "count", "major", "requirements".
    sure_coverage: float = 0.15
    #: A fitted verdict over the signals, used instead of the bands and their refinements when set.
    calibration: Calibration | None = None


#: The bands every MiniLM graph shares (the calibration decides; these bound it and refine the
#: sentence reading). python -m bench.answers --tune (SyllabusQA's first 7 syllabi + VTU dev), 2026-11-30
_MINILM_BANDS = Thresholds(
    min_cosine=0.35,
    min_coverage=0.60,
    sure_cosine=0.65,
    floor_cosine=0.20,
    floor_coverage=0.10,
    value_overlap=0.5,
)

#: Calibrated per embedder id (``IndexSnapshot.embedder_id``; cosine scales differ between models,
#: so a collection still served with an earlier model is decided on that model's scale). See
#: docs/ANSWERING.md. Each ``calibration`` is printed by one command; refitting one is pasting its output.
THRESHOLDS: dict[str, Thresholds] = {
    # The course-tuned graph (the default). Fitted to what the student reads on the tuning families
    # (a confident reply holding the asked facts; confident replies lacking them at most 5% of the
    # tuning courses' answerable questions), each tuning course searched with the graph trained
    # without it, answering no more unanswerable tuning questions than the base graph with its verdict:
    #   python -m bench.train_decision --facts --left-out --as-shipped --against minilm-base  (2026-12-06)
    GRAPHS["minilm"].id: dataclasses.replace(
        _MINILM_BANDS,
        calibration=Calibration(
            weights=(-2.8839, -0.1837, 0.0823, -1.3182, 0.3731, 0.7239, 1.5553, 6.5194, 0.0337),
            bias=-2.1125,
            answer_at=0.75,
            refuse_below=0.05,
        ),
    ),
    # The base graph in int8 (minilm-base), and in fp32 (minilm-fp32) with it: fitted for the base
    # weights by python -m bench.train_decision (the six tuning courses, VTU dev, SyllabusQA's first 7), 2026-12-04
    GRAPHS["minilm-base"].id: dataclasses.replace(
        _MINILM_BANDS,
        calibration=Calibration(
            weights=(2.3334, -0.1833, -1.0958, -1.4843, -0.5733, 0.4164, 1.8318, 4.4682, -1.1731),
            bias=-2.72,
            answer_at=0.7,
            refuse_below=0.1,
        ),
    ),
    HashingEmbedder(HASHING_DIM).id: Thresholds(
        min_cosine=0.20, min_coverage=0.40, sure_cosine=0.60, floor_cosine=0.1, floor_coverage=0.2
    ),
}
THRESHOLDS[GRAPHS["minilm-fp32"].id] = THRESHOLDS[GRAPHS["minilm-base"].id]
#: The default embedder's: for a result whose index is not known, and for embedders never
#: calibrated (nano-e5, OpenAI-compatible APIs).
DEFAULT_THRESHOLDS = THRESHOLDS[GRAPHS["minilm"].id]

#: How many of the top hits the coverage looks at.
TOP_HITS = 3


def thresholds_for(embedder_id: str | None) -> Thresholds:
    """The verdict's thresholds for an index built by ``embedder_id`` (the default's when unknown)."""
    return THRESHOLDS.get(embedder_id or "", DEFAULT_THRESHOLDS)


def coverage_of(question: str, hits: Sequence[Hit], among: Sequence[Hit]) -> float:
    """Rarity-weighted share of the question's content words found in the best of ``hits``
    (a hit's title and section count: "Grading" answers "how is the course graded")."""
    return _coverage(_question_weights(question, among), hits)


def _question_weights(question: str, among: Sequence[Hit]) -> dict[str, float]:
    """The question's content words, each with its rarity among ``among`` (:func:`weights`)."""
    q_terms = list(dict.fromkeys(terms(question)))
    return weights(q_terms, among) if q_terms else {}


def _coverage(w: dict[str, float], hits: Sequence[Hit]) -> float:
    if not w or not hits:
        return 0.0
    total = sum(w.values())
    best = 0.0
    for hit in hits:
        present = term_set(hit.text) | term_set(f"{hit.title} {hit.section or ''}")
        best = max(best, sum(v for t, v in w.items() if t in present) / total)
    return round(best, 4)


def evidence(
    question: str,
    hits: Sequence[Hit],
    fallback: bool,
    type_found: bool = True,
    width: int = TOP_HITS,
    unknown: Sequence[str] = (),
) -> Evidence:
    """Measure the retrieval evidence for ``question`` over its first ``width`` hits (pure);
    ``unknown``: its words the collection never uses (``spelling.unknown_words``). The question's
    words are weighed once, for the coverage and for the unknown words' share alike."""
    if not hits:
        return Evidence(True, 0.0, 0.0, 0.0, len(set(terms(question))), False)
    top = hits[:width]
    w = _question_weights(question, hits)
    return Evidence(
        fallback=fallback,
        top_score=max(h.score for h in top),
        top_cosine=max(h.cosine for h in top),
        coverage=_coverage(w, top),
        n_terms=len(w),
        type_found=type_found,
        unknown=_unknown_share(w, unknown),
    )


def _unknown_share(w: dict[str, float], unknown: Sequence[str]) -> float:
    """Share of the weighed question words ``w`` that are among ``unknown``, the words the
    collection never uses (in :func:`terms`' form)."""
    absent = set(terms(" ".join(unknown)))
    if not absent or not w:
        return 0.0
    return round(sum(v for t, v in w.items() if t in absent) / sum(w.values()), 4)


def bands(ev: Evidence, thresholds: Thresholds = DEFAULT_THRESHOLDS) -> AnswerStatus:
    """The outcome the calibrated bands give this retrieval evidence alone (one input of :func:`decide`)."""
    if ev.fallback or ev.top_cosine <= 0.0:
        return "not_in_materials"
    # a question with no content words to cover ("hello again?") is left to its cosine
    covered = ev.coverage >= thresholds.sure_coverage or ev.n_terms == 0
    strong = (ev.top_cosine >= thresholds.sure_cosine and covered) or (
        ev.top_cosine >= thresholds.min_cosine and ev.coverage >= thresholds.min_coverage
    )
    weak = ev.top_cosine < thresholds.sure_cosine and (
        ev.top_cosine < thresholds.floor_cosine
        or ev.coverage < thresholds.floor_coverage
        # "can I pay in instalments?": most of what it asks is a word the materials never use
        or (ev.top_cosine < thresholds.min_cosine and ev.unknown >= thresholds.max_unknown)
    )
    if not ev.type_found:
        # The passages are about the topic but hold no date/number/person asked for: never an answer.
        return (
            "not_in_materials"
            if weak or (not strong and ev.coverage < thresholds.min_coverage)
            else "uncertain"
        )
    if strong:
        return "answered"
    return "not_in_materials" if weak else "uncertain"


# --- the verdict: the one place an answer's status is set ---------------------------------------

#: What a structural reading of the passages claims, before any status: it proves the answer (a
#: whole list of the asked kind, the module holding the topic, a grading breakdown adding up to
#: 100%), finds only part of it (a module named by several courses, an outline with no entry on the
#: topic), proves it is not there (a course outcome the course does not list), or shows the
#: materials speak of it without proving the answer (the course card holding facts of the asked
#: slot, none surely the asked one), so they are never "not in your materials".
Claim = Literal["proves", "partial", "absent", "speaks"]

#: What a model said of its own reply (``llm.find_outcome``): an answer, unsure, or not in the materials.
ModelSaid = Literal["answers", "unsure", "not_in"]


@dataclass(frozen=True)
class Finding:
    """One structural reading of the passages: its claim, what it is (``reason``) and its text."""

    claim: Claim
    reason: str
    text: str


@dataclass(frozen=True)
class Signals:
    """What the sentence reading measured, for the general rule: the retrieval evidence, and how
    well the best sentences hold what was asked."""

    ev: Evidence
    #: a value was asked ("when", "how many") and this is the overlap of the best sentence holding one
    value_overlap: float = 0.0
    value_asked: bool = False
    #: the best unit is a list whose lead-in names what was asked, or counts as many items as asked
    list_named: bool = False
    #: the sentence an answer would quote: it holds the asked value, and its share of the question
    chosen_value: bool = True
    chosen_overlap: float = 1.0
    #: a whole list was asked (outcomes, textbooks …) and a yes/no question it is not
    list_asked: bool = False


@dataclass(frozen=True)
class Reading:
    """Everything the verdict weighs for one question, gathered once."""

    fallback: bool
    signals: Signals | None = None
    #: what the structure found, in the order it is trusted (``extractive.find_structure``)
    findings: tuple[Finding, ...] = ()
    #: two documents state different values of what was asked (``conflicts.find_conflict``)
    conflict: bool = False
    #: what a language model said of its own reply, when one wrote it
    model: ModelSaid | None = None
    #: the message is only a greeting or thanks (``question.social_kind``): it asks nothing
    social: bool = False


@dataclass(frozen=True)
class Verdict:
    """The outcome and why: ``reason`` names the evidence that settled it, and tells the composer
    which text to write (the finding's, the value sentence, the best sentences, the closest)."""

    status: AnswerStatus
    reason: str
    #: a conflict's verdict: the reason the answer beside the note would have had, when it answers
    beside: str | None = None


def decide(reading: Reading, thresholds: Thresholds = DEFAULT_THRESHOLDS) -> Verdict:
    """The one verdict: ``answered`` / ``uncertain`` / ``not_in_materials`` from the evidence.

    In order: a greeting or thanks alone is answered with a hello; two documents stating the asked
    fact differently prove the materials speak of it (both are quoted); a model's reply stands as
    it said (its text was checked against the passages); a structural finding settles what it can
    prove; an outline that names nothing on the topic gives way to the sentences when they answer;
    else the fitted calibration (:class:`Calibration`) or, for an embedder without one, the bands
    refined by what the best sentences hold (a value asked and printed, a list headed by the ask)."""
    if reading.social:
        return Verdict("answered", "social")  # a hello answered with a hello; it asked nothing
    if reading.conflict:
        plain = decide(dataclasses.replace(reading, conflict=False), thresholds)
        return Verdict("answered", "conflict", plain.reason if plain.status == "answered" else None)
    if reading.model is not None:
        said: dict[ModelSaid, AnswerStatus] = {
            "answers": "answered",
            "unsure": "uncertain",
            "not_in": "not_in_materials",
        }
        return Verdict(said[reading.model], "model")
    signals = reading.signals
    if signals is None:  # nothing retrieved at all
        return Verdict("not_in_materials", "nothing retrieved")
    general = _general(signals, reading.fallback, thresholds)
    if not reading.findings or (reading.fallback and reading.findings[0].reason != "card"):
        return general
    return _structural(reading.findings, general)


_CLAIMED: dict[Claim, AnswerStatus] = {
    "proves": "answered",
    "partial": "uncertain",
    "absent": "not_in_materials",
    "speaks": "uncertain",
}


def _structural(findings: Sequence[Finding], general: Verdict) -> Verdict:
    """The first finding settles it, except one of :data:`_YIELDS` ("which week is the midterm" with
    no outline entry on it): what comes after it answers when it can."""
    first, rest = findings[0], findings[1:]
    if first.claim == "speaks" or (first.reason, first.claim) in _YIELDS:
        after = _structural(rest, general) if rest else general
        if first.claim == "speaks":
            # the card's facts of the slot, none surely the answer: what comes after decides, but
            # facts of the asked slot are never "not in your materials"
            return after if after.status != "not_in_materials" else Verdict("uncertain", first.reason)
        if after.status == "answered":
            return after
    return Verdict(_CLAIMED[first.claim], first.reason)


#: Findings that give way to what comes after them when that answers: an outline with no entry on
#: the topic, and a course card holding no fact of the asked slot. The passages may still say it in
#: prose the structure could not read.
_YIELDS = frozenset({("outline", "partial"), ("card", "absent")})


def features(s: Signals) -> tuple[float, ...]:
    """The signals as numbers, in the order of :data:`FEATURES`."""
    ev = s.ev
    return (
        ev.top_cosine,
        ev.coverage,
        ev.unknown,
        float(s.value_asked and not ev.type_found),
        s.value_overlap if s.value_asked else 0.0,
        float(s.list_named),
        s.chosen_overlap,
        ev.top_score,
        min(ev.n_terms, 10) / 10,
    )


def _calibrated(s: Signals, fallback: bool, thresholds: Thresholds, calibration: Calibration) -> Verdict:
    """The fitted verdict: the probability that the passages answer, read against its two cuts;
    most of what is asked being words the whole collection never uses ("can I pay in instalments?"
    where no passage anywhere says "instalments") is not in the materials whatever the rest says."""
    ev = s.ev
    if fallback or ev.top_cosine <= 0.0:
        return Verdict("not_in_materials", "closest")
    if ev.top_cosine < thresholds.min_cosine and ev.unknown >= thresholds.max_unknown:
        return Verdict("not_in_materials", "closest")
    p = calibration.probability(s)
    if p < calibration.refuse_below:
        return Verdict("not_in_materials", "closest")
    if p < calibration.answer_at:
        return Verdict("uncertain", "closest")
    reason = "value" if s.value_asked and s.value_overlap > 0 else "sentences"
    return _unless_list_asked(s, Verdict("answered", reason))


def _general(s: Signals, fallback: bool, thresholds: Thresholds) -> Verdict:
    """The rule for what no structure settles: the fitted verdict where one is calibrated for the
    embedder, else the bands, refined by the best sentences."""
    if thresholds.calibration is not None:
        return _calibrated(s, fallback, thresholds, thresholds.calibration)
    if s.value_asked and not fallback and s.value_overlap >= thresholds.value_overlap:
        return _unless_list_asked(s, Verdict("answered", "value"))
    status = bands(s.ev, thresholds)
    if s.list_named and not fallback and s.ev.top_cosine >= thresholds.min_cosine:
        status = "answered"  # the best unit is a list headed by what was asked
    if status != "answered":
        return Verdict(status, "closest")
    if s.value_asked and (not s.chosen_value or s.chosen_overlap < thresholds.value_floor):
        # about the question, but the sentence holding a value is not: "worth up to 1 point" is
        # no answer to "how many students has the plagiarism checker caught"
        return Verdict("uncertain", "closest")
    return _unless_list_asked(s, Verdict("answered", "sentences"))


def _unless_list_asked(s: Signals, verdict: Verdict) -> Verdict:
    """A whole list was asked for and no block of that kind came back: a stray sentence is not the list."""
    return Verdict("uncertain", "list not found") if s.list_asked else verdict
