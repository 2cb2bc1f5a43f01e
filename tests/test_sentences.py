"""worker/text/sentences.py: sentence ends, and the periods that are not ends (names, titles, abbreviations)."""

from __future__ import annotations

import time

import pytest

from syllabot.worker.text.sentences import ABBREVIATIONS, split_sentences

TEXTBOOKS = (
    "1. Packet-Switching- Maria L. Fernandez, Omar K. Haddad, 3rd Edition, Northfield Press, 2012. "
    "2. Routing From the Wire Up -Priya R. Natarajan and Tomas J. Berg, 2nd Edition, Harbour House, 2019."
)


def test_textbook_list_splits_into_its_numbered_items_with_authors_whole() -> None:
    assert split_sentences(TEXTBOOKS) == [
        "1. Packet-Switching- Maria L. Fernandez, Omar K. Haddad, 3rd Edition, Northfield Press, 2012.",
        "2. Routing From the Wire Up -Priya R. Natarajan and Tomas J. Berg, 2nd Edition, Harbour House, 2019.",
    ]


@pytest.mark.parametrize(
    "name",
    [
        "Maria L. Fernandez",
        "Priya R. Natarajan",
        "Tom M. Okonkwo",
        "Omar K. Haddad",
        "Tomas J. Berg",
        "Hana Sato, Peter B. Lund, Greg Moss",
        "J. R. R. Tolkien",
        "Dr. K. Smith",
        "Prof. A. K. Rao",
        "Mr. Rao",
        "Mrs. Iyer",
        "Ms. Das",
        "Smt. Lakshmi",
        "Martin Luther King Jr. Day",
        "St. Joseph's College",
    ],
)
def test_names_with_initials_and_titles_are_never_cut(name: str) -> None:
    text = f"The book is by {name} and others. It is prescribed."
    parts = split_sentences(text)
    assert len(parts) == 2
    assert name in parts[0]


def test_titles_and_et_al_keep_the_sentence_whole() -> None:
    assert split_sentences("Prof. Rao teaches it. Dr. K. Smith et al. wrote Fig. 3. It is fine.") == [
        "Prof. Rao teaches it.",
        "Dr. K. Smith et al. wrote Fig. 3.",
        "It is fine.",
    ]


@pytest.mark.parametrize(
    "sentence",
    [
        "See Fig. 3 for the layers.",
        "Refer Vol. 2 of the series.",
        "Pearson, 3rd Ed. Prentice Hall print.",
        "Read pp. 45-67 before class.",
        "Use a tree, e.g. A binary heap works.",
        "Use a heap, i.e. A complete binary tree.",
        "Trees, graphs, heaps etc. Are all covered here.",
        "Published by Tata McGraw Hill Pvt. Ltd. New Delhi.",
        "Made by Acme Inc. For students.",
        "TCP vs. UDP is compared.",
        "It takes approx. 40 hours in total.",
        "Min. 40 marks are required.",
        "Sec. 4 is optional.",
        "Ch. 5 covers scheduling.",
        "Eq. 7 gives the bound.",
        "The U.S. Army manual is cited.",
        "Sl. No. 5 is the lab test.",
        "The fee is Rs. 500 per semester.",
        "It was published in Jan. 2020 by them.",
        "She holds a Ph.D. From IISc.",
        "Check the details, cf. Appendix B here.",
        "Classes start at 9 a.m. sharp every day.",
        "Python 3.11 and NumPy 1.26.4 are used.",
        "The value of pi is 3.14159 roughly.",
        "Marks are scaled to 50.5 then rounded.",
        "Visit www.vtu.ac.in for the syllabus.",
        "Wait for it... Then it continues.",
        "Sorting, searching… Hashing is next.",
        "Use fork() and exec() in C. Both are system calls.",  # "C." reads as an initial (documented)
        'He wrote "Operating Systems." in 1992.',
    ],
)
def test_non_ending_periods_keep_one_sentence(sentence: str) -> None:
    assert split_sentences(sentence) == [sentence]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Paging is in Module 3. Segmentation too.", ["Paging is in Module 3.", "Segmentation too."]),
        ("Is it hard? No. It is easy!", ["Is it hard?", "No. It is easy!"]),  # "No." is an abbreviation
        ("Really?! Yes.", ["Really?!", "Yes."]),
        ("Why? Because.", ["Why?", "Because."]),
        ("It ends here. 2021 was the year.", ["It ends here.", "2021 was the year."]),
        ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
        ("Read this (Chapter 2.) Then that.", ["Read this (Chapter 2.)", "Then that."]),
        ("First point. (Second) point.", ["First point.", "(Second) point."]),
        ('First point. "Quoted" point.', ["First point.", '"Quoted" point.']),
        (
            "Classes start at 9 a.m. Attendance is compulsory.",
            ["Classes start at 9 a.m.", "Attendance is compulsory."],
        ),
        ("The lab closes at 5 p.m. Bring your record.", ["The lab closes at 5 p.m.", "Bring your record."]),
        ("It runs in the OS. The kernel helps.", ["It runs in the OS.", "The kernel helps."]),
        ("It is 3.5 credits. Labs are extra.", ["It is 3.5 credits.", "Labs are extra."]),
        ("Stop here! Start there.", ["Stop here!", "Start there."]),
        ("Lists. • item one", ["Lists.", "• item one"]),
        ("Done. - next item", ["Done.", "- next item"]),
        # "1.)" opens an item; a numbered or bulleted line starts one even without a space
        (
            "three questions:\n 1.) What did I do? \n 2.) What is next?",
            ["three questions:", "1.) What did I do?", "2.) What is next?"],
        ),
        (
            "as follows:\n1.Carefully review it.\n2.Email the TA",
            ["as follows:", "1.Carefully review it.", "2.Email the TA"],
        ),
        (
            "Field journal\n•Short entry\n•Worth 2 points",
            ["Field journal", "•Short entry", "•Worth 2 points"],
        ),
        ("It is version 2.Final", ["It is version 2.Final"]),  # not at a line's start: no item
    ],
)
def test_sentence_ends(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "It is small. it continues in lower case.",
        "Values are 1, 2, 3. and so on.",
        "Ends with a period. , then a comma.",
        "See the note. ) stray bracket.",
        "Page 3. ; odd punctuation",
    ],
)
def test_no_split_before_lower_case_or_closing_punctuation(text: str) -> None:
    assert split_sentences(text) == [text]


def test_lower_case_outside_ascii_does_not_start_a_sentence() -> None:
    assert split_sentences("Une phrase. été vient ensuite.") == ["Une phrase. été vient ensuite."]
    assert split_sentences("Une phrase. Été vient ensuite.") == ["Une phrase.", "Été vient ensuite."]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "1. Introduction to OS. 2. Process management.",
            ["1. Introduction to OS.", "2. Process management."],
        ),
        ("I. Paging. II. Segmentation.", ["I. Paging.", "II. Segmentation."]),
        # lower-case numerals read as prose ("... so on. i think"), so no split before them
        ("i. Paging. ii. Segmentation.", ["i. Paging. ii. Segmentation."]),
        ("Q3. What is paging? Explain.", ["Q3. What is paging?", "Explain."]),
        ("(2. Deadlocks are covered.", ["(2. Deadlocks are covered."]),
        ("She scored 9. Then she left.", ["She scored 9.", "Then she left."]),
        ("Why? 2. Because it is.", ["Why?", "2. Because it is."]),
        ("Read Vol. 2. It is good.", ["Read Vol. 2.", "It is good."]),
        ("See p. 5. Then go.", ["See p. 5.", "Then go."]),
        ("i. Paging. ii. Segmentation. iii. Swapping.", ["i. Paging. ii. Segmentation. iii. Swapping."]),
    ],
)
def test_list_numbers_are_not_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_bangla_danda_splits_like_the_chunker() -> None:
    text = "নতুন সাইকেল ৩০ দিনের মধ্যে ফেরত দেওয়া যায়। ডেলিভারি ফি শুধু ক্ষতিগ্রস্ত হলে ফেরত দেওয়া হয়। টাকা ফেরত যায়।"
    assert split_sentences(text) == [
        "নতুন সাইকেল ৩০ দিনের মধ্যে ফেরত দেওয়া যায়।",
        "ডেলিভারি ফি শুধু ক্ষতিগ্রস্ত হলে ফেরত দেওয়া হয়।",
        "টাকা ফেরত যায়।",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("প্রথম বাক্য।দ্বিতীয় বাক্য।", ["প্রথম বাক্য।", "দ্বিতীয় বাক্য।"]),  # no space after the danda
        ("রিটার্ন করতে কত দিন সময় পাই? ৩০ দিন।", ["রিটার্ন করতে কত দিন সময় পাই?", "৩০ দিন।"]),
        ("এটি ভালো। Module 2 covers it.", ["এটি ভালো।", "Module 2 covers it."]),
        ("Paging is covered. পেজিং মডিউল ৩ এ আছে।", ["Paging is covered.", "পেজিং মডিউল ৩ এ আছে।"]),
        ("ড. রহমান পড়ান। তিনি ভালো।", ["ড. রহমান পড়ান।", "তিনি ভালো।"]),
        ("শ্লোক এক॥ শ্লোক দুই॥", ["শ্লোক এক॥", "শ্লোক দুই॥"]),
        ("これはペンです。あれは本です。", ["これはペンです。", "あれは本です。"]),
        ("本当？はい！", ["本当？", "はい！"]),
    ],
)
def test_caseless_scripts_and_full_width_marks(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_blank_lines_and_list_lines_start_new_sentences() -> None:
    text = (
        "Course outcomes\n\nBy the end of the term a student can\n"
        "CO1 Describe how a kernel is layered\nCO2 Apply scheduling\n"
        "1. First item\n2. Second item\n• bullet one\n- dash item\n# Heading\n(a) sub item"
    )
    assert split_sentences(text) == [
        "Course outcomes",
        "By the end of the term a student can",
        "CO1 Describe how a kernel is layered",
        "CO2 Apply scheduling",
        "1. First item",
        "2. Second item",
        "• bullet one",
        "- dash item",
        "# Heading",
        "(a) sub item",
    ]


def test_wrapped_lines_inside_a_paragraph_stay_one_sentence() -> None:
    text = "Andrew S.\nTanenbaum wrote the book on\nnetworks. It is prescribed."
    assert split_sentences(text) == ["Andrew S.\nTanenbaum wrote the book on\nnetworks.", "It is prescribed."]


def test_abbreviation_after_a_line_break_is_recognised() -> None:
    assert split_sentences("Taught by\nDr. Rao this term.") == ["Taught by\nDr. Rao this term."]


@pytest.mark.parametrize("text", ["", "   ", "\n\n", " \n \t "])
def test_empty_input_gives_no_sentences(text: str) -> None:
    assert split_sentences(text) == []


def test_parts_are_stripped() -> None:
    assert split_sentences("  One.   Two.  ") == ["One.", "Two."]


def test_text_without_terminator_is_one_sentence() -> None:
    assert split_sentences("Module 3 covers paging and segmentation") == [
        "Module 3 covers paging and segmentation"
    ]


def test_result_is_a_fresh_list_each_call() -> None:
    first = split_sentences("One. Two.")
    first.append("mutated")
    assert split_sentences("One. Two.") == ["One.", "Two."]


@pytest.mark.parametrize(
    "text",
    [
        "This is 10 min. It is enough.",
        "A sentence. Another one! A third? Yes.",
        "The syllabus (revised) ends. Next.",
    ],
)
def test_joined_parts_cover_every_word(text: str) -> None:
    assert " ".join(split_sentences(text)).split() == text.split()


def test_abbreviations_are_lower_case_without_dots() -> None:
    assert all(a == a.lower() and not a.endswith(".") for a in ABBREVIATIONS)
    assert {"prof", "dr", "al", "etc", "fig", "vol", "ed", "pp", "no", "rs", "vs", "approx"} <= ABBREVIATIONS


@pytest.mark.parametrize(
    "text",
    [
        "prior art. It is old.",  # not abbreviations: these end sentences
        "Download the app. It is free.",
    ],
)
def test_common_words_are_not_abbreviations(text: str) -> None:
    assert len(split_sentences(text)) == 2


def test_speed_over_a_question_worth_of_chunks() -> None:
    """18 chunks of ~1000 characters in well under the 10 ms a question may spend here."""
    sentence = "Andrew S. Tanenbaum explains paging in Module 3 of the course, p. 45. It is prescribed. "
    chunks = [sentence * 11 + f"Chunk {i}." for i in range(18)]
    start = time.perf_counter()
    for chunk in chunks:
        assert split_sentences(chunk)
    assert time.perf_counter() - start < 0.05  # generous: shared CI machines


def test_fixes_where_the_older_splitters_cut_wrongly() -> None:
    """The chunker drops a closing quote and cuts "1." from its item; the extractive answerer's
    regex cuts after every initial. This splitter does neither."""
    assert split_sentences('He said "Stop." Then left.') == ['He said "Stop."', "Then left."]
    assert split_sentences("Outcomes\n1. First\n2. Second") == ["Outcomes", "1. First", "2. Second"]
    assert split_sentences("Read Andrew S. Tanenbaum. Then Kurose.") == [
        "Read Andrew S. Tanenbaum.",
        "Then Kurose.",
    ]
