"""A course's numbered outlines read whole (``worker/query/outlines.py``): what a question asks of them
("how many lectures", "the last one", "which lecture is PCA", "is there one on ethics"), the answer
read from the whole outline of the current document, and the note when two documents' outlines
answer it differently."""

from __future__ import annotations

from pathlib import Path

import pytest

from syllabot.shared.config import Settings
from syllabot.shared.schema import AskRequest
from syllabot.worker.answerers.extractive import ExtractiveAnswerer
from syllabot.worker.answerers.pipeline import answer_question
from syllabot.worker.indexes.engine import Engine
from syllabot.worker.query.outlines import (
    Outline,
    OutlineAsk,
    Reading,
    read_ask,
    read_for,
    read_outline,
    readings_differ,
)
from syllabot.worker.text.keyword import keyword_stem as stem

CORPUS = Path(__file__).resolve().parents[1] / "corpus"

PLAN = """---
title: 22AI205 Machine Learning — Lecture plan
---

## Lecture plan

One lecture a week, Tuesdays.

1. Introduction to machine learning
2. Linear regression
3. Logistic regression
4. Decision trees and random forests
5. Support vector machines
6. Neural networks (1): perceptrons and backpropagation
7. Neural networks (2): convolutional networks
8. Clustering: k-means and hierarchical clustering
9. Dimensionality reduction: PCA
10. Model evaluation and cross-validation
11. Reinforcement learning basics
12. Project presentations
"""

REVISED = """---
title: 22AI205 Machine Learning — Lecture plan (updated)
---

## Lecture plan

Updated: 5 January 2026. This plan replaces the earlier lecture plan.

1. Introduction to machine learning
2. Linear regression
3. Logistic regression
4. Decision trees and random forests
5. Support vector machines
6. Neural networks: perceptrons, backpropagation and convolutional networks
7. Clustering: k-means and hierarchical clustering
8. Dimensionality reduction: PCA
9. Model evaluation and cross-validation
10. Fairness and ethics in machine learning
11. Reinforcement learning basics
12. Project presentations
13. Course review and exam preparation
"""


def outline_of(text: str) -> Outline[int] | None:
    """The outline of one passage whose first line is its context line, as the chunker writes it."""
    return read_outline([(0, text)])


def test_an_outline_is_numbered_under_a_heading_that_names_its_unit() -> None:
    plan = outline_of(
        "22AI205 Machine Learning — Lecture plan\nOne lecture a week.\n\n"
        + PLAN.split("week, Tuesdays.\n\n")[1]
    )
    assert plan is not None and plan.unit == "lecture" and len(plan) == 12
    assert plan.entries[-1].text == "12. Project presentations"
    weeks = outline_of(
        "Course — Schedule\nWeek 1: Intro\nWeek 2: Data\nWeek 3: Models\nWeek 4: Tests\nWeek 5: Wrap up"
    )
    assert weeks is not None and weeks.unit == "week" and len(weeks) == 5


@pytest.mark.parametrize(
    "text",
    [
        # a unit word in prose under another heading (a syllabus's internal tests) names no outline
        "21CS44 Operating Systems — Continuous Internal Evaluation\nContinuous Internal Evaluation:\n"
        "Two Unit Tests of 25 Marks each (one hour each)\n1. First test in the 6th week\n"
        "2. Second test in the 12th week\n3. Surprise quiz in the 8th week\n"
        "4. First assignment due in the 3rd week\n5. Second assignment due in the 11th week",
        # a numbered list of links under "Video Lectures" is no list of lectures
        "21CS42 — Online resources\nOnline resources and Video Lectures:\n1. https://videos.example.edu/a\n"
        "2. https://videos.example.edu/b\n3. https://videos.example.edu/c\n4. https://videos.example.edu/d\n"
        "5. https://videos.example.edu/e",
    ],
)
def test_numbered_lists_that_are_not_outlines(text: str) -> None:
    assert outline_of(text) is None


def test_what_a_question_asks_of_an_outline() -> None:
    assert read_ask("how many lectures does have") == OutlineAsk("lecture", "count")
    assert read_ask("total no of lectures for?") == OutlineAsk("lecture", "count")
    last = read_ask("what is the last lecture in")
    assert last is not None and last.what == "last"
    which = read_ask("which lecture is pca in")
    assert which is not None and which.what == "which" and which.topic == {"pca"}
    covered = read_ask("is there a lecture on decision trees")
    assert (
        covered is not None
        and covered.what == "covered"
        and covered.topic == {stem("decision"), stem("tree")}
    )
    assert read_ask("what is lecture 3 about") == OutlineAsk("lecture", "number", number=3)
    assert read_ask("what are we doing in week 7") == OutlineAsk("week", "number", number=7)
    assert read_ask("what are the 3 key elements of ggplot2 from lecture 1") is None  # asks of ggplot2
    assert read_ask("whats the plan for weeks 6 thru 10") is None  # a range, not one week
    assert read_ask("when is the week 7 quiz") is None
    assert read_ask("what is the first lecture about") == OutlineAsk("lecture", "number", number=1)
    assert read_ask("what did we do in the first class") is None
    assert read_ask("what did we do last week") is None  # the week before this one, not the final
    assert read_ask("how many lectures per week") is None  # how often, not how many in all
    assert read_ask("how many credits is this course") is None


def read(outline: Outline[int] | None, ask: OutlineAsk) -> Reading[int]:
    assert outline is not None
    reading = read_for(outline, ask)
    assert reading is not None
    return reading


def test_each_ask_is_read_from_the_whole_outline() -> None:
    plan = outline_of("C — Lecture plan\n" + PLAN.split("week, Tuesdays.\n\n")[1])
    assert plan is not None
    count = read(plan, OutlineAsk("lecture", "count"))
    assert (count.value, count.what, len(count.entries)) == ("12", "count", 12)
    # "how many lectures on regression" counts the entries on the topic, not the whole outline
    on = read(plan, OutlineAsk("lecture", "count", frozenset({"regression"})))
    assert (on.what, on.value, [e.number for e in on.entries]) == ("topic_count", "2", [2, 3])
    nets = read(plan, OutlineAsk("lecture", "topic_count", frozenset({"neural", "net"})))
    assert [e.number for e in nets.entries] == [6, 7]  # "nets" meets the outline's "networks"
    assert read(plan, OutlineAsk("lecture", "which", frozenset({"pca"}))).value == "9"
    assert read(plan, OutlineAsk("lecture", "last")).entries[0].number == 12
    assert read(plan, OutlineAsk("lecture", "number", number=3)).entries[0].text == "3. Logistic regression"
    # "how many lectures can i miss": the count's other words name no entry, so no count is read
    assert read_for(plan, OutlineAsk("lecture", "count", frozenset({"miss"}))) is None
    missing = read(plan, OutlineAsk("lecture", "covered", frozenset({"ethics"})))
    assert (missing.value, missing.found) == ("no", False)


def test_two_outlines_differ_only_on_what_was_asked() -> None:
    old = outline_of("C — Lecture plan\n" + PLAN.split("week, Tuesdays.\n\n")[1])
    new = outline_of("C — Lecture plan\n" + REVISED.split("lecture plan.\n\n")[1])
    assert old is not None and new is not None

    def differ(ask: OutlineAsk) -> bool:
        return readings_differ(read(old, ask), read(new, ask))

    assert differ(OutlineAsk("lecture", "count"))
    assert differ(OutlineAsk("lecture", "last"))
    assert differ(OutlineAsk("lecture", "which", frozenset({"pca"})))  # 9 against 8
    assert differ(OutlineAsk("lecture", "covered", frozenset({"ethics"})))
    assert not differ(OutlineAsk("lecture", "which", frozenset({"decision", "tree"})))  # 4 in both
    assert not differ(OutlineAsk("lecture", "covered", frozenset({"quantum"})))  # in neither
    assert not differ(OutlineAsk("lecture", "count", frozenset({"regression"})))  # 2 in both
    assert not differ(OutlineAsk("lecture", "number", number=3))  # logistic regression in both
    assert differ(OutlineAsk("lecture", "number", number=10))  # evaluation against ethics


def test_a_schedules_later_part_names_its_weeks_but_not_how_many() -> None:
    """A syllabus's themes, then "•Week 6: Choose a site" to "•Week 10: …": the weeks are read
    by the unit printed on each, and no count is read from them."""
    weeks = outline_of(
        "BIOL — Schedule\n•Theme 1: Habitats\n•Theme 2: Sampling\nThe field project:\n"
        "•Week 6: Choose a site\n•Week 7: Sample plots\n•Week 8: Sort specimens\n"
        "•Week 9: Map the results\n•Week 10: Site reports"
    )
    assert weeks is not None and weeks.unit == "week" and not weeks.whole
    assert read(weeks, OutlineAsk("week", "number", number=7)).entries[0].text == "Week 7: Sample plots"
    assert read(weeks, OutlineAsk("week", "last")).entries[0].number == 10
    assert read_for(weeks, OutlineAsk("week", "count")) is None


async def _ask(engine: Engine, settings: Settings, question: str) -> str:
    answer = await answer_question(
        engine, ExtractiveAnswerer(settings), AskRequest(question=question, collection="ml")
    )
    assert answer.status == "answered", answer.text
    return answer.text


async def test_outline_questions_are_answered_from_the_current_plan_and_the_old_one_is_named(
    minilm_settings: Settings,
) -> None:
    """Beside the course's syllabus (the sample corpus's 22AI205), two lecture plans of no detected
    course whose titles name it: "ml" restricts retrieval to the syllabus, and the plans are still
    read as the course's documents."""
    engine = Engine(minilm_settings)
    syllabus = CORPUS / "KCAI205-machine-learning.pdf"
    engine.ingest(
        "ml",
        [
            (syllabus.name, syllabus.read_bytes()),
            ("ml-lecture-plan.md", PLAN.encode()),
            ("ml-lecture-plan-2026.md", REVISED.encode()),
        ],
    )

    count = await _ask(engine, minilm_settings, "how many lectures r there in ml")
    assert count.startswith("Your materials disagree. The current one looks like"), count
    assert "13 lectures" in count and "12 lectures" in count
    assert count.index("13 lectures") < count.index("12 lectures")  # the updated plan leads
    answer = count.split("\n\n", 1)[1]
    assert "lists 13 lectures:" in answer and "- 13. Course review and exam preparation" in answer
    assert answer.index("- 1. Introduction") < answer.index("- 7. Clustering")  # whole, in order

    pca = await _ask(engine, minilm_settings, "which lec is pca in ml")
    assert "8. Dimensionality reduction: PCA" in pca and "9. Dimensionality reduction: PCA" in pca
    ethics = await _ask(engine, minilm_settings, "is there a lecture on ethics?")
    assert "none of its 12 lectures is on it" in ethics and "10. Fairness and ethics" in ethics
    same = await _ask(engine, minilm_settings, "is there a lecture on decision trees")
    assert "disagree" not in same and "4. Decision trees and random forests" in same

    # once an admin marks the old plan superseded, the updated one answers alone
    engine.mark("ml", "ml-lecture-plan", "superseded")
    alone = await _ask(engine, minilm_settings, "how many lectures r there in ml")
    assert "disagree" not in alone and "lists 13 lectures" in alone


def test_the_teachers_list_names_outlines_that_differ(settings: Settings) -> None:
    """`syllabot conflicts`: the two lecture plans' lengths, and the first lecture they name
    differently (the revision merged the two neural-network lectures, so its lecture 7 is
    clustering), each document named; once the old plan is marked superseded, nothing."""
    engine = Engine(settings)
    engine.ingest(
        "ml", [("ml-lecture-plan.md", PLAN.encode()), ("ml-lecture-plan-2026.md", REVISED.encode())]
    )
    count, first = [c for c in engine.conflicts("ml") if c.kind == "outline"]
    assert count.topic == "how many lectures"
    assert {count.first_text, count.second_text} == {
        "12 lectures, the last being 12. Project presentations",
        "13 lectures, the last being 13. Course review and exam preparation",
    }
    assert first.topic == "lecture 7"
    assert {first.first_text, first.second_text} == {
        "7. Neural networks (2): convolutional networks",
        "7. Clustering: k-means and hierarchical clustering",
    }
    engine.mark("ml", "ml-lecture-plan", "superseded")
    assert not [c for c in engine.conflicts("ml") if c.kind == "outline"]


async def test_what_an_outline_does_not_name_is_answered_from_the_prose_when_it_says_it(
    minilm_settings: Settings,
) -> None:
    """ "Which week is the midterm?": the weekly schedule names no midterm, the policy paragraph
    does; the answer is the paragraph's, not the schedule shown as "none named for that"."""
    syllabus = (
        "# Data Mining — Syllabus\n\n## Weekly schedule\n\n"
        + "\n".join(
            f"Week {n}: {t}"
            for n, t in enumerate(
                [
                    "Introduction",
                    "Data cleaning",
                    "Classification",
                    "Clustering",
                    "Association rules",
                    "Anomaly detection",
                    "Text mining",
                    "Project work",
                ],
                start=1,
            )
        )
        + "\n\n## Exams\n\nThe midterm exam is held in week 5, on Thursday 9 October, in class.\n"
    )
    engine = Engine(minilm_settings)
    engine.ingest("dm", [("syllabus.md", syllabus.encode())])
    answer = await answer_question(
        engine,
        ExtractiveAnswerer(minilm_settings),
        AskRequest(question="which week is the midterm", collection="dm"),
    )
    assert answer.status == "answered" and "9 October" in answer.text, answer.text
    assert "none named for that" not in answer.text
    shown = await answer_question(
        engine,
        ExtractiveAnswerer(minilm_settings),
        AskRequest(question="which week is the field trip", collection="dm"),
    )
    assert shown.status != "answered" and "Week 8: Project work" in shown.text, shown.text


#: A course README in the common GitHub form: parts under "#" headings, a wrapped italic note
#: between the heading and the list, each lecture a line of links, sub-items for parts.
README = """# Archives for Historians

Lectures | Details | FAQ

# Lectures

*Note: the links below open each lecture's slides as web pages
in your browser.*

1. Getting started: why code, and setting up a laptop [[.html](https://x.io/01.html) | [.pdf](https://x.io/01.pdf)]
2. Tracking changes with Git [[.html](https://x.io/02.html)]
3. Command-line survival [[.html](https://x.io/03.html)]
4. First steps in Python [[.html](https://x.io/04.html)]
5. Geocoding [[.html](https://x.io/05.html)]
    - Part 1 [[.html](https://x.io/05a.html)]
    - Part 2 [[.html](https://x.io/05b.html)]
6. Docker [[.html](https://x.io/06.html)]
7. HPC [Guest lecture](https://docs.google.com/presentation/x)
8. Machine learning: (1) Linear models [[.html](https://x.io/08.html)]
9. Machine learning: (2) Random forests [[.html](https://x.io/09.html)]

# Details

Office hours are on Fridays.
"""

SYLLABUS_MD = """# Archives for Historians: Syllabus

## Lecture outline

1. Getting started: why code, and setting up a laptop
2. Tracking changes with Git
3. Command-line survival
4. First steps in Python
5. Geocoding
6. Docker
7. Machine learning
8. Student project talks
"""


def test_a_readmes_lecture_list_is_its_outline() -> None:
    """Under "# Lectures" (a level-1 heading after the title), past a wrapped note whose second
    line looks like a short heading, the README's nine lectures are read; a link's site
    ("docs.google.com") is no word of the entry ("docs" would name Docker)."""
    from syllabot.worker.ingest.chunking import chunk_document
    from syllabot.worker.ingest.loaders import load_document

    chunks = chunk_document(load_document(README.encode(), "README.md", 10**6))
    outline = read_outline([(i, c.text) for i, c in enumerate(chunks)])
    assert outline is not None and outline.unit == "lecture" and len(outline) == 9
    assert outline.entries[4].text == "5. Geocoding - Part 1 - Part 2"
    docker = read(outline, OutlineAsk("lecture", "which", frozenset({"docker"})))
    assert [e.number for e in docker.entries] == [6]
    ml = read(outline, OutlineAsk("lecture", "topic_count", frozenset({"ml"})))  # "ML": its initials
    assert [e.number for e in ml.entries] == [8, 9]


def test_one_lecture_taught_in_parts_is_not_one_lecture_alone() -> None:
    """The README's "5. Geocoding - Part 1 - Part 2" is one lecture in two parts; the syllabus's
    "5. Geocoding" one lecture: "one lecture or split in 2 parts" reads them differently, and the
    note says so with both entries. Docker, one entry in both, is the same."""
    from syllabot.worker.indexes.conflicts import _outline_said
    from syllabot.worker.ingest.chunking import chunk_document
    from syllabot.worker.ingest.loaders import load_document

    def outline(text: str, name: str) -> Outline[int]:
        chunks = chunk_document(load_document(text.encode(), name, 10**6))
        found = read_outline([(i, c.text) for i, c in enumerate(chunks)])
        assert found is not None
        return found

    readme, syllabus = outline(README, "README.md"), outline(SYLLABUS_MD, "syllabus.md")
    ask = read_ask("is the geocoding stuff one lecture or split in 2 parts")
    assert ask is not None and ask.what == "topic_count"
    split, single = read(readme, ask), read(syllabus, ask)
    assert (split.value, single.value) == ("1 in 2 parts", "1") and readings_differ(split, single)
    assert _outline_said(split, "lecture") == "1 lecture in 2 parts: 5. Geocoding - Part 1 - Part 2"
    assert _outline_said(single, "lecture") == "1 lecture: 5. Geocoding"
    docker = OutlineAsk("lecture", "topic_count", frozenset({"docker"}))
    assert not readings_differ(read(readme, docker), read(syllabus, docker))


def test_what_students_add_after_an_outline_question_is_not_its_topic() -> None:
    assert read_ask("how many lectures are in the outline? trying to plan my quarter") == OutlineAsk(
        "lecture", "count"
    )
    covered = read_ask(
        "will there be a lecture on workflow & project management? asking for my 2nd year paper"
    )
    assert covered is not None and covered.topic == {stem(w) for w in ("workflow", "project", "management")}
    assert read_ask("what is lecture 14 called, vms or cloud computing?") == OutlineAsk(
        "lecture", "number", number=14, named=True
    )
    last = read_ask("last topic in the lecture list?")
    assert last is not None and last.what == "last"
    ml = read_ask("do we def get a machine learning lecture or is it optional")
    assert ml is not None and ml.what == "covered" and {stem("machine"), stem("learning")} <= ml.topic
    parts = read_ask("is the azure batch stuff one lecture or split in 2 parts")
    assert (
        parts is not None
        and parts.what == "topic_count"
        and parts.topic == {stem(w) for w in ("azure", "batch")}
    )
    assert read_ask("what did we do last week") is None  # still the week before, not the final one


async def test_a_class_with_no_course_code_reads_every_documents_outline(settings: Settings) -> None:
    """A collection in which no course is detected (a class's own README and syllabus, neither
    with a course header) is one course: "how many lectures r there" reads both outlines, whichever
    document retrieval put first, and says they disagree."""
    engine = Engine(settings)
    engine.ingest("ds", [("README.md", README.encode()), ("syllabus.md", SYLLABUS_MD.encode())])
    answer = await answer_question(
        engine,
        ExtractiveAnswerer(settings),
        AskRequest(question="how many lectures r there", collection="ds"),
    )
    assert "disagree" in answer.text, answer.text
    assert "9 lectures" in answer.text and "8 lectures" in answer.text


def test_a_heading_run_on_after_the_line_before_still_names_the_unit() -> None:
    """A text file's or PDF's windows join a heading to the sentence before it ("… Syllabus Lecture
    outline"): its capitalised unit word at the end still names the outline; "we meet for one
    lecture a week" before a numbered list is prose and names none."""
    from syllabot.worker.ingest.chunking import chunk_document
    from syllabot.worker.ingest.loaders import load_document

    entries = "\n".join(f"{n}. Topic number {n}" for n in range(1, 7))
    doc = load_document(
        f"Archives for Historians, Spring 2026: Syllabus\n\nLecture outline\n\n{entries}\n".encode(),
        "syllabus.txt",
        10**6,
    )
    chunks = chunk_document(doc)
    assert "Syllabus Lecture outline\n1. Topic number 1" in chunks[0].text  # joined, as windows do
    outline = read_outline([(i, c.text) for i, c in enumerate(chunks)])
    assert outline is not None and outline.unit == "lecture" and len(outline) == 6
    assert outline_of(f"C — Notes\nWe meet for one lecture a week\n{entries}") is None


def test_whether_the_course_covers_a_topic_is_read_from_every_outline_whatever_its_unit() -> None:
    """ "is X covered anywhere in the course", "do we do X" name no unit: the conflict check
    (``any_unit``) reads them as asks of every outline; never a count ("do we each do 1 or 2 short
    presentations") nor a preposition's object ("how many presentations do we do in this class")."""
    question = "is project workflow / automation covered anywhere in the course"
    assert read_ask(question) is None  # the answer's outline reply needs a unit
    assert read_ask(question, any_unit=True) == OutlineAsk(
        "", "covered", frozenset({"project", "workflow", "automation"})
    )
    ethics = read_ask("do we do fairness and ethics in machine learning", any_unit=True)
    assert ethics is not None and {"fairness", "ethic"} <= ethics.topic
    assert read_ask("how many presentations do we do in this class? 1 or 2", any_unit=True) is None
    assert read_ask("do we each do 1 or 2 short presentations", any_unit=True) is None
    assert read_ask("is attendance mandatory", any_unit=True) is None


async def test_a_topic_one_outline_covers_and_another_does_not_is_a_disagreement(settings: Settings) -> None:
    """The README has an HPC guest lecture and two machine-learning lectures; the syllabus neither
    the one nor more than one of the other: "is hpc covered anywhere" and "do we def get a machine
    learning lecture" each name both outlines. Docker, one lecture in each, is no disagreement."""
    engine = Engine(settings)
    engine.ingest("ds", [("README.md", README.encode()), ("syllabus.md", SYLLABUS_MD.encode())])

    async def ask(question: str) -> str:
        return (
            await answer_question(
                engine, ExtractiveAnswerer(settings), AskRequest(question=question, collection="ds")
            )
        ).text

    hpc = await ask("is hpc covered anywhere in the course")
    assert "disagree" in hpc and "none of its 8 lectures is on it" in hpc and "7. HPC" in hpc, hpc
    ml = await ask("do we def get a machine learning lecture or is it optional")
    assert "disagree" in ml and "2 lectures: 8. Machine learning" in ml and "1 lecture: 7." in ml, ml
    assert "disagree" not in await ask("is docker covered anywhere in the course")


def test_a_lectures_name_is_every_word_of_its_title() -> None:
    """ "whats lecture 14 called": "Remote computing / rented servers (Azure Batch)" and
    "Azure Batch" are one lecture (no note for "what is lecture 14 about") but two names;
    "Intro to R" and "Introduction to R" are one name."""
    from syllabot.worker.query.outlines import Entry

    def outline(*titles: str) -> Outline[int]:
        from syllabot.worker.text.terms import terms

        entries = [Entry(n, f"{n}. {t}", frozenset(terms(t)), n) for n, t in enumerate(titles, 1)]
        return Outline("lecture", tuple(entries))

    long = outline("Intro to R", "Git", "Shell", "Docker", "Remote computing / rented servers (Azure Batch)")
    short = outline("Introduction to R", "Git", "Shell", "Docker", "Azure Batch")
    named, about = (
        OutlineAsk("lecture", "number", number=5, named=True),
        OutlineAsk("lecture", "number", number=5),
    )
    assert readings_differ(read(long, named), read(short, named))
    assert not readings_differ(read(long, about), read(short, about))
    first = OutlineAsk("lecture", "number", number=1, named=True)
    assert not readings_differ(read(long, first), read(short, first))


def test_the_teachers_list_names_a_lecture_taught_in_parts_in_one_outline_only(settings: Settings) -> None:
    """The README teaches "5. Geocoding" in two parts, the syllabus as one lecture: listed as
    lecture 5 before the first lecture the two name differently (7: HPC against machine learning)."""
    engine = Engine(settings)
    engine.ingest("ds", [("README.md", README.encode()), ("syllabus.md", SYLLABUS_MD.encode())])
    topics = [c.topic for c in engine.conflicts("ds") if c.kind == "outline"]
    assert topics == ["how many lectures", "lecture 5", "lecture 7"], topics
    (parts,) = [c for c in engine.conflicts("ds") if c.topic == "lecture 5"]
    assert {parts.first_text, parts.second_text} == {"5. Geocoding - Part 1 - Part 2", "5. Geocoding"}
