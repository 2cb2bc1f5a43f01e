"""Rendering answers for Discord: limits, the not-in-materials marker, citations, escaping."""

from __future__ import annotations

import re

import discord
import pytest

from syllabot.bots import discord_render as r
from syllabot.shared.schema import (
    NOT_IN_MATERIALS,
    UNCERTAIN_LEAD,
    Answer,
    Citation,
    FileReport,
    IngestReport,
    SourceInfo,
)


def _citation(n: int, **kw) -> Citation:
    base = dict(
        n=n,
        doc_id=f"d{n}",
        file=f"os-notes-{n}.pdf",
        title="Operating Systems notes",
        subject="21CS44 Operating Systems",
        module="2",
        page=n + 3,
        score=0.5,
        snippet="…",
        label="",
    )
    base.update(kw)
    return Citation(**base)


def _answer(text: str, **kw) -> Answer:
    base = dict(text=text, in_materials=True, collection="os-2026", question="What is a semaphore?")
    base.update(kw)
    return Answer(**base)


def _check_limits(messages: list[r.Rendered]) -> None:
    for m in messages:
        assert len(m.embeds) <= r.EMBEDS_PER_MESSAGE
        assert m.total_embed_chars() <= r.EMBED_TOTAL_MAX
        assert m.content is None or len(m.content) <= r.CONTENT_MAX
        for e in m.embeds:
            assert len(e.description or "") <= r.DESCRIPTION_MAX
            assert len(e.title or "") <= r.TITLE_MAX
            assert len(e.fields) <= r.FIELDS_PER_EMBED
            for f in e.fields:
                assert len(f.name) <= r.FIELD_NAME_MAX
                assert len(f.value) <= r.FIELD_VALUE_MAX


# --- neutralise ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("raw", "bad"),
    [
        ("Hello @everyone and @here!", ["@everyone", "@here"]),
        ("ping <@123456789012345678> now", ["<@123456789012345678>"]),
        ("nick <@!123456789012345678>", ["<@!123456789012345678>"]),
        ("role <@&987654321098765432>", ["<@&987654321098765432>"]),
        ("channel <#111111111111111111>", ["<#111111111111111111>"]),
        ("shouting @EVERYONE", ["@EVERYONE"]),
    ],
)
def test_neutralise_breaks_mentions(raw: str, bad: list[str]) -> None:
    out = r.neutralise(raw)
    for b in bad:
        assert b not in out
    assert out.replace(r.ZWSP, "") == raw  # still readable: only zero-width spaces were added


def test_neutralise_escapes_masked_links_but_keeps_the_url_visible() -> None:
    out = r.neutralise("See [the syllabus](https://evil.example/login) for details.")
    assert "[the syllabus](" not in out
    assert "https://evil.example/login" in out


# A model of how Discord reads markdown, for the two rules that matter here. Discord's parser is built
# on simple-markdown: ``escape`` turns a backslash plus any character that is not a letter, digit or
# space into that character, and ``link`` is simple-markdown's masked-link rule, copied from its source
# (nested brackets in the text; parentheses, ``<url>`` and a quoted title in the target).
_MD_ESCAPE = re.compile(r"\\([^0-9A-Za-z\s])")
_MD_LINK_INSIDE = r"(?:\[[^\]]*\]|[^\[\]]|\](?=[^\[]*\]))*"
_MD_HREF_AND_TITLE = r"""\s*<?((?:\([^)]*\)|[^\s\\]|\\.)*?)>?(?:\s+['"]([\s\S]*?)['"])?\s*"""
_MD_LINK = re.compile(r"\[(" + _MD_LINK_INSIDE + r")\]\(" + _MD_HREF_AND_TITLE + r"\)")


def masked_links(markdown: str) -> list[str]:
    """The masked links Discord would render in ``markdown``: scanned left to right, escape pairs
    consumed as units, a link tried wherever an unescaped ``[`` starts."""
    found, i = [], 0
    while i < len(markdown):
        if _MD_ESCAPE.match(markdown, i):
            i += 2
            continue
        if markdown[i] == "[" and (m := _MD_LINK.match(markdown, i)):
            found.append(m.group(0))
            i = m.end()
            continue
        i += 1
    return found


def displayed(markdown: str) -> str:
    """The text a reader sees once Discord has applied the escapes."""
    return _MD_ESCAPE.sub(r"\1", markdown)


PHISHING = [
    "[Click](https://evil.example/a_(b))",
    "[portal]( https://evil.example )",
    '[portal](https://evil.example "Official")',
    "[[portal]](https://evil.example)",
    "[portal](<https://evil.example>)",
    "See [the syllabus](https://evil.example/login) for details.",
]


@pytest.mark.parametrize("raw", PHISHING)
def test_neutralise_leaves_no_masked_link_of_any_shape(raw: str) -> None:
    assert masked_links(raw), "the model must see the link in the raw text"
    out = r.neutralise(raw)
    assert masked_links(out) == []
    assert displayed(out) == raw  # the reader sees exactly what the document says, URL included
    [msg] = r.render_answer(_answer(f"Log in here: {raw}"))
    assert masked_links(msg.embeds[0].description) == []


def test_neutralise_keeps_an_escaped_backslash_from_reopening_a_link() -> None:
    raw = "C:\\\\[portal](https://evil.example)"  # an escaped backslash, then a live link
    assert masked_links(raw)
    out = r.neutralise(raw)
    assert masked_links(out) == []
    assert "https://evil.example" in displayed(out)
    already = "\\[portal\\](https://evil.example)"  # already escaped: left as it is
    assert r.neutralise(already) == already


def test_citation_markers_still_read_as_brackets() -> None:
    text = "A semaphore is an integer variable [1] accessed through wait and signal [1][2]."
    [msg] = r.render_answer(_answer(text, citations=[_citation(1), _citation(2)]))
    description = msg.embeds[0].description
    assert "\\[1\\]" in description and "\\[1\\]\\[2\\]" in description
    assert displayed(description) == text
    assert masked_links(description) == []


def test_a_hard_split_never_separates_a_backslash_from_its_bracket() -> None:
    raw = "x" * 99 + "[Click](https://evil.example)"  # no space or sentence end to cut at
    out = r.neutralise(raw)
    assert out[99:101] == "\\["  # a cut at 100 would fall inside the escape pair
    parts = r.split_text(out, 100)
    assert len(parts) == 2 and all(masked_links(p) == [] for p in parts)
    assert displayed("".join(parts)) == raw
    [msg] = r.render_answer(_answer(raw), per_embed=100)
    assert all(masked_links(e.description or "") == [] for e in msg.embeds)


def test_plain_escapes_markdown_in_file_names() -> None:
    assert r.plain("my_notes*v2*.pdf") == r"my\_notes\*v2\*.pdf"


# --- splitting -----------------------------------------------------------------------------------
def test_split_prefers_paragraphs_then_sentences() -> None:
    para1 = "First paragraph. " * 10
    para2 = "Second paragraph. " * 10
    parts = r.split_text(f"{para1.strip()}\n\n{para2.strip()}", 200)
    assert parts == [para1.strip(), para2.strip()]

    sentences = " ".join(f"Sentence number {i} ends here." for i in range(30))
    parts = r.split_text(sentences, 120)
    assert all(len(p) <= 120 for p in parts)
    assert all(p.endswith(".") for p in parts)
    assert " ".join(parts) == sentences


def test_split_falls_back_to_spaces_then_hard_cuts() -> None:
    words = "word " * 100
    parts = r.split_text(words, 53)
    assert all(len(p) <= 53 and not p.startswith(" ") for p in parts)
    assert " ".join(parts) == words.strip()
    blob = "x" * 250
    assert r.split_text(blob, 100) == ["x" * 100, "x" * 100, "x" * 50]


# --- answers -------------------------------------------------------------------------------------
def test_answer_in_materials_has_numbered_citations_and_collection_footer() -> None:
    answer = _answer(
        "A semaphore is an integer variable accessed through wait and signal [1][2].",
        citations=[
            _citation(1, label="21CS44 Operating Systems — Module 2, p. 4"),
            _citation(2, module="3", page=7, page_end=8),
        ],
    )
    [msg] = r.render_answer(answer)
    _check_limits([msg])
    [embed] = msg.embeds
    assert embed.colour == r.COLOUR_ANSWERED
    assert embed.title == "What is a semaphore?"
    assert embed.description.startswith("A semaphore")
    sources = embed.fields[0]
    assert sources.name == "Sources"
    lines = sources.value.split("\n")
    assert lines[0] == "**1.** 21CS44 Operating Systems — Module 2, p. 4 (os-notes-1.pdf)"
    assert lines[1] == "**2.** 21CS44 Operating Systems — Module 3, pp. 7–8 (os-notes-2.pdf)"
    assert embed.footer.text == "Collection: os-2026"


def test_not_in_materials_marker_first_line_own_colour_and_general_knowledge_labelled() -> None:
    answer = _answer(
        "The closest material is about fees.",
        in_materials=False,
        question="Can I pay in instalments?",
        general_knowledge="many colleges allow it.",
    )
    [msg] = r.render_answer(answer)
    _check_limits([msg])
    first = msg.embeds[0]
    assert first.colour == r.COLOUR_NOT_IN_MATERIALS != r.COLOUR_ANSWERED
    assert first.description.split("\n")[0] == f"**{NOT_IN_MATERIALS}**"
    assert first.description.count(NOT_IN_MATERIALS) == 1  # the heading, from the status
    assert "closest material" in first.description
    assert first.author.name == "You asked: Can I pay in instalments?"
    gk = msg.embeds[1]
    assert gk.title == r.GENERAL_KNOWLEDGE_TITLE
    assert gk.colour == r.COLOUR_GENERAL
    assert gk.description == "many colleges allow it."
    assert msg.embeds[-1].footer.text == "Collection: os-2026"


#: What a worker sends for an uncertain answer: the closest passages alone (no lead).
UNCERTAIN_TEXT = "Semaphores are covered with monitors [1]. Reminder for @everyone [2]."


def test_uncertain_has_its_own_colour_heading_and_passages_field() -> None:
    answer = _answer(
        UNCERTAIN_TEXT,
        status="uncertain",
        in_materials=None,  # derived from the status
        question="Is the semaphore quiz open book?",
        citations=[_citation(1), _citation(2)],
    )
    assert not answer.in_materials
    [msg] = r.render_answer(answer)
    _check_limits([msg])
    [embed] = msg.embeds
    colours = {r.COLOUR_ANSWERED, r.COLOUR_NOT_IN_MATERIALS}
    assert embed.colour == r.COLOUR_UNCERTAIN and embed.colour not in colours
    lines = embed.description.split("\n")
    assert lines[0] == f"**{r.UNCERTAIN_HEADING}**"
    assert r.UNCERTAIN_HEADING == "I can't tell whether your materials answer this — closest passages:"
    assert embed.description.count(UNCERTAIN_LEAD) == 1  # the heading, from the status
    assert "The closest passages:" not in embed.description
    assert lines[2].startswith("Semaphores are covered with monitors \\[1\\].")
    assert "@everyone" not in embed.description  # still neutralised
    assert NOT_IN_MATERIALS not in embed.description
    assert embed.title is None and embed.author.name == "You asked: Is the semaphore quiz open book?"
    [field] = embed.fields
    assert field.name == "Closest passages (may not answer it)"
    assert field.value.startswith("**1.** ")
    assert embed.footer.text == "Collection: os-2026"


def test_each_status_looks_different() -> None:
    looks = {}
    for status, text in (
        ("answered", "Semaphores [1]."),
        ("uncertain", UNCERTAIN_TEXT),
        ("not_in_materials", "Closest: semaphores [1]."),
    ):
        [msg] = r.render_answer(_answer(text, status=status, in_materials=None, citations=[_citation(1)]))
        embed = msg.embeds[0]
        first_line = embed.description.split("\n")[0]
        looks[status] = (embed.colour, first_line, embed.fields[0].name)
    assert len({colour for colour, _, _ in looks.values()}) == 3
    assert looks["not_in_materials"][1] == f"**{NOT_IN_MATERIALS}**"
    assert looks["uncertain"][1] == f"**{r.UNCERTAIN_HEADING}**"
    assert looks["answered"][1] == "Semaphores \\[1\\]."
    assert looks["uncertain"][2] != looks["answered"][2] == "Sources"


def test_the_status_decides_not_the_text() -> None:
    # An uncertain answer gets the heading from its status, and its text is whole.
    [msg] = r.render_answer(_answer("Semaphores are covered [1].", status="uncertain", in_materials=None))
    description = msg.embeds[0].description
    assert description.split("\n")[0] == f"**{r.UNCERTAIN_HEADING}**"
    assert description.endswith("Semaphores are covered \\[1\\].")
    # A not-in answer starts with the marker, which the worker does not write.
    [msg] = r.render_answer(_answer("Nothing matches.", status="not_in_materials", in_materials=None))
    assert msg.embeds[0].description == f"**{NOT_IN_MATERIALS}**\n\nNothing matches."
    # Lead-like words in an answered text change nothing.
    [msg] = r.render_answer(_answer(f"{UNCERTAIN_LEAD}? Yes: semaphores [1].", status="answered"))
    assert msg.embeds[0].colour == r.COLOUR_ANSWERED
    assert msg.embeds[0].description.startswith(UNCERTAIN_LEAD)


def test_answer_text_from_documents_is_neutralised() -> None:
    answer = _answer(
        "Reminder for @everyone: ask <@&42424242424242> or [click](https://x.example).",
        citations=[_citation(1, label="Notes @here — Module 1, p. 1", file="<@1234567890>.pdf")],
        question="who? @here",
    )
    [msg] = r.render_answer(answer)
    text = str([e.to_dict() for e in msg.embeds])
    for bad in ("@everyone", "@here", "<@&42424242424242>", "<@1234567890>", "[click]("):
        assert bad not in text


def test_long_answer_is_split_within_every_limit_and_nothing_is_lost() -> None:
    paragraphs = [f"Paragraph {i}. " + ("This sentence explains scheduling. " * 40) for i in range(12)]
    text = "\n\n".join(p.strip() for p in paragraphs)
    answer = _answer(text, citations=[_citation(i) for i in range(1, 40)], general_knowledge="x " * 3000)
    messages = r.render_answer(answer)
    _check_limits(messages)
    assert len(messages) >= 2
    all_embeds = [e for m in messages for e in m.embeds]
    body = "\n\n".join(e.description for e in all_embeds if e.colour == r.COLOUR_ANSWERED and e.description)
    assert body.replace("\n", "").replace(" ", "") == text.replace("\n", "").replace(" ", "")
    sources = "\n".join(f.value for e in all_embeds for f in e.fields)
    assert all(f"**{i}.**" in sources for i in range(1, 40))
    assert all_embeds[-1].footer.text == "Collection: os-2026"
    assert all_embeds[0].title == "What is a semaphore?"


def test_many_long_embeds_respect_ten_per_message() -> None:
    embeds = [discord.Embed(description="y" * 100) for _ in range(23)]
    messages = r.pack_messages(embeds)
    assert [len(m.embeds) for m in messages] == [10, 10, 3]


def test_splitting_with_small_embeds_keeps_order() -> None:
    text = "\n\n".join(f"Part {i} of the answer." for i in range(10))
    [msg] = r.render_answer(_answer(text), per_embed=50)
    assert [e.description for e in msg.embeds][:2] == [
        "Part 0 of the answer.\n\nPart 1 of the answer.",
        "Part 2 of the answer.\n\nPart 3 of the answer.",
    ]
    assert msg.embeds[0].title and not msg.embeds[1].title


# --- sources, reports, notices -------------------------------------------------------------------
def test_render_sources_lists_name_pages_chunks_and_time() -> None:
    sources = [
        SourceInfo(
            doc_id="a",
            file="b_notes.pdf",
            title="B notes",
            pages=12,
            chunks=40,
            indexed_at="2026-01-02T03:04:05Z",
        ),
        SourceInfo(doc_id="b", file="a.md", title="a.md", pages=1, chunks=1, indexed_at="yesterday"),
    ]
    [msg] = r.render_sources("os-2026", sources)
    embed = msg.embeds[0]
    assert embed.title == "2 documents in “os-2026”"
    assert embed.description.index("a.md") < embed.description.index(r"b\_notes.pdf")
    assert "12 pages · 40 chunks · indexed <t:1767323045:f>" in embed.description
    assert "1 page · 1 chunk · indexed yesterday" in embed.description


def test_render_sources_empty_and_huge() -> None:
    [empty] = r.render_sources("x", [])
    assert "No documents" in empty.embeds[0].title
    many = [
        SourceInfo(doc_id=str(i), file=f"file-{i:04d}.pdf", title="T" * 200, pages=3, chunks=9, indexed_at="")
        for i in range(300)
    ]
    messages = r.render_sources("x", many)
    _check_limits(messages)
    text = "".join(e.description for m in messages for e in m.embeds)
    assert all(f"file-{i:04d}.pdf" in text for i in range(300))


def test_render_ingest_report_summarises_pages_chunks_modules_and_warnings() -> None:
    report = IngestReport(
        collection="os-2026",
        files=[
            FileReport(
                file="scan.pdf", ok=True, pages=3, chunks=0, warnings=["no text layer: is this a scan?"]
            ),
            FileReport(
                file="notes.pdf",
                ok=True,
                pages=10,
                chunks=42,
                modules=["Module 1", "Module 2"],
                dropped={"page_labels": 10, "running_lines": 4},
            ),
            FileReport(file="bad.docx", ok=False, error="not a DOCX file"),
        ],
        index_version="v7",
        total_chunks=142,
        changed=True,
    )
    [msg] = r.render_ingest_report(report, action="Uploaded")
    _check_limits([msg])
    embed = msg.embeds[0]
    assert embed.colour == r.COLOUR_WARNING
    assert "**13** pages, **42** chunks from 2/3 file(s)" in embed.description
    assert "Modules found: Module 1, Module 2" in embed.description
    fields = {f.name: f.value for f in embed.fields}
    assert "no text layer: is this a scan?" in fields["⚠️ scan.pdf"]
    assert fields["❌ bad.docx"] == "❌ not a DOCX file"
    assert "42 chunks" in fields["✅ notes.pdf"]
    assert (
        "Left out of the index: 10 slide numbers, 4 header and footer lines repeated on most pages"
        in fields["✅ notes.pdf"]
    )


def test_progress_and_rate_limit_texts() -> None:
    assert (
        r.progress_text({"stage": "embedding", "done": 120, "total": 300}) == "⏳ Embedding 120/300 chunks…"
    )
    assert r.progress_text({"stage": "reading"}, "a.pdf") == "⏳ a.pdf: Reading…"
    msg = r.rate_limited(12.2, 5)
    assert "Try again in 13 s" in msg.embeds[0].description


HOSTILE_QUESTION = "What is\x00 a sema\x1bphore?\u202e\u200b txet desrever\x07"


@pytest.mark.parametrize("status", ["answered", "uncertain", "not_in_materials"])
def test_a_question_s_nul_controls_and_bidi_overrides_never_reach_a_title(status: str) -> None:
    """Issue 49: Discord echoed the question's NUL, C0 and bidi-override characters in its titles;
    both bots now show a question through ``frontend.shown_question`` (Slack shows it nowhere else)."""
    answer = _answer("A semaphore is an integer variable [1].", citations=[_citation(1)])
    answer = answer.model_copy(update={"status": status, "question": HOSTILE_QUESTION})
    [msg] = r.render_answer(answer)
    embed = msg.embeds[0]
    shown = embed.title if status == "answered" else embed.author.name
    assert shown is not None
    assert shown.removeprefix("You asked: ") == "What is a semaphore? txet desrever"
    partial = r.render_partial("A semaphore is", HOSTILE_QUESTION)
    assert partial.embeds[0].title == "What is a semaphore? txet desrever"


def test_a_long_admin_reply_goes_on_in_further_embeds_instead_of_being_cut() -> None:
    """A course card can outgrow one embed: every line is shown, each embed and message within
    Discord's limits; a short reply is the one-embed notice it always was."""
    (short,) = r.admin_notice("Collections", "• os-2026", error=False)
    assert short.embeds[0].title == "Collections" and short.embeds[0].description == "• os-2026"
    lines = [
        f"• slot {i} — a fact stated on page {i} of the lab handbook [handbook.md, p. {i}]"
        for i in range(150)
    ]
    messages = r.admin_notice("The course card of “lab”", "\n".join(lines), error=False)
    embeds = [e for m in messages for e in m.embeds]
    assert len(embeds) > 1 and embeds[0].title == "The course card of “lab”"
    assert all(len(e.description or "") <= r.DESCRIPTION_MAX for e in embeds)
    assert all(m.total_embed_chars() <= r.EMBED_TOTAL_MAX and len(m.embeds) <= 10 for m in messages)
    shown = "\n".join(e.description or "" for e in embeds)
    assert all(f"page {i} of" in shown for i in range(150))
