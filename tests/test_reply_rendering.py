"""What a student sees first when a real reply reaches Discord and Slack: the answerer's own output
(an "I can't tell" reply of three pieces, a list reply), rendered by both bots' real renderers."""

from __future__ import annotations

from syllabot.bots import discord_render, slack_render
from syllabot.shared.schema import Answer
from syllabot.worker.answerers.decision import Thresholds
from syllabot.worker.answerers.extractive import ExtractiveAnswerer
from syllabot.worker.indexes.retrieval import SearchResult
from tests.queue_helpers import make_hit

#: Bands no evidence clears: every general answer is "uncertain".
UNSURE = Thresholds(min_cosine=0.99, min_coverage=1.0, sure_cosine=0.99)

HITS = [
    make_hit(
        1,
        "Weekly homework. Each homework set practises the week's glazes. "
        "Sets are handed in on paper every Friday before noon.",
        score=0.9,
        cosine=0.6,
    ),
    make_hit(2, "Glaze lab. The homework glaze tests are fired in the small kiln on Thursdays.", score=0.8),
    make_hit(3, "Studio hours. The homework studio is open from 8 am to 10 pm on weekdays.", score=0.7),
    make_hit(4, "Kiln safety. Thick glaze must dry for two days before firing.", score=0.6),
]
TOPICS = make_hit(
    1,
    "Course topics:\n1. Wedging clay\n2. Centering on the wheel\n3. Pulling walls\n4. Trimming a foot",
    score=0.9,
    cosine=0.9,
)


def _answer(question: str, hits: list, thresholds: Thresholds | None = None) -> Answer:
    result = SearchResult(hits, "v1", 1.0, 1.0, False, "pottery", question)
    return ExtractiveAnswerer(thresholds=thresholds).answer_sync(question, result, "pottery")


def test_an_unsure_reply_shows_its_best_piece_first_with_the_asked_value_in_bold() -> None:
    answer = _answer("when is the weekly homework set due", HITS, UNSURE)
    assert answer.status == "uncertain" and len(answer.citations) >= 2
    # Discord: the heading, then the best piece, its day in Markdown bold, then the passages listed
    [message] = discord_render.render_answer(answer)
    embed = message.embeds[0]
    heading, first, *rest = embed.description.split("\n\n")
    assert heading == f"**{discord_render.UNCERTAIN_HEADING}**"
    assert first.startswith("Weekly homework.") and "**Friday**" in first and first.endswith("\\[1\\]")
    assert rest and all("\\[1\\]" not in piece for piece in rest)
    assert embed.fields[0].name.startswith("Closest passages")
    assert embed.fields[0].value.startswith("**1.** ")
    # Slack: the lead block, then the same best piece, its day in mrkdwn bold (never "**")
    blocks = slack_render.render_answer(answer, "a1")["blocks"]
    assert blocks[0]["text"]["text"] == slack_render.UNCERTAIN_MRKDWN
    body = blocks[1]["text"]["text"]
    assert body.startswith("Weekly homework.") and "*Friday*" in body and "**" not in body
    contexts = [e["text"] for b in blocks if b["type"] == "context" for e in b["elements"]]
    assert contexts[0].startswith("*Closest passages*")
    # the plain text (notifications, the terminal) carries no bold markers at all
    assert "Friday" in slack_render.answer_fallback_text(answer)
    assert "*" not in slack_render.answer_fallback_text(answer)


def test_a_list_reply_shows_its_lead_in_then_every_item_then_the_sources() -> None:
    answer = _answer("what are the course topics", [TOPICS])
    assert answer.status == "answered"
    [message] = discord_render.render_answer(answer)
    lines = message.embeds[0].description.splitlines()
    assert lines[0] == "Course topics:"
    assert [line.split(". ", 1)[1] for line in lines[1:5]] == [
        "Wedging clay",
        "Centering on the wheel",
        "Pulling walls",
        "Trimming a foot \\[1\\]",
    ]
    assert message.embeds[0].fields[0].name == "Sources"
    blocks = slack_render.render_answer(answer, "a2")["blocks"]
    assert blocks[0]["text"]["text"].splitlines()[0] == "Course topics:"
    assert "4. Trimming a foot [1]" in blocks[0]["text"]["text"]
