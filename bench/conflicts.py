"""When the materials disagree: conflict notes on conflict and non-conflict questions, and the
teacher's list against each collection's labelled conflicts.

`python -m bench.conflicts [--no-write] [--show] [--only SET ...] [--off check|record|gate]
[--no-teacher] [--no-scale]` (`--off card`: the course card's disagreement on the asked slot) — the blind question set `bench/data/conflict_questions.jsonl` (every
cross-document conflict the courses README lists for EC 607 and PSYC 11, asked the way students
ask, plus conflicts planted beside VTU syllabi and the sample corpus: the notices of
`bench/data/planted/`, and the same VTU plants as revised copies of the syllabus PDFs themselves,
built by `bench.planted_pdfs`), every course's own conflict questions (`conflict: true` in
`bench/data/course_*_questions.jsonl`, both sides labelled), and as non-conflict questions the
courses' own blind sets minus those `bench/data/conflict_overlap.json` lists as touching a conflict,
plus the planted documents' controls. Each question is searched and answered as the worker does
(default embedder, extractive answerer, shipped settings, the record of versions built with the
snapshot) in a collection of its `collection_files` (a whole course folder is the answer bench's
snapshot, sharing its embedding cache).

A conflict question is named when the answer says "Your materials disagree" and its note names
each labelled side's document and value (its numbers and days), both documents cited. The teacher's
list (`syllabot conflicts`, the record of versions) is scored against each collection's labelled
conflicts: a topic is found when an entry's two documents are the labelled ones and each side's
text holds its labelled value; entries matching none are counted apart (judge them by reading the
printed list: a true disagreement the labels do not list is not a false entry).

`--off` measures a mechanism off: `check` (the question-time check), `record` (the record's notes),
`gate` (the check compares any two documents, not only versions).

Split: the held-out courses (BEE 4750, POIR 613) and the VTU plants, as notices and as revised PDFs,
are held out; the six other courses, the sample corpus's plant, the outline plants and the VTU
student questions (90, all seven syllabi in one collection: several courses and no conflict, so
every note there is false) are tuning sets. EC 607 was held out until 2026-12-03, when its outline
misses were diagnosed on it: from then on its rate is a tuned one ("seen").
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.common import (
    DATA,
    ROOT,
    bench_settings,
    default_embedder,
    embed_queries_cached,
    machine_stamp,
    markdown_table,
    parse_files,
    result_for,
    snapshot_of,
    write_section,
)
from bench.corpus_labels import COURSE_FOLDERS, course_files, questions_path
from bench.planted_pdfs import PLANTS, build

QUESTIONS = ROOT / "bench" / "data" / "conflict_questions.jsonl"
OVERLAP = ROOT / "bench" / "data" / "conflict_overlap.json"
PLANTED = ROOT / "bench" / "data" / "planted"
#: Every real course of the corpus (``bench.corpus_labels``): its folder and its question file.
COURSE_FILES = {
    slug: (DATA / "courses" / folder, questions_path(slug)) for slug, (folder, _) in COURSE_FOLDERS.items()
}
SPLIT = {
    **{slug: ("held out" if split == "heldout" else "tune") for slug, (_, split) in COURSE_FOLDERS.items()},
    "sample-planted": "tune",
    "outline-planted": "tune",
    "ec607": "seen",
    "vtu-planted": "held out",
    "vtu-planted-pdf": "held out",
    "vtu-courses": "tune",
}
#: The VTU student questions (both halves) in one collection of the seven syllabi: several courses,
#: no conflicts, so every note is false (it found the rule that two courses are never two versions).
VTU_QUESTIONS = ROOT / "bench" / "data" / "vtu_student_questions.jsonl"
#: The VTU plants again as revised copies of the syllabus PDFs themselves (``bench.planted_pdfs``):
#: the same blind questions and controls, the notice swapped for the revised PDF.
PDF_PLANT_FOR = {
    "21CS44_revised_notice.md": "21CS44_revised.pdf",
    "21CS52_revised_notice.md": "21CS52_revised.pdf",
}


@functools.cache
def _planted(name: str) -> Path:
    """A planted PDF, built once per run (``bench.planted_pdfs``)."""
    return build(name)


def resolve(course: str, name: str) -> Path:
    """Where a question's collection file lives: the course folder, the VTU syllabi, the sample
    corpus, or our planted documents."""
    if name in PLANTS:
        return _planted(name)
    for folder in (
        COURSE_FILES[course][0] if course in COURSE_FILES else None,
        PLANTED,
        DATA / "syllabi",
        ROOT / "corpus",
    ):
        if folder is not None and (folder / name).is_file():
            return folder / name
    raise FileNotFoundError(f"{name} (for {course})")


@dataclass
class Case:
    question: dict
    conflict: bool
    found: object  # the Conflict the answer leads with (question-time check or record), or None
    note: str | None
    status: str
    ms: float
    related_ms: float = 0.0  # reading the course's other passages (``retrieval.related_hits``)
    cited: tuple[str, ...] = ()  # the files the answer cites
    source: str = ""  # "check" (question time) or "record" (versions aligned at index time)


#: A label's note of which term a side is from ("… 12:30am–3:20pm (Fall 2018)"): not part of the value.
_TERM_NOTE = re.compile(r"\((?:(?:fall|spring|summer|winter)\s+)?(?:19|20)\d\d\)", re.IGNORECASE)


def _digits_and_days(text: str) -> set[str]:
    text = _TERM_NOTE.sub("", text)
    return set(re.findall(r"\d+|monday|tuesday|wednesday|thursday|friday|saturday|sunday", text.lower()))


def names_both(case: Case) -> bool:
    """The answer says the materials disagree, and its note names each expected side's document
    and value (its numbers and days), both documents cited."""
    conflict = case.found
    if conflict is None or case.note is None:
        return False
    by_file = {side.file: side for side in conflict.sides}  # type: ignore[attr-defined]
    matched = 0
    for side in case.question["sides"]:
        found = by_file.get(side["file"])
        if found is None or side["file"] not in case.cited:
            continue
        wanted = _digits_and_days(side["value"])
        if wanted <= _digits_and_days(found.sentence) | _digits_and_days(" ".join(found.quoted)):
            matched += 1
    return matched >= 2


#: Switches for measuring each mechanism on and off (`--off check`, `--off record`, ...).
OFF: set[str] = set()


def _snapshot(q: dict, embedder, snapshots: dict):
    """The question's collection, built once: a real course's whole folder as ``bench.answers``
    builds it (sharing its embedding cache), else the files the question names."""
    from bench.answers import course_snapshot
    from bench.corpus_labels import COURSE_FOLDERS

    files = tuple(sorted(q["collection_files"]))
    if files not in snapshots:
        slug = q["course"]
        whole = slug in COURSE_FOLDERS and files == tuple(
            sorted(p.name for p in course_files(COURSE_FOLDERS[slug][0]))
        )
        if whole and not __import__("os").environ.get("OLDSNAP"):
            snapshots[files] = course_snapshot(slug, embedder)
        else:
            chunks, _ = parse_files([resolve(q["course"], f) for f in files])
            snapshots[files] = snapshot_of(chunks, embedder, f"conflicts-{slug}", collection=slug)
    return snapshots[files]


def run_cases(questions: Sequence[dict], embedder, settings) -> list[Case]:
    from syllabot.worker.answerers import extractive
    from syllabot.worker.answerers.notes import DISAGREE_LEAD, shows
    from syllabot.worker.indexes.conflicts import conflict_of
    from syllabot.worker.indexes.retrieval import recorded_for, related_hits
    from syllabot.worker.query.reading import read_question

    answerer = extractive.ExtractiveAnswerer(settings)
    check = extractive.conflict_of
    extractive.conflict_of = (lambda result, asked=None: None) if "check" in OFF else check  # type: ignore[assignment]
    snapshots: dict[tuple[str, ...], object] = {}
    cases = []
    try:
        for q in questions:
            snapshot = _snapshot(q, embedder, snapshots)
            prepared = read_question(q["question"], snapshot)
            (vector,) = embed_queries_cached(embedder, [prepared.text], "conflicts")
            result = result_for(
                snapshot, q["question"], prepared, vector, settings, settings.top_k, related=False
            )
            t_related = time.perf_counter()
            result.related = related_hits(snapshot, prepared.text, result.hits)  # timed alone
            related_ms = (time.perf_counter() - t_related) * 1000
            t0 = time.perf_counter()
            result.recorded = [] if "record" in OFF else recorded_for(snapshot, result.passages)
            if "card" in OFF:
                result.card_conflict = None
            if "gate" in OFF:
                result.versions = None  # the question-time check compares any two documents
            answer = answerer.answer_sync(q["question"], result, snapshot.collection)
            ms = (time.perf_counter() - t0) * 1000
            found, source = None, ""
            if DISAGREE_LEAD in answer.text:
                checked = None if "check" in OFF else conflict_of(result)
                card = None if "card" in OFF else result.card_conflict
                for conflict, where in [
                    (checked, "check"),
                    (card, "card"),
                    *((c, "record") for c in result.recorded),
                ]:
                    if conflict is not None and shows(conflict, answer.text):
                        found, source = conflict, where
                        break
            note = answer.text if DISAGREE_LEAD in answer.text else None
            cited = tuple(dict.fromkeys(c.file for c in answer.citations))
            cases.append(
                Case(q, bool(q.get("conflict")), found, note, answer.status, ms, related_ms, cited, source)
            )
    finally:
        extractive.conflict_of = check  # type: ignore[assignment]
    return cases


def _as_pdf_plant(q: dict) -> dict:
    """A VTU plant's question (or control) against the revised PDF instead of the notice."""

    def swap(name: str | None) -> str | None:
        return PDF_PLANT_FOR.get(name, name) if name else name

    out = {**q, "course": "vtu-planted-pdf", "collection_files": [swap(f) for f in q["collection_files"]]}
    if q.get("sides"):
        out["sides"] = [{**side, "file": swap(side["file"])} for side in q["sides"]]
    for key in ("current", "control_for"):
        if q.get(key):
            out[key] = swap(q[key])
    return out


def questions_by_course() -> dict[str, list[dict]]:
    """Conflict questions and controls from the conflict file; the courses' own blind questions,
    minus those touching a conflict, as non-conflict questions."""
    groups: dict[str, list[dict]] = {}
    for line in QUESTIONS.read_text(encoding="utf-8").splitlines():
        if line.strip():
            q = json.loads(line)
            if q.get("derived"):
                continue  # a conflict only by counting weeks ourselves: not printed, not scored
            groups.setdefault(q["course"], []).append(q)
    groups["vtu-planted-pdf"] = [_as_pdf_plant(q) for q in groups.get("vtu-planted", [])]
    syllabi = sorted(p.name for p in (DATA / "syllabi").glob("*.pdf"))
    if syllabi and VTU_QUESTIONS.exists():
        groups["vtu-courses"] = [
            {**json.loads(line), "course": "vtu-courses", "collection_files": syllabi, "conflict": False}
            for line in VTU_QUESTIONS.read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
    overlap = json.loads(OVERLAP.read_text(encoding="utf-8"))
    for course, (folder, path) in COURSE_FILES.items():
        if not folder.is_dir() or not path.is_file():
            continue
        touching = {item["question"] if isinstance(item, dict) else item for item in overlap.get(course, [])}
        files = [p.name for p in course_files(folder.name)]
        for line in path.read_text(encoding="utf-8").splitlines():
            q = json.loads(line) if line.strip() else None
            if not q or q["question"] in touching:
                continue
            # a course file's own conflict questions (both sides labelled) are conflict questions
            conflict = bool(q.get("conflict")) and len(q.get("sides") or []) >= 2
            groups.setdefault(course, []).append({**q, "collection_files": files, "conflict": conflict})
    return groups


def summary(cases: Sequence[Case]) -> dict:
    conflicts = [c for c in cases if c.conflict]
    others = [c for c in cases if not c.conflict]
    current = [c for c in conflicts if c.question.get("current")]
    ms = sorted(c.ms for c in cases)
    return {
        "conflict_n": len(conflicts),
        "detected": sum(c.found is not None for c in conflicts),
        "both": sum(names_both(c) for c in conflicts),
        "current_n": len(current),
        "current_led": sum(
            c.found is not None and c.found.sides[0].file == c.question["current"]  # type: ignore[attr-defined]
            for c in current
        ),
        "other_n": len(others),
        "false_notes": sum(c.note is not None for c in others),
        "p50_ms": ms[len(ms) // 2] if ms else 0.0,
        "related_ms": _p50_max([c.related_ms for c in cases]),
    }


def _p50_max(values: Sequence[float]) -> str:
    ordered = sorted(values)
    return f"{ordered[len(ordered) // 2]:.2f} / {ordered[-1]:.2f}" if ordered else "—"


#: The scale row: the VTU syllabi copied this many times as one collection without course names
#: (every copy another document), so every copy's passages are candidates.
SCALE_COPIES = 1000


def scale_row(embedder) -> list[str] | None:
    """Reading the course's other passages at ~100k chunks: the VTU student questions, each with
    the top hits of one copy, over the syllabi copied :data:`SCALE_COPIES` times (random unit
    vectors: only the keyword postings are read)."""
    import dataclasses

    import numpy as np

    from syllabot.worker.indexes import heap
    from syllabot.worker.indexes.index import build_snapshot
    from syllabot.worker.indexes.retrieval import hit_from_chunk, related_hits

    syllabi = sorted((DATA / "syllabi").glob("*.pdf"))
    if not syllabi or not VTU_QUESTIONS.exists():
        return None
    base, _ = parse_files(syllabi)
    chunks = [
        dataclasses.replace(c, chunk_id=f"{c.chunk_id}~{k}", doc_id=f"{c.doc_id}~{k}", subject=None)
        for k in range(SCALE_COPIES)
        for c in base
    ]
    matrix = np.random.default_rng(0).standard_normal((len(chunks), 8)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    snapshot = build_snapshot("scale", "scale", "random", 8, chunks, matrix, "bench")
    # as `syllabot worker` does after each snapshot load (worker/indexes/heap.py): without it, a full
    # collection over this process's other objects lands on whichever question allocates first
    heap.enable()
    heap.after_snapshot_load()
    questions = [json.loads(line)["question"] for line in VTU_QUESTIONS.read_text().splitlines() if line]
    step = max(1, len(base) // 8)
    hits = [hit_from_chunk(chunks[i * step], i + 1, 0.5, 0.5, 0.5) for i in range(8)]
    times = []
    for question in questions:
        t0 = time.perf_counter()
        related_hits(snapshot, question, hits)
        times.append((time.perf_counter() - t0) * 1000)
    heap.disable()
    return [
        f"VTU syllabi × {SCALE_COPIES} ({len(chunks):,} chunks), {len(questions)} questions",
        _p50_max(times),
    ]


def _topics(questions: Sequence[dict]) -> dict[str, list[dict]]:
    """The labelled conflicts of a set of questions: each topic's sides (file and value)."""
    return {q["topic"]: q["sides"] for q in questions if q.get("conflict") and len(q.get("sides") or []) >= 2}


def _entry_matches(entry, files: dict[str, str], sides: Sequence[dict]) -> bool:
    """A teacher's-list entry names a labelled conflict: its two documents are the labelled ones
    and each side's text holds its labelled value's numbers and days."""
    said = {files.get(entry.docs[0], ""): entry.first_text, files.get(entry.docs[1], ""): entry.second_text}
    if {side["file"] for side in sides[:2]} != set(said):
        return False
    return all(_value_in(side["value"], said[side["file"]]) for side in sides[:2])


def _value_in(value: str, text: str) -> bool:
    """A labelled value is in an entry's text: its numbers and days, and a word of what it says
    ("Tuesday & Thursday 12:30am–3:20pm (Fall 2018)" in "Tuesday & Thursday 12:30am–3:20pm.")."""
    words = {w for w in re.findall(r"[a-z]{4,}", _TERM_NOTE.sub("", value).lower())}
    said = set(re.findall(r"[a-z]{4,}", text.lower()))
    return _digits_and_days(value) <= _digits_and_days(text) and (not words or bool(words & said))


def teacher_list(groups: dict[str, list[dict]], embedder, only: Sequence[str] | None):
    """`syllabot conflicts` (the record's list) on each course and planted collection, scored
    against its labelled conflicts: (summary rows, every entry)."""
    from syllabot.worker.indexes.retrieval import disagreements

    collections: list[tuple[str, str, list[dict]]] = [(c, c, groups.get(c, [])) for c in COURSE_FILES]
    collections += [
        (f"vtu-planted-pdf ({PLANTS[pdf][0]})", "vtu-planted-pdf", []) for pdf in PDF_PLANT_FOR.values()
    ]
    collections.append(("outline-planted", "outline-planted", groups.get("outline-planted", [])))
    rows, listed = [], []
    for name, group, questions in collections:
        if only is not None and group not in only:
            continue
        if group == "vtu-planted-pdf":
            original = name.split("(")[1].rstrip(")")
            pdf = next(p for p in PDF_PLANT_FOR.values() if PLANTS[p][0] == original)
            questions = [q for q in groups.get(group, []) if pdf in q["collection_files"]]
            files = [original, pdf]
        elif group in COURSE_FILES:
            files = [p.name for p in course_files(COURSE_FILES[group][0].name)]
        else:
            files = sorted(questions[0]["collection_files"]) if questions else []
        if not files:
            continue
        try:
            snapshot = _snapshot({"course": group, "collection_files": files}, embedder, {})
        except FileNotFoundError as exc:
            print(f"skipping the teacher's list of {name}: {exc} is not here")
            continue
        by_doc = {c.doc_id: c.file for c in snapshot.chunks}
        topics = _topics(questions)
        found: set[str] = set()
        unlabelled = 0
        for entry in disagreements(snapshot):
            hit = [t for t, sides in topics.items() if _entry_matches(entry, by_doc, sides)]
            found.update(hit)
            unlabelled += not hit
            listed.append(
                [
                    name,
                    entry.kind,
                    entry.first,
                    entry.second,
                    entry.first_text[:90] + "…",
                    ", ".join(hit) or "—",
                ]
            )
        rows.append(
            [
                name,
                SPLIT.get(group, "tune"),
                str(sum(1 for e in listed if e[0] == name)),
                f"{len(found)}/{len(topics)}",
                str(unlabelled),
            ]
        )
    return rows, listed


def _rate(k: int, n: int) -> str:
    return f"{k / n:.3f} ({k}/{n})" if n else "—"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--show", action="store_true", help="print every miss and every false note")
    parser.add_argument("--only", nargs="*", default=None, help="these sets alone (e.g. la7032 neu365p)")
    parser.add_argument(
        "--off",
        nargs="*",
        default=[],
        choices=("check", "record", "gate", "card"),
        help="measure without the question-time check, the record of versions, the check's limit "
        "to documents the record calls versions, or the course card's disagreements",
    )
    parser.add_argument("--no-teacher", action="store_true", help="skip the teacher's list and the scale row")
    parser.add_argument("--no-scale", action="store_true", help="skip the scale row (97,000 chunks)")
    args = parser.parse_args(argv)
    OFF.update(args.off)
    if not QUESTIONS.exists():
        print("bench/data/conflict_questions.jsonl is missing")
        return 1
    started = time.perf_counter()
    embedder, settings = default_embedder(), bench_settings()
    rows, per_topic = [], {}
    for course, questions in sorted(questions_by_course().items(), key=lambda kv: (SPLIT[kv[0]], kv[0])):
        if args.only is not None and course not in args.only:
            continue
        try:
            cases = run_cases(questions, embedder, settings)
        except FileNotFoundError as exc:
            print(f"skipping {course}: {exc} is not here")
            continue
        s = summary(cases)
        rows.append(
            [
                f"{course}, {SPLIT[course]}",
                _rate(s["both"], s["conflict_n"]),
                _rate(s["detected"], s["conflict_n"]),
                _rate(s["current_led"], s["current_n"]),
                _rate(s["false_notes"], s["other_n"]),
                f"{s['p50_ms']:.2f}",
                s["related_ms"],
            ]
        )
        for c in cases:
            if c.conflict:
                topic = per_topic.setdefault((course, c.question["topic"]), [0, 0])
                topic[0] += names_both(c)
                topic[1] += 1
        if args.show:
            for c in cases:
                if (c.conflict and not names_both(c)) or (not c.conflict and c.note):
                    print(
                        f"[{course}] conflict={c.conflict} ({c.source}) {c.question['question']!r}\n    -> {c.note}"
                    )
    header = [
        "set",
        "names both values, both cited (of conflict questions)",
        "any conflict note (of conflict questions)",
        "current one leads (where the materials say)",
        "conflict note on a non-conflict question",
        "p50 ms (answer + check)",
        "p50 / max ms reading more of the course",
    ]
    table = markdown_table(header, rows)
    topics = markdown_table(
        ["course", "conflict", "named both"],
        [[course, topic, f"{k}/{n}"] for (course, topic), (k, n) in sorted(per_topic.items())],
    )
    if args.no_teacher:
        print(table + "\n\n" + topics)
        return 0
    groups = questions_by_course()
    teacher, entries = teacher_list(groups, embedder, args.only)
    scale = None if args.no_scale else scale_row(embedder)
    text = (
        "## When the materials disagree: conflict notes\n\n"
        f"`python -m bench.conflicts` — {machine_stamp()} Whole run {time.perf_counter() - started:.0f} s. "
        "Targets: ≥ 0.90 of conflict questions name both values with both citations; ≤ 0.02 of "
        "non-conflict questions get a conflict note; the current document leads whenever the "
        "materials say which one is current.\n\n" + table + "\n\nBy conflict:\n\n" + topics + "\n\n"
        "Reading the course's other passages at scale (`retrieval.related_hits`, p50 / max ms):\n\n"
        + (markdown_table(["collection", "ms"], [scale]) if scale else "(the VTU syllabi are not here)")
        + "\n\n"
        "`syllabot conflicts` on each course against its labelled conflicts (every topic of its "
        "conflict questions): topics found (an entry between the two labelled documents holding "
        "both labelled values), and entries matching no labelled conflict:\n\n"
        + markdown_table(
            ["collection", "split", "entries", "labelled conflicts found", "unlabelled entries"], teacher
        )
        + "\n\nEvery entry it lists:\n\n"
        + markdown_table(
            ["collection", "kind", "one document", "the other", "first passage", "labelled"], entries
        )
        + "\n"
    )
    print(text)
    if not args.no_write:
        write_section("conflicts", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
