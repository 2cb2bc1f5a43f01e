"""worker/query/question.py: chat noise removed, content and references kept and normalised."""

from __future__ import annotations

import dataclasses
import time

import pytest

from syllabot.worker.query.question import (
    QuestionRefs,
    clean_question,
    normalise_references,
    references,
    social_kind,
)

# ----------------------------------------------------------------------------------------------
# clean_question: whole questions as students type them
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("🤔 which module has paging?? 🙏", "which module has paging?"),
        (
            "hi, quick question please: which module covers paging? thanks a lot!!",
            "which module covers paging?",
        ),
        ("which module covers paging? <@123456789>", "which module covers paging?"),
        ("bro wat r the COs of CN pls", "what are the COs of CN"),
        ("hey guys, CO 4 of ADA?", "CO4 of ADA?"),
        ("mod 2 of os topics", "Module 2 of os topics"),
        ("Unit-II in AI", "Unit II in AI"),
        ("bro which module has deadlocks in OS??", "which module has deadlocks in OS?"),
        ("hey guys which module has peterson's solution", "which module has peterson's solution"),
        ("linux case study is in wich module", "linux case study is in which module"),
        (
            "<@123456789012345678> can u send the reference books list for operating systems",
            "can you send the reference books list for operating systems",
        ),
        ("wat is co 2 in cn", "what is CO2 in cn"),
        ("DNS and http which mod?? 🙏", "DNS and http which module?"),
        ("list all lab programs in CN bro", "list all lab programs in CN"),
        (
            "which simulator r we supposed to use for the cn lab",
            "which simulator are we supposed to use for the cn lab",
        ),
        (
            "bro how many credits is dbms this sem (22 scheme) 🙏",
            "how many credits is dbms this semester (22 scheme)",
        ),
        (
            "thanks in advance!! what all components r there in the dbms cie (21 scheme)",
            "what all components are there in the dbms cie (21 scheme)",
        ),
        ("when is quiz 1 for ai foundations?? 😭", "when is quiz 1 for ai foundations?"),
        ("what r the topics in 4th sem maths module 2", "what are the topics in 4th semester maths Module 2"),
        ("how many hrs for each module in os", "how many hours for each module in os"),
        ("wats the L:T:P:S for ADA bro", "what is the L:T:P:S for ADA"),
        (
            "routing algos n QoS r in which module of CN",
            "routing algorithms and QoS are in which module of CN",
        ),
        ("hey what days n times does this class meet?", "what days and times does this class meet?"),
        ("how do i book a meeting w the prof", "how do i book a meeting with the instructor"),
        (
            "acc to the stats slides waht r the params",
            "according to the stats slides what are the parameters",
        ),
        (
            "if i post a q on slack how long til the prof answers",
            "if i post a q on slack how long until the instructor answers",
        ),
        ("the journal qs, what were they", "the journal questions, what were they"),
        ("review papers are kinda like what section?", "review papers are like what section?"),
        ("what kinda distribution fits angles", "what kind of distribution fits angles"),
        (
            "the scraping lec was kinda mid but is scraping legal",
            "the scraping lecture was mid but is scraping legal",
        ),
        ("when is the mid", "when is the midterm"),
        # a lone letter that is a variable stays one
        ("when n is large which test", "when n is large which test"),
        ("what sample size n do we need", "what sample size n do we need"),
        ("what is w in the formula", "what is w in the formula"),
        ("Thank you! which module has DNS?", "which module has DNS?"),
        ("hello sir, good morning. which unit covers backprop? ty sir 😊", "which unit covers backprop?"),
        ("Hi there! Can anyone tell me what CO2 of OS is? tia", "what CO2 of OS is?"),
        ("sorry to bother you, which module has tcp? thank you so much!", "which module has tcp?"),
        ("i wanted to ask which module covers paging", "which module covers paging"),
        ("anyone know which module has paging?", "which module has paging?"),
        ("ok so which module has semaphores lol", "which module has semaphores"),
        ("Q: which unit has q-learning", "which unit has q-learning"),
        ("hii can someone tell me which module has blockchain", "which module has blockchain"),
        ("yo what's in module 3", "what's in Module 3"),
        ("good evening ma'am, syllabus for CN? thx", "syllabus for CN?"),
        ("heyyy everyone!!! which unit has CNNs", "which unit has CNNs"),
        ("can you please tell me the COs of OS", "the COs of OS"),
        ("plz which module has paging plz", "which module has paging"),
        ("which module has paging, kindly reply", "which module has paging, reply"),
        ("which module has DNS, thanks guys", "which module has DNS"),
        ("which module has DNS thank u", "which module has DNS"),
        ("umm which unit covers A* search?", "which unit covers A* search?"),
        ("doubt: is OS an IPCC course?", "is OS an IPCC course?"),
        ("WHICH MODULE 2 TOPICS PLS", "WHICH Module 2 TOPICS"),
        # "min" before what has a limit is a minimum (it had become "minutes marks"), else minutes
        (
            "min marks needed in see to pass os? out of 50",
            "minimum marks needed in see to pass os? out of 50",
        ),
        ("min. attendance for cn?", "minimum attendance for cn?"),
        ("max marks for cie", "maximum marks for cie"),
        ("can i come 10 min late to lab", "can i come 10 minutes late to lab"),
        # a unit's short form after a hyphen, never the first part ("mid-terms" stays)
        ("do we actually use the x-hrs or nah", "do we actually use the x-hours"),
        ("when r the mid-terms", "when are the mid-terms"),
    ],
)
def test_real_questions(raw: str, clean: str) -> None:
    assert clean_question(raw) == clean


# ----------------------------------------------------------------------------------------------
# Platform markup
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mention",
    [
        "<@123>",
        "<@123456789012345678>",
        "<@!123456789012345678>",
        "<#123456789012345678>",
        "<@&987654321098765432>",
        "@everyone",
        "@here",
        "<:pepega:123456789012345678>",
        "<a:partyparrot:123456789012345678>",
        "<@U024BE7LH>",
        "<@U024BE7LH|bob>",
        "<!channel>",
        "<!here>",
        "<!everyone>",
        "<#C024BE7LR|general>",
        "<#C024BE7LR>",
        ":wave:",
        ":pray::skin-tone-2:",
        ":+1:",
        ":)",
        ":-(",
        "xD",
        "<3",
    ],
)
@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_platform_markup_and_emoji_codes_are_dropped(mention: str, where: str) -> None:
    question = {
        "start": f"{mention} which module covers paging?",
        "middle": f"which module {mention} covers paging?",
        "end": f"which module covers paging? {mention}",
    }[where]
    assert clean_question(question) == "which module covers paging?"


def test_leading_handle_typed_by_hand_is_dropped() -> None:
    assert clean_question("@Syllabot which module has DNS") == "which module has DNS"
    assert clean_question("@syllabot, which module has DNS") == "which module has DNS"


def test_slack_links_keep_their_label_or_address() -> None:
    assert clean_question("see <https://vtu.ac.in/syllabus|syllabus> module 3?") == "see syllabus Module 3?"
    assert clean_question("is <https://vtu.ac.in/x> official?") == "is https://vtu.ac.in/x official?"


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("`fork()` returns what in module 2?", "fork() returns what in Module 2?"),
        ("what does ```x = y++``` do", "what does x = y++ do"),
        ("**which** module has ~~paging~~ segmentation", "which module has paging segmentation"),
        ("what does 2**3 give in python?", "what does 2**3 give in python?"),
        ("is a || b short circuit in C", "is a || b short circuit in C"),
        ("> which module has paging", "which module has paging"),
    ],
)
def test_text_markup_is_removed_code_is_kept(raw: str, clean: str) -> None:
    assert clean_question(raw) == clean


# ----------------------------------------------------------------------------------------------
# Emoji and scripts
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "emoji",
    ["🙏", "😭", "🤔", "👍🏽", "👨‍💻", "🇮🇳", "1️⃣", "❤️", "⭐", "✅", "🔥🔥🔥", "☺️", "🏳️‍🌈", "✌🏾"],
)
def test_unicode_emoji_and_their_joiners_are_dropped(emoji: str) -> None:
    cleaned = clean_question(f"which module {emoji} covers paging {emoji}")
    assert cleaned == "which module covers paging"
    assert "\u200d" not in cleaned and "\ufe0f" not in cleaned


def test_emoji_question_mark_becomes_a_question_mark() -> None:
    assert clean_question("which module ❓") == "which module?"
    assert clean_question("which module ⁉️") == "which module?"


@pytest.mark.parametrize(
    "question",
    [
        "রিটার্ন করতে কত দিন সময় পাই?",
        "অপারেটিং সিস্টেমের মডিউল ৩ এ কী আছে?",
        "ডেলিভারি ফি কত টাকা?",
        "पेजिंग किस मॉड्यूल में है?",
        "Что такое пейджинг?",
        "ページングはどのモジュールですか?",
    ],
)
def test_letters_of_every_script_survive(question: str) -> None:
    assert clean_question(question) == question


def test_bangla_question_with_emoji_and_thanks_keeps_its_words() -> None:
    assert clean_question("🙏 রিটার্ন করতে কত দিন সময় পাই?? ধন্যবাদ") == "রিটার্ন করতে কত দিন সময় পাই?"


def test_bangla_zero_width_joiner_inside_words_is_kept() -> None:
    word = "র\u200d্যাব"  # ZWJ is part of Bangla spelling, only removed inside emoji sequences
    assert clean_question(f"{word} কী?") == f"{word} কী?"


# ----------------------------------------------------------------------------------------------
# Filler at the edges, content in the middle
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "lead",
    [
        "hi",
        "hii",
        "hello",
        "hey",
        "heyy",
        "hey guys",
        "hi all",
        "hello everyone",
        "bro",
        "sir",
        "ma'am",
        "ma’am",
        "yo",
        "quick question",
        "a quick question",
        "small doubt",
        "please",
        "pls",
        "plz",
        "anyone know",
        "does anyone know",
        "can someone tell me",
        "can anyone tell",
        "can anyone tell me",
        "could someone please tell me",
        "can you tell me",
        "i wanted to ask",
        "just wanted to ask",
        "i have a doubt",
        "sorry to bother",
        "sorry to bother you",
        "lol",
        "guys",
        "folks",
        "good morning",
        "excuse me",
        "thanks in advance",
    ],
)
@pytest.mark.parametrize("sep", [" ", ", ", "! ", ": ", " - "])
def test_leading_filler_is_dropped(lead: str, sep: str) -> None:
    assert clean_question(f"{lead}{sep}which module covers paging?") == "which module covers paging?"


@pytest.mark.parametrize(
    "trail",
    [
        "thanks",
        "thank you",
        "thanks a lot",
        "thanks so much",
        "thank you so much",
        "thanks in advance",
        "thx",
        "ty",
        "tysm",
        "tia",
        "pls",
        "plz",
        "please",
        "bro",
        "sir",
        "ma'am",
        "guys",
        "folks",
        "lol",
        "cheers",
        "anyone",
        "ধন্যবাদ",
    ],
)
@pytest.mark.parametrize("sep", [" ", "? ", ", ", "?? ", "! "])
def test_trailing_filler_is_dropped_and_the_question_mark_kept(trail: str, sep: str) -> None:
    cleaned = clean_question(f"which module covers paging{sep}{trail}!!")
    expected = "which module covers paging?" if "?" in sep else "which module covers paging"
    assert cleaned == expected


@pytest.mark.parametrize(
    "question",
    [
        "which module covers the history of the internet",  # "hi" inside words
        "which unit covers hill climbing",
        "who is the hod of cse",
        "what is the yolo algorithm",
        "which module covers thread synchronisation",
        "is thrashing in the syllabus",
        "which module covers quick sort",
        "all COs of computer networks",  # "all" is content when no greeting precedes it
        "question papers for OS",  # "question" is content unless followed by ":"
        "Q-learning is in which unit?",
        "how do I say hello world in Python?",
        "what is the sir epidemic model",
        "explain the typhoon algorithm",
        "everyone has to attend the lab?",
        "sup of a bounded set",
        "team projects in which module",
    ],
)
def test_content_words_that_look_like_filler_are_kept(question: str) -> None:
    assert clean_question(question) == question


def test_please_in_the_middle_is_dropped() -> None:
    assert (
        clean_question("can you please tell which module has paging")
        == "can you tell which module has paging"
    )


def test_repeated_filler_is_peeled_in_any_order() -> None:
    raw = "hey guys, sorry to bother, quick question pls: lol which module has paging? thanks bro 🙏🙏"
    assert clean_question(raw) == "which module has paging?"


@pytest.mark.parametrize(
    "raw",
    ["thanks!", "thank you", "hi", "🙏", "<@123456789>", "hey guys!!", "pls", "lol", ":wave:", "ty sir"],
)
def test_only_filler_returns_the_original_stripped(raw: str) -> None:
    assert clean_question(f"  {raw} \n") == raw


@pytest.mark.parametrize("raw", ["", "   ", "\n\t"])
def test_empty_stays_empty(raw: str) -> None:
    assert clean_question(raw) == ""


# ----------------------------------------------------------------------------------------------
# Chat words
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("wat is paging", "what is paging"),
        ("wht is paging", "what is paging"),
        ("Wat is paging", "What is paging"),
        ("whats the syllabus", "what is the syllabus"),
        ("wich unit has CNNs", "which unit has CNNs"),
        ("tell me abt paging", "tell me about paging"),
        ("wat r the COs", "what are the COs"),
        ("ER diagrams r in which module", "ER diagrams are in which module"),
        ("can u send the syllabus", "can you send the syllabus"),
        ("can u explain the COs", "can you explain the COs"),
        ("what is ur syllabus", "what is your syllabus"),
        ("greedy algos in which unit", "greedy algorithms in which unit"),
        ("which mod has DNS", "which module has DNS"),
        ("transaction processing is which mod in dbms", "transaction processing is which module in dbms"),
    ],
)
def test_chat_words_are_expanded(raw: str, clean: str) -> None:
    assert clean_question(raw) == clean


@pytest.mark.parametrize(
    "question",
    [
        "which unit covers R programming",
        "which unit covers r programming",
        "packages in r and python",
        "is R used in the data science lab",
        "what is r in the formula",  # a variable after "is"/"the"
        "edge u and v in a graph",
        "vertices u v in BFS",
        "what is SEM in research methods",
        "what does UR stand for",
        "what is 5 mod 2 in python",
        "a mod b in C",
        "r",
        "u",
    ],
)
def test_chat_words_that_are_content_are_kept(question: str) -> None:
    cleaned = clean_question(question)
    assert " are " not in f" {cleaned} " or " are " in f" {question} "
    assert " you " not in f" {cleaned} " or " you " in f" {question} "
    assert "module" not in cleaned.lower() or "module" in question.lower()
    assert "semester" not in cleaned.lower()
    assert "your" not in cleaned.lower()


def test_slang_is_whole_word_only() -> None:
    assert clean_question("what is a watchdog timer") == "what is a watchdog timer"
    assert clean_question("which unit covers routers") == "which unit covers routers"
    assert clean_question("explain the urn model and semaphores") == "explain the urn model and semaphores"


# ----------------------------------------------------------------------------------------------
# Punctuation and whitespace
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("which module has paging??", "which module has paging?"),
        ("which module has paging???!!", "which module has paging?"),
        ("which module has paging?!", "which module has paging?"),
        ("which module has paging !!", "which module has paging"),
        ("which module has paging ?", "which module has paging?"),
        ("which unit covers CNN... and RNN???", "which unit covers CNN and RNN?"),
        ("which unit covers CNN…", "which unit covers CNN"),
        ("which   module\n\thas    paging", "which module has paging"),
        ("is it 3.5 credits??!", "is it 3.5 credits?"),
        ("pages 1..5 of the notes", "pages 1..5 of the notes"),
        ("which module,, has paging", "which module, has paging"),
        ("which module？", "which module?"),
        ("which module has paging!", "which module has paging"),
        ("what is n!", "what is n!"),
        ("what is 5!", "what is 5!"),
    ],
)
def test_punctuation_is_collapsed(raw: str, clean: str) -> None:
    assert clean_question(raw) == clean


@pytest.mark.parametrize(
    "question",
    [
        "what does fork() return in 21CS44?",
        "what is the L:T:P:S of BCS403?",
        "is x != y allowed in C?",
        "what does std::vector<int> do?",
        "explain O(n log n) sorting",
        "what is 10^9 + 7 used for?",
        "is CIE 50% of the marks?",
        "what is the IP 192.168.1.1 class?",
        "what is a C++ template?",
        "what does __init__ do in python?",
        ".NET framework is in which unit?",
        "-1 index in python means what?",
    ],
)
def test_code_like_tokens_and_numbers_are_kept(question: str) -> None:
    assert clean_question(question) == question


# ----------------------------------------------------------------------------------------------
# normalise_references
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "norm"),
    [
        ("CO3", "CO3"),
        ("CO 3", "CO3"),
        ("CO-3", "CO3"),
        ("co.3", "CO3"),
        ("c.o. 3", "CO3"),
        ("c.o.3", "CO3"),
        ("CO3.", "CO3"),
        ("co3", "CO3"),
        ("Co 12", "CO12"),
        ("PO 2", "PO2"),
        ("po-11", "PO11"),
        ("PSO 1", "PSO1"),
        ("CLO 1", "CLO1"),
        ("clo-4", "CLO4"),
        ("CO3.1", "CO3.1"),
        ("co 1-3", "CO1, CO2 and CO3"),
        ("CO1 to CO3", "CO1, CO2 and CO3"),
        ("CO 3 and 4", "CO3 and CO4"),
        ("c.o. 3 and co-4", "CO3 and CO4"),
        ("CO1, CO2 & CO5", "CO1, CO2 and CO5"),
        ("CO2 or CO4", "CO2 or CO4"),
        ("COs 1, 2 and 5", "CO1, CO2 and CO5"),
        ("CO's 1-2", "CO1 and CO2"),
        ("POs 1 and 3", "PO1 and PO3"),
    ],
)
def test_outcomes_are_normalised(raw: str, norm: str) -> None:
    assert normalise_references(f"what is {raw} of OS") == f"what is {norm} of OS"


@pytest.mark.parametrize(
    ("raw", "norm"),
    [
        ("Module 2", "Module 2"),
        ("module 2", "Module 2"),
        ("module-2", "Module 2"),
        ("MODULE 2", "Module 2"),
        ("Module – 2", "Module 2"),
        ("module: 2", "Module 2"),
        ("module no. 2", "Module 2"),
        ("module number 2", "Module 2"),
        ("Mod 2", "Module 2"),
        ("mod2", "Module 2"),
        ("mod-2", "Module 2"),
        ("M2", "Module 2"),
        ("m2", "Module 2"),
        ("module II", "Module 2"),
        ("MODULE-ii", "Module 2"),
        ("module iv", "Module 4"),
        ("module V", "Module 5"),
        ("Module 10", "Module 10"),
        ("module 2 and 3", "Module 2 and Module 3"),
        ("modules 2 and 3", "Module 2 and Module 3"),
        ("modules 1-3", "Module 1, Module 2 and Module 3"),
        ("module 1 to module 3", "Module 1, Module 2 and Module 3"),
        ("mod 4 or 5", "Module 4 or Module 5"),
        ("M1 and M2", "Module 1 and Module 2"),
        ("module I and II", "Module 1 and Module 2"),
        ("1st module", "Module 1"),
        ("first module", "Module 1"),
        ("2nd mod", "Module 2"),
        ("fifth module", "Module 5"),
        ("module one", "Module 1"),
        ("Unit 2", "Unit II"),
        ("unit-2", "Unit II"),
        ("Unit – II", "Unit II"),
        ("unit ii", "Unit II"),
        ("UNIT III", "Unit III"),
        ("unit 4", "Unit IV"),
        ("unit 9", "Unit IX"),
        ("unit V", "Unit V"),
        ("unit 1 & 2", "Unit I and Unit II"),
        ("units 3-5", "Unit III, Unit IV and Unit V"),
        ("second unit", "Unit II"),
        ("3rd unit", "Unit III"),
        ("unit two", "Unit II"),
        ("ch 3", "Chapter 3"),
        ("ch. 3", "Chapter 3"),
        ("ch3", "Chapter 3"),
        ("chapter 3", "Chapter 3"),
        ("Chapter-12", "Chapter 12"),
        ("chapter iv", "Chapter IV"),
        ("third chapter", "Chapter 3"),
    ],
)
def test_modules_units_chapters_are_normalised(raw: str, norm: str) -> None:
    assert normalise_references(f"topics in {raw} of OS") == f"topics in {norm} of OS"


@pytest.mark.parametrize(
    "text",
    [
        "M2M protocols",
        "the M25 motorway",
        "M2.5 grade steel",
        "an area of 5 m2 is enough",
        "8) which module",
        "what is 5 mod 2",
        "compute x mod 3",
        "(a+b) mod 7 in C",
        "which unit i should study first",
        "which module I need for the lab",
        "which module i'm weak in",
        "submodule 2 of the parser",
        "what is cos 30",
        "the co-ordinator",
        "co-operative scheduling",
        "co 2020 batch",
        "CO1-2020 mapping",
        "module 2.1 topics",
        "unit testing",
        "chapter summary",
        "the 4th sem timetable",
        "5th Edition of the book",
        "BCS403 and 21CS44",
        "html5 and css3",
    ],
)
def test_non_references_are_left_alone(text: str) -> None:
    assert normalise_references(text) == text


def test_quantities_after_a_reference_are_not_more_references() -> None:
    assert normalise_references("module 2, 10 marks questions") == "Module 2, 10 marks questions"
    assert normalise_references("CO3 and 4 hours") == "CO3 and 4 hours"


def test_later_numbers_are_written_like_the_first() -> None:
    assert normalise_references("module 2, x is the variable") == "Module 2, x is the variable"
    assert normalise_references("unit iv and v") == "Unit IV and Unit V"
    assert normalise_references("module 2 and i think 3") == "Module 2 and i think 3"


def test_a_lone_numeral_one_is_read_at_the_end_of_a_question() -> None:
    assert normalise_references("topics in unit i?") == "topics in Unit I?"
    assert normalise_references("what is in module I") == "what is in Module 1"


def test_normalisation_is_idempotent() -> None:
    text = "CO1, CO2 and CO3 of Module 2 and Unit II, Chapter 4"
    assert normalise_references(text) == text
    once = normalise_references("co 1-3 of mod 2 and unit-2, ch 4")
    assert once == text
    assert normalise_references(once) == once


# ----------------------------------------------------------------------------------------------
# references
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "cos", "modules"),
    [
        ("CO3 and CO4", (3, 4), ()),
        ("co 1-3", (1, 2, 3), ()),
        ("CO4 and CO3 and co 3", (3, 4), ()),
        ("what is c.o. 5 of OS", (5,), ()),
        ("COs 1, 2 and 5", (1, 2, 5), ()),
        ("CO1 to CO3", (1, 2, 3), ()),
        ("PO 2 and PSO 1", (), ()),
        ("mod 2 of os topics", (), ("Module 2",)),
        ("Unit-II in AI", (), ("Unit II",)),
        ("module 2 and 3", (), ("Module 2", "Module 3")),
        ("unit 3, module 2 and ch 4", (), ("Unit III", "Module 2", "Chapter 4")),
        ("M2 topics and module 2", (), ("Module 2",)),
        ("which CO is mapped to module 4", (), ("Module 4",)),
        ("CO2 of module iii", (2,), ("Module 3",)),
        ("all COs of CN", (), ()),
        ("which module has paging", (), ()),
        ("", (), ()),
    ],
)
def test_references(text: str, cos: tuple[int, ...], modules: tuple[str, ...]) -> None:
    assert references(text) == QuestionRefs(cos=cos, modules=modules)


def test_references_of_a_cleaned_question() -> None:
    refs = references(clean_question("hey guys, CO 4 of ADA? which mod has it 🙏"))
    assert refs.cos == (4,)
    assert refs.modules == ()
    assert references(clean_question("bro topics in 2nd module n unit-3 pls")).modules == (
        "Module 2",
        "Unit III",
    )


def test_question_refs_is_frozen_with_empty_defaults() -> None:
    refs = QuestionRefs()
    assert refs.cos == () and refs.modules == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        refs.cos = (1,)  # type: ignore[misc]


@pytest.mark.parametrize(
    "text",
    [
        "hi " * 1500 + "which module",
        "thanks " * 1500,
        "module 2, " * 1000 + "x",
        "co 1 and " * 1000,
        "?!" * 3000,
        "a " * 5000 + "thanks",
        "<@" * 3000,
        ":a:" * 2000,
    ],
)
def test_long_or_adversarial_input_stays_fast(text: str) -> None:
    start = time.perf_counter()
    cleaned = clean_question(text)
    references(text)
    assert cleaned
    assert time.perf_counter() - start < 1.0  # no quadratic peeling, no regex blow-up


@pytest.mark.parametrize(
    ("typed", "cleaned"),
    [
        ("late hw accepted or nah", "late homework accepted"),
        ("how often do we get hw", "how often do we get homework"),
        ("where is prof fox's office", "where is instructor fox's office"),
        (
            "r we allowed to use chatgpt on the lab reports",
            "Are we allowed to use chatgpt on the lab reports",
        ),
        ("can i do it w/o a partner lol", "can i do it without a partner"),
        ("do we need the prereqs b4 the mid?", "do we need the prerequisites before the midterm?"),
        ("which lec covers spark tbh", "which lecture covers spark"),
        ("whr do we submit hw1", "where do we submit homework 1"),
        ("can i submit l8r if i hv a doctor's note", "can i submit later if i have a doctor's note"),
        ("is there a textbook reqd or any xtra credit", "is there a textbook required or any extra credit"),
        ("wen is the exm, shd i bring a calculator", "when is the exam, should i bring a calculator"),
        ("do i rly need to bring my laptop every day", "do i really need to bring my laptop every day"),
        ("sry dumb q but what does data wrangling mean", "what does data wrangling mean"),
    ],
)
def test_chat_words_of_any_class(typed: str, cleaned: str) -> None:
    assert clean_question(typed) == cleaned


def test_chat_words_leave_code_and_acronyms_alone() -> None:
    assert clean_question("what is a TA in R") == "what is a TA in R"
    assert clean_question("is u v an edge") == "is u v an edge"


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("hi", "greeting"),
        ("hey guys", "greeting"),
        ("good morning!", "greeting"),
        ("thanks!", "thanks"),
        ("ty 🙏", "thanks"),
        ("Thank you so much!!", "thanks"),
        ("hi, when is the exam?", None),
        ("thanks, and what about the late policy?", None),
        ("history of hiphop", None),
        ("typhoon", None),
    ],
)
def test_a_message_that_only_greets_or_thanks_is_told_apart(message: str, kind: str | None) -> None:
    assert social_kind(message) == kind
