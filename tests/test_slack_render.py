"""Block Kit rendering: Slack's limits, the marker, citations and escaping, without any network."""

from __future__ import annotations

import json

from syllabot.bots import slack_render as r
from syllabot.shared.schema import (
    NOT_IN_MATERIALS,
    UNCERTAIN_LEAD,
    Answer,
    Citation,
    FileReport,
    IngestReport,
    SourceInfo,
)


def _cite(n: int, **kw: object) -> Citation:
    base: dict[str, object] = {
        "n": n,
        "doc_id": f"d{n}",
        "file": f"os_notes_{n}.pdf",
        "title": "Operating Systems",
        "subject": "21CS44 Operating Systems",
        "module": "2",
        "page": 10 + n,
        "score": 0.5,
        "snippet": "…",
        "label": f"21CS44 Operating Systems — Module 2, p. {10 + n}",
    }
    base.update(kw)
    return Citation(**base)  # type: ignore[arg-type]


def _answer(**kw: object) -> Answer:
    base: dict[str, object] = {
        "text": "Paging divides memory into fixed-size frames [1].",
        "in_materials": True,
        "citations": [_cite(1), _cite(2)],
        "collection": "os",
        "question": "What is paging?",
    }
    base.update(kw)
    return Answer(**base)  # type: ignore[arg-type]


def _all_text(message: dict) -> str:
    """Every string in the message, for 'nothing unescaped anywhere' assertions."""
    return json.dumps(message, ensure_ascii=False)


def _mrkdwn_objects(blocks: list[dict]) -> list[dict]:
    found = []
    for b in blocks:
        if "text" in b and isinstance(b["text"], dict):
            found.append(b["text"])
        for e in b.get("elements", []):
            if e.get("type") == "mrkdwn":
                found.append(e)
    return found


#: chat.postMessage answers msg_blocks_too_long from ~12-13k characters of block text.
SLACK_TEXT_CEILING = 11_000


def _block_text_chars(value: object) -> int:
    """Every ``text`` string in the blocks, at any depth (measured here, not by the module)."""
    if isinstance(value, list):
        return sum(_block_text_chars(v) for v in value)
    if isinstance(value, dict):
        return sum(
            len(v) if k == "text" and isinstance(v, str) else _block_text_chars(v) for k, v in value.items()
        )
    return 0


def _check_limits(message: dict) -> None:
    blocks = message["blocks"]
    assert 0 < len(blocks) <= r.MAX_BLOCKS
    assert _block_text_chars(blocks) <= SLACK_TEXT_CEILING
    assert r.blocks_text_length(blocks) == _block_text_chars(blocks)
    for b in blocks:
        if b["type"] == "section":
            assert len(b["text"]["text"]) <= r.SECTION_LIMIT
        if b["type"] == "context":
            assert 1 <= len(b["elements"]) <= r.CONTEXT_ELEMENTS
    for t in _mrkdwn_objects(blocks):
        assert t["verbatim"] is True
        assert 0 < len(t["text"]) <= r.SECTION_LIMIT
    assert message["text"]
    assert len(message["text"]) <= 3000


# --- escaping ------------------------------------------------------------------------------------


def test_escape_reserved_characters() -> None:
    assert r.escape("a & b < c > d") == "a &amp; b &lt; c &gt; d"
    assert r.escape("<!channel>") == "&lt;!channel&gt;"


def test_safe_defuses_bare_broadcasts() -> None:
    out = r.safe("hey @here and @channel and @Everyone, mail me@here.com")
    for word in ("@here", "@channel", "@Everyone"):
        assert word not in out.replace("me@here.com", "")
    assert "@\u2060here" in out


def test_answer_from_untrusted_text_cannot_ping_or_link() -> None:
    nasty = "Read this <!channel> <!here> <@U123ABC> <https://evil.example|click> @here & more"
    answer = _answer(
        text=nasty,
        citations=[_cite(1, file="<!everyone>.pdf", label="<@U999> — Module 1, p. 1")],
        note="<!subteam^S1>",
        general_knowledge=None,
    )
    msg = r.render_answer(answer, "abc123")
    dumped = _all_text(msg)
    for raw in ("<!channel>", "<!here>", "<@U123ABC>", "<https://", "<!everyone>", "<@U999>", "<!subteam"):
        assert raw not in dumped
    assert "&lt;!channel&gt;" in dumped
    assert "@\u2060here" in dumped
    _check_limits(msg)


# --- answers -------------------------------------------------------------------------------------


def test_answer_blocks_have_sources_and_feedback_buttons() -> None:
    msg = r.render_answer(_answer(), "ans42")
    _check_limits(msg)
    blocks = msg["blocks"]
    assert blocks[0]["type"] == "section"
    assert "Paging divides memory" in blocks[0]["text"]["text"]
    contexts = " ".join(e["text"] for b in blocks if b["type"] == "context" for e in b["elements"])
    assert "*[1]* 21CS44 Operating Systems — Module 2, p. 11 (os_notes_1.pdf)" in contexts
    assert "*[2]*" in contexts
    assert "Collection `os`" in contexts
    actions = blocks[-1]
    assert actions["type"] == "actions"
    ids = {e["action_id"]: e["value"] for e in actions["elements"]}
    assert ids == {r.VOTE_UP_ACTION: "ans42", r.VOTE_DOWN_ACTION: "ans42"}
    assert NOT_IN_MATERIALS not in _all_text(msg)


def test_no_buttons_without_answer_id() -> None:
    msg = r.render_answer(_answer(), None)
    assert all(b["type"] != "actions" for b in msg["blocks"])


def test_not_in_materials_marker_is_first_and_alone() -> None:
    answer = _answer(
        text="The closest passages discuss scheduling.",
        in_materials=False,
        general_knowledge="a TLB caches page-table entries.",
    )
    msg = r.render_answer(answer, "x")
    _check_limits(msg)
    first = msg["blocks"][0]
    assert first["type"] == "section"
    assert first["text"]["text"] == r.MARKER_MRKDWN
    # the body follows; the marker is the status's, shown once
    assert msg["blocks"][1]["text"]["text"] == "The closest passages discuss scheduling."
    texts = [b["text"]["text"] for b in msg["blocks"] if b["type"] == "section"]
    assert r.GENERAL_HEADER in texts
    assert "a TLB caches page-table entries." in texts
    assert msg["text"] == f"{NOT_IN_MATERIALS}. The closest passages discuss scheduling."
    assert _all_text(msg).count(NOT_IN_MATERIALS) == 2  # the marker block and the fallback text
    contexts = " ".join(e["text"] for b in msg["blocks"] if b["type"] == "context" for e in b["elements"])
    assert "do not answer it" in contexts


def test_marker_only_answer() -> None:
    msg = r.render_answer(_answer(text="", in_materials=False, citations=[]), "x")
    _check_limits(msg)
    assert msg["blocks"][0]["text"]["text"] == r.MARKER_MRKDWN
    assert msg["text"] == f"{NOT_IN_MATERIALS}."


#: What a worker sends for an uncertain answer: the closest passages alone (no lead).
UNCERTAIN_TEXT = "Paging is covered in Module 2 [1]. Ask @here [2]."


def test_uncertain_has_its_own_lead_and_passages_header() -> None:
    answer = _answer(text=UNCERTAIN_TEXT, status="uncertain", in_materials=None)
    assert not answer.in_materials
    msg = r.render_answer(answer, "x")
    _check_limits(msg)
    blocks = msg["blocks"]
    assert blocks[0]["text"]["text"] == r.UNCERTAIN_MRKDWN
    assert r.UNCERTAIN_MRKDWN.startswith(":grey_question: *I can't tell whether your materials answer this*")
    assert blocks[1]["text"]["text"] == "Paging is covered in Module 2 [1]. Ask @\u2060here [2]."
    dumped = _all_text(msg)
    assert dumped.count(UNCERTAIN_LEAD) == 1  # the lead block; the fallback text hedges after the passages
    assert NOT_IN_MATERIALS not in dumped and r.MARKER_MRKDWN not in dumped
    contexts = " ".join(e["text"] for b in blocks if b["type"] == "context" for e in b["elements"])
    assert contexts.startswith("*Closest passages* (may not answer it)")
    assert "*Sources*" not in contexts
    assert msg["text"] == (
        "Your materials say: Paging is covered in Module 2 [1]. Ask @\u2060here [2]. "
        "— I can't tell whether that answers your question. (2 passages)"
    )
    assert blocks[-1]["type"] == "actions"


def test_each_status_has_its_own_lead_and_sources_header() -> None:
    seen = {}
    for status, text in (
        ("answered", "Paging [1]."),
        ("uncertain", UNCERTAIN_TEXT),
        ("not_in_materials", "Closest: paging [1]."),
    ):
        msg = r.render_answer(_answer(text=text, status=status, in_materials=None), None)
        _check_limits(msg)
        contexts = [e["text"] for b in msg["blocks"] if b["type"] == "context" for e in b["elements"]]
        seen[status] = (msg["blocks"][0]["text"]["text"], contexts[0].split("\n")[0], msg["text"])
    assert seen["answered"][0] == "Paging [1]."
    assert seen["uncertain"][0] == r.UNCERTAIN_MRKDWN
    assert seen["not_in_materials"][0] == r.MARKER_MRKDWN
    assert len({header for _, header, _ in seen.values()}) == 3
    assert seen["not_in_materials"][2].startswith(NOT_IN_MATERIALS)
    assert seen["uncertain"][2].startswith("Your materials say: ")
    assert seen["answered"][2] == "Paging [1]. (2 sources)"


def test_slack_status_decides_not_the_text() -> None:
    msg = r.render_answer(_answer(text="Paging is covered [1].", status="uncertain", in_materials=None), None)
    assert msg["blocks"][0]["text"]["text"] == r.UNCERTAIN_MRKDWN
    assert msg["blocks"][1]["text"]["text"] == "Paging is covered [1]."
    msg = r.render_answer(
        _answer(text="Nothing matches.", status="not_in_materials", in_materials=None), None
    )
    assert msg["blocks"][0]["text"]["text"] == r.MARKER_MRKDWN
    assert msg["blocks"][1]["text"]["text"] == "Nothing matches."
    assert msg["text"] == f"{NOT_IN_MATERIALS}. Nothing matches."


def test_long_answer_split_into_sections_at_boundaries() -> None:
    para = " ".join(f"Sentence {i} explains a detail of virtual memory." for i in range(80))
    text = "\n\n".join([para, para])  # ~7,800 characters: long, but within the message budget
    msg = r.render_answer(_answer(text=text), "x")
    _check_limits(msg)
    sections = [b["text"]["text"] for b in msg["blocks"] if b["type"] == "section"]
    assert len(sections) >= 3
    for s in sections:
        assert s.endswith(".")  # split at sentence ends, not mid-word
    joined = " ".join(sections)
    assert joined.count("Sentence 79 explains") == 2
    assert r.TRUNCATED_NOTE not in joined


def test_escaping_expansion_never_breaks_limit_or_entities() -> None:
    text = "&" * 7000  # escapes to 35,000 chars with no spaces at all
    pieces = r.split_text(r.escape(text))
    assert all(len(p) <= r.SECTION_LIMIT for p in pieces)
    assert "".join(pieces) == r.escape(text)
    assert all(p.endswith(";") for p in pieces)


def test_huge_answer_respects_fifty_blocks_and_the_text_budget() -> None:
    text = "\n\n".join("word " * 590 for _ in range(80))
    answer = _answer(text=text, citations=[_cite(i) for i in range(1, 19)])
    msg = r.render_answer(answer, "x")
    _check_limits(msg)
    assert len(msg["blocks"]) <= r.MAX_BLOCKS
    assert msg["blocks"][-1]["type"] == "actions"
    texts = [b["text"]["text"] for b in msg["blocks"] if b["type"] == "section"]
    assert r.TRUNCATED_NOTE in texts
    contexts = " ".join(e["text"] for b in msg["blocks"] if b["type"] == "context" for e in b["elements"])
    assert "*[18]*" in contexts


def test_huge_answer_is_cut_in_the_middle_keeping_start_and_sources() -> None:
    """~60k characters of answer (plus general knowledge) must fit chat.postMessage's block-text limit."""
    paragraphs = [f"Paragraph {i} starts here. " + "Paging maps pages to frames. " * 70 for i in range(30)]
    answer = _answer(
        text="The opening sentence explains paging. " + "\n\n".join(paragraphs),
        citations=[_cite(i) for i in range(1, 19)],
        note="LLM unavailable; extractive answer",
    )
    msg = r.render_answer(answer, "ans-huge")
    _check_limits(msg)
    blocks = msg["blocks"]
    assert _block_text_chars(blocks) <= SLACK_TEXT_CEILING
    assert blocks[0]["text"]["text"].startswith("The opening sentence explains paging.")  # the start stays
    sections = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    assert sections[-1] == r.TRUNCATED_NOTE  # the middle is cut, visibly
    assert "Paragraph 29 starts here" not in json.dumps(msg)
    contexts = " ".join(e["text"] for b in blocks if b["type"] == "context" for e in b["elements"])
    assert "*[1]*" in contexts and "*[18]*" in contexts  # every source kept
    assert "Collection `os`" in contexts and "LLM unavailable" in contexts
    assert blocks[-1]["type"] == "actions" and blocks[-1]["elements"][0]["value"] == "ans-huge"


def test_many_long_sources_are_capped_not_the_answer() -> None:
    citations = [_cite(i, label="21CS44 Operating Systems — " + "Module 2 " * 40) for i in range(1, 61)]
    msg = r.render_answer(_answer(text="Short answer [1].", citations=citations), "x")
    _check_limits(msg)
    assert msg["blocks"][0]["text"]["text"] == "Short answer [1]."
    contexts = " ".join(e["text"] for b in msg["blocks"] if b["type"] == "context" for e in b["elements"])
    assert "*[1]*" in contexts and "more sources" in contexts
    assert msg["blocks"][-1]["type"] == "actions"


def test_long_notice_and_ingest_report_fit_the_text_budget() -> None:
    _check_limits(r.render_error("x " * 40_000))
    report = IngestReport(
        collection="os",
        total_chunks=9,
        changed=True,
        files=[
            FileReport(file=f"file-{i}.pdf", ok=True, pages=3, chunks=9, warnings=["page 2 " * 60] * 10)
            for i in range(40)
        ],
    )
    msg = r.render_ingest_report(report)
    _check_limits(msg)
    assert r.TRUNCATED_NOTE in _all_text(msg)


def test_citation_label_built_when_missing() -> None:
    c = _cite(3, label="", module="Module 4", page=7, page_end=9)
    assert r.citation_label(c) == "21CS44 Operating Systems — Module 4, pp. 7–9"
    c2 = _cite(4, label="", module=None, page=None, subject=None)
    assert r.citation_label(c2) == "Operating Systems"


def test_split_text_short_and_empty() -> None:
    assert r.split_text("") == []
    assert r.split_text("  hi  ") == ["hi"]


# --- other renderers -----------------------------------------------------------------------------


def test_ingest_report_summary() -> None:
    report = IngestReport(
        collection="os",
        index_version="v7",
        total_chunks=42,
        changed=True,
        files=[
            FileReport(
                file="notes<!here>.pdf",
                ok=True,
                pages=3,
                chunks=12,
                modules=["Module 1", "Module 2"],
                warnings=["page 3 has no text"],
                dropped={"plot_glyphs": 12, "hidden_chars": 40},
            ),
            FileReport(file="broken.docx", ok=False, error="not a valid docx"),
        ],
    )
    msg = r.render_ingest_report(report)
    _check_limits(msg)
    dumped = _all_text(msg)
    assert "<!here>" not in dumped
    assert "3 pages, 12 chunks" in dumped
    assert "Module 1, Module 2" in dumped
    assert "page 3 has no text" in dumped
    assert (
        "left out of the index: 12 characters of charts and plots, 40 hidden characters (text no reader sees)"
        in dumped
    )
    assert "not a valid docx" in dumped
    assert "42 chunks" in dumped
    assert "1 failed" in msg["text"]


def test_ingest_report_nothing_changed() -> None:
    report = IngestReport(
        collection="os", changed=False, files=[FileReport(file="a.pdf", ok=False, error="empty")]
    )
    msg = r.render_ingest_report(report)
    assert "previous index" in msg["blocks"][0]["text"]["text"]


def test_sources_listing_and_empty() -> None:
    empty = r.render_sources([], "os")
    assert "no documents" in empty["blocks"][0]["text"]["text"]
    many = [
        SourceInfo(
            doc_id=f"d{i}", file=f"f{i}.pdf", title=f"T{i}", pages=2, chunks=5, indexed_at="now", bytes=2048
        )
        for i in range(400)
    ]
    msg = r.render_sources(many, "os")
    _check_limits(msg)
    assert "400 documents" in msg["blocks"][0]["text"]["text"]


def test_refusal_error_progress_and_votes() -> None:
    assert r.render_refusal("Only admins can re-index.")["blocks"][0]["text"]["text"].startswith(":no_entry:")
    err = r.render_error("No worker is running.")
    assert err["text"] == "No worker is running."
    prog = r.render_progress("embedding", 120, 300, "notes.pdf")
    assert "Embedding 120/300 notes.pdf" in prog["blocks"][0]["text"]["text"]
    assert "changed" in r.vote_confirmation("down", True)["text"]
    assert "👍" in r.vote_confirmation("up", False)["text"]
    _check_limits(r.usage_ask())
