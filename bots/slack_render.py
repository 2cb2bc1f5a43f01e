"""Turn Syllabot results into Slack messages (Block Kit plus a plain-text fallback).

Pure functions, no I/O: the bot decides *where* a message goes, this module decides *what it looks
like*, so every limit Slack enforces is tested here without a network.

Safety rules applied to every piece of text that came from a document, the LLM or a user:

* ``&``, ``<`` and ``>`` are escaped (Slack's own rule), so ``<!channel>``, ``<!here>``,
  ``<@U123>`` and ``<https://evil|click here>`` arrive as visible text, never as a ping or a link;
* bare ``@here``/``@channel``/``@everyone`` get an invisible word joiner after the ``@``, so no
  client-side "automatic parsing" can turn them into a mention either;
* every ``mrkdwn`` text object is sent with ``verbatim: true``, which switches off Slack's automatic
  link/mention parsing for that object.

Slack limits respected: a section's text <= 3,000 characters, a context block <= 10 elements,
a message <= 50 blocks, a button value <= 2,000 characters, and all text in a message's blocks
together <= :data:`MESSAGE_TEXT_LIMIT` (chat.postMessage refuses ~12-13k with ``msg_blocks_too_long``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from syllabot.bots import frontend
from syllabot.shared.gap_report import GapReport, disagreements, summary_line, table
from syllabot.shared.labels import citation_label
from syllabot.shared.schema import (
    NOT_IN_MATERIALS,
    UNCERTAIN_LEAD,
    Answer,
    Citation,
    IngestReport,
    SourceInfo,
)
from syllabot.shared.wording import plural

Block = dict[str, Any]
Message = dict[str, Any]  # {"text": str, "blocks": list[Block]}

#: Slack's limit on a section block's text (and on any text object).
SECTION_LIMIT = 3000
#: Slack's limit on blocks in one message.
MAX_BLOCKS = 50
#: Slack's limit on elements in one context block.
CONTEXT_ELEMENTS = 10
#: Slack's limit on a block_id.
BLOCK_ID_LIMIT = 255
#: Our cap on all text in one message's blocks together. Slack's cumulative limit is undocumented:
#: chat.postMessage answers ``msg_blocks_too_long`` from about 12-13k characters (slackapi/bolt-js
#: issues 2509 and 2867, one report already at 11.3k), so we stay well below it.
MESSAGE_TEXT_LIMIT = 10_000
#: Of that, what the numbered sources may take (18 sources fit easily; the rest is "… N more").
SOURCES_TEXT_LIMIT = 3500
#: The fallback ``text`` is what notifications and screen readers show; keep it short.
FALLBACK_LIMIT = 2900

#: ``action_id``s of the feedback buttons; the bot listens for these.
VOTE_UP_ACTION = "syllabot_vote_up"
VOTE_DOWN_ACTION = "syllabot_vote_down"
FEEDBACK_BLOCK_ID = "syllabot_feedback"

#: The marker as shown in Slack: first, in its own section, impossible to miss.
MARKER_MRKDWN = f":warning: *{NOT_IN_MATERIALS}*"
#: An uncertain answer's own first section: plain words and a different emoji, so "I can't tell"
#: reads as neither an answer nor "not in your materials".
UNCERTAIN_MRKDWN = f":grey_question: *{UNCERTAIN_LEAD}* — closest passages:"
#: The header of the numbered sources, by status.
SOURCES_HEADER = {
    "answered": "*Sources*",
    "uncertain": "*Closest passages* (may not answer it)",
    "not_in_materials": "*Closest passages in your materials* (they do not answer it)",
}
GENERAL_HEADER = ":bulb: *General knowledge* — not from your course materials"
TRUNCATED_NOTE = "_…the rest was cut to fit Slack's message size limit._"

_BROADCAST = re.compile(r"@(here|channel|everyone)\b", re.IGNORECASE)
_WORD_JOINER = "\u2060"


# --- escaping ------------------------------------------------------------------------------------


def escape(text: str) -> str:
    """Escape the three characters Slack reserves, so text can never form a mention or link."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def safe(text: str) -> str:
    """:func:`escape`, plus defusing bare ``@here``/``@channel``/``@everyone``.

    Escaping alone already stops ``<!channel>``; the word joiner stops the bare words from being
    auto-parsed by any surface that ignores ``verbatim`` (e.g. the notification fallback text).
    """
    return _BROADCAST.sub(lambda m: "@" + _WORD_JOINER + m.group(1), escape(text))


def mrkdwn(text: str) -> dict[str, Any]:
    """A mrkdwn text object with automatic parsing off. ``text`` must already be safe."""
    return {"type": "mrkdwn", "text": text, "verbatim": True}


def section(text: str) -> Block:
    """A section block; ``text`` must already be safe and within :data:`SECTION_LIMIT`."""
    return {"type": "section", "text": mrkdwn(text[:SECTION_LIMIT])}


def context(texts: Sequence[str]) -> Block:
    return {"type": "context", "elements": [mrkdwn(t[:SECTION_LIMIT]) for t in texts[:CONTEXT_ELEMENTS]]}


# --- splitting long text -------------------------------------------------------------------------


def _pack(units: Iterable[str], limit: int, joiner: str) -> list[str]:
    """Greedily join ``units`` with ``joiner`` into chunks of at most ``limit`` characters."""
    chunks: list[str] = []
    current = ""
    for unit in units:
        candidate = unit if not current else current + joiner + unit
        if len(candidate) <= limit:
            current = candidate
            continue
        if current:
            chunks.append(current)
        current = unit
    if current:
        chunks.append(current)
    return chunks


def split_text(text: str, limit: int = SECTION_LIMIT) -> list[str]:
    """Split (already escaped) text into pieces of at most ``limit`` characters: the core's splitter
    (:func:`bots.frontend.split_text`: paragraphs, lines, sentence ends, spaces, then a hard cut),
    which never cuts inside an ``&amp;``-style entity here."""
    return frontend.split_text(text, limit, guard=frontend.keep_entities)


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit - 1)
    cut = cut if cut > limit // 2 else limit - 1
    amp = text.rfind("&", max(0, cut - 5), cut)
    if amp > 0 and ";" not in text[amp:cut]:
        cut = amp
    return text[:cut].rstrip() + "…"


# --- answers -------------------------------------------------------------------------------------


def citation_line(citation: Citation) -> str:
    """One numbered source, safe for mrkdwn: '[1] Subject — Module 2, p. 14 (file.pdf)'."""
    label = citation_label(citation)
    suffix = f" ({citation.file})" if citation.file and citation.file not in label else ""
    return f"*[{citation.n}]* {safe(label + suffix)}"


def _source_blocks(lines: list[str], header: str) -> list[Block]:
    """Numbered source lines as context blocks, grouped into elements and blocks within limits.

    All lines together stay within :data:`SOURCES_TEXT_LIMIT`, so sources never crowd out the answer.
    """
    if not lines:
        return []
    kept: list[str] = []
    used = len(header)
    for i, line in enumerate(lines):
        line = _truncate(line, 500)
        if used + len(line) + 40 > SOURCES_TEXT_LIMIT:
            kept.append(f"_… and {plural(len(lines) - i, 'more source')}_")
            break
        kept.append(line)
        used += len(line) + 1
    elements = _pack([header, *kept], SECTION_LIMIT, "\n")
    return [context(elements[i : i + CONTEXT_ELEMENTS]) for i in range(0, len(elements), CONTEXT_ELEMENTS)]


def feedback_actions(answer_id: str) -> Block:
    """👍/👎 buttons; each carries the answer id so the vote lands on the right answer."""
    return {
        "type": "actions",
        "block_id": FEEDBACK_BLOCK_ID,
        "elements": [
            {
                "type": "button",
                "action_id": VOTE_UP_ACTION,
                "text": {"type": "plain_text", "text": "👍 Helpful", "emoji": True},
                "value": answer_id[:2000],
            },
            {
                "type": "button",
                "action_id": VOTE_DOWN_ACTION,
                "text": {"type": "plain_text", "text": "👎 Not helpful", "emoji": True},
                "value": answer_id[:2000],
            },
        ],
    }


def answer_fallback_text(answer: Answer) -> str:
    """Plain-text version for notifications and clients that cannot show blocks: the status's plain
    lead and the body (:attr:`frontend.AnswerParts.lead`, the same words as the terminal's), then how
    many sources or passages the blocks list."""
    parts = frontend.answer_parts(answer)
    sources = ""
    if parts.citations and parts.status != "not_in_materials":
        sources = f" ({plural(len(parts.citations), 'source' if parts.status == 'answered' else 'passage')})"
    return _truncate(safe(parts.said) + sources, FALLBACK_LIMIT).strip() or safe(parts.label)


#: The footer's block_id under an answer that began a conversation: the prefix, then its id. A
#: ``/ask`` answer is posted through a response_url, which returns no message ts, so a reply in the
#: thread under it finds its conversation by reading this off the answer (``conversation_of``).
CONVERSATION_BLOCK = "syllabot-conversation:"


def conversation_of(message: dict[str, Any]) -> str | None:
    """The conversation an answer message carries in its footer's block_id, if any."""
    for block in message.get("blocks") or []:
        block_id = str(block.get("block_id") or "")
        if block_id.startswith(CONVERSATION_BLOCK):
            return block_id.removeprefix(CONVERSATION_BLOCK) or None
    return None


def render_answer(answer: Answer, answer_id: str | None = None, conversation: str | None = None) -> Message:
    """The full Block Kit message for an answer.

    Order: the status's own lead when the materials do not plainly answer (the marker for
    ``not_in_materials``, "I can't tell …" for ``uncertain``; chosen by ``answer.status``: the
    worker sends only the body), the answer, a labelled general-knowledge
    part, numbered sources headed by status, a footer (collection, operator note; its block_id
    names the ``conversation`` when there is one), then the feedback buttons.
    """
    parts = frontend.answer_parts(answer)
    head: list[Block] = []
    if parts.status == "not_in_materials":
        head.append(section(MARKER_MRKDWN))
    elif parts.status == "uncertain":
        head.append(section(UNCERTAIN_MRKDWN))

    body: list[Block] = [section(piece) for piece in split_text(safe(frontend.with_bold(parts.body, "*")))]

    general: list[Block] = []
    if parts.general_knowledge:
        general.append(section(GENERAL_HEADER))
        general.extend(section(piece) for piece in split_text(safe(parts.general_knowledge)))

    header = SOURCES_HEADER[parts.status]
    tail = _source_blocks([citation_line(c) for c in answer.citations], header)
    footer_bits = [f"Collection `{safe(answer.collection)}`"]
    if answer.note:
        footer_bits.append(f"_{safe(answer.note)}_")
    footer = context([" · ".join(footer_bits)])
    if conversation:
        footer["block_id"] = f"{CONVERSATION_BLOCK}{conversation}"[:BLOCK_ID_LIMIT]
    tail.append(footer)
    if answer_id:
        tail.append(feedback_actions(answer_id))

    blocks = _fit(head, body + general, tail)
    return {"text": answer_fallback_text(answer), "blocks": blocks}


#: Under an answer still being written: sources and the outcome come with the final update.
WRITING_CONTEXT = ":writing_hand: _Writing… sources follow when the answer is complete._"


def render_partial(text: str) -> Message:
    """An answer while an LLM writes it (``frontend.ask_streamed``): the text so far, escaped like a
    final answer and cut to one section, then a "writing" line. No status lead and no sources: the
    final update replaces it with both."""
    body = frontend.clip_partial(safe(text), SECTION_LIMIT, guard=frontend.keep_entities)
    fallback = frontend.clip_partial(safe(text), FALLBACK_LIMIT, guard=frontend.keep_entities)
    return {"text": fallback, "blocks": [section(body), context([WRITING_CONTEXT])]}


def blocks_text_length(blocks: Sequence[Any]) -> int:
    """All text Slack counts in ``blocks``: every ``text`` string, at any depth (sections, context
    elements, button labels)."""
    total = 0
    stack: list[Any] = list(blocks)
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if key == "text" and isinstance(value, str):
                    total += len(value)
                elif isinstance(value, dict | list):
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    return total


def _fit(
    head: list[Block], middle: list[Block], tail: list[Block], text_limit: int = MESSAGE_TEXT_LIMIT
) -> list[Block]:
    """Keep head and tail whole and trim the middle so the message stays within 50 blocks and
    ``text_limit`` characters of block text; a cut middle ends with :data:`TRUNCATED_NOTE`."""
    room = MAX_BLOCKS - len(head) - len(tail)
    if room < 1:  # absurd number of sources: keep the buttons, drop source blocks from the middle
        tail = [*tail[: max(0, MAX_BLOCKS - len(head) - 2)], tail[-1]]
        room = MAX_BLOCKS - len(head) - len(tail)
    note = section(TRUNCATED_NOTE)
    # Head and tail are short by construction (marker or title; sources capped; footer; buttons).
    # Should they not be, drop tail blocks before the last (the buttons) until half the budget is left.
    while len(tail) > 1 and blocks_text_length(head + tail) > text_limit // 2:
        tail = tail[:-2] + tail[-1:]
    budget = text_limit - blocks_text_length(head + tail)
    if len(middle) <= room and blocks_text_length(middle) <= budget:
        return [*head, *middle, *tail]
    budget -= len(TRUNCATED_NOTE)
    kept: list[Block] = []
    for block in middle:
        if len(kept) >= room - 1:
            break
        size = blocks_text_length([block])
        if size <= budget:
            kept.append(block)
            budget -= size
            continue
        text = block.get("text") if block.get("type") == "section" else None
        if isinstance(text, dict) and budget >= 200:  # room for a useful piece: cut this section
            kept.append(section(_truncate(str(text["text"]), budget)))
        break
    return [*head, *kept, note, *tail]


# --- notices, refusals, errors -------------------------------------------------------------------


def render_notice(text: str, emoji: str = ":information_source:") -> Message:
    """A one-off message whose ``text`` is *our own* mrkdwn (already safe); untrusted parts escaped by caller."""
    blocks = _fit([], [section(piece) for piece in split_text(f"{emoji} {text}" if emoji else text)], [])
    return {"text": _truncate(_plain(text), FALLBACK_LIMIT), "blocks": blocks}


def render_refusal(reason: str) -> Message:
    """A clear 'you may not do that' (non-admins, rate limit)."""
    return render_notice(reason, ":no_entry:")


def render_error(message: str) -> Message:
    """Something failed: say what and what to do about it, never stay silent."""
    return render_notice(message, ":x:")


def render_progress(stage: str, done: int | None = None, total: int | None = None, what: str = "") -> Message:
    """'Embedding 120/300 chunks…' while an ingest or re-index runs."""
    count = f" {done}/{total}" if done is not None and total else ""
    subject = f" {safe(what)}" if what else ""
    return render_notice(f"{safe(stage.capitalize())}{count}{subject}…", ":hourglass_flowing_sand:")


def _plain(text: str) -> str:
    """Fallback text: our mrkdwn minus the emphasis characters, still escaped."""
    return re.sub(r"[*_`]", "", text)


# --- sources and ingest reports -----------------------------------------------------------------


def _human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def render_sources(sources: Sequence[SourceInfo], collection: str) -> Message:
    """What a collection holds: one line per document."""
    if not sources:
        return render_notice(
            f"Collection `{safe(collection)}` has no documents yet. An admin can add one by mentioning "
            "me in a message with a file attached."
        )
    lines = []
    for s in sources:
        extra = f", {safe(s.status)}" if s.status else ""
        version = f", v{safe(s.version)}" if s.version else ""
        lines.append(
            f"• *{safe(s.title or s.file)}* ({safe(s.file)}) — {plural(s.pages, 'page')}, "
            f"{plural(s.chunks, 'chunk')}"
            f"{version}{extra}, {_human_bytes(s.bytes)}"
        )
    head = [section(f":books: Collection `{safe(collection)}` — {plural(len(sources), 'document')}")]
    middle = [section(piece) for piece in _pack(lines, SECTION_LIMIT, "\n")]
    blocks = _fit(head, middle, [])
    return {"text": f"Collection {safe(collection)}: {plural(len(sources), 'document')}", "blocks": blocks}


def ingest_summary_line(report: IngestReport) -> str:
    ok = [f for f in report.files if f.ok]
    failed = [f for f in report.files if not f.ok]
    pages = sum(f.pages for f in ok)
    chunks = sum(f.chunks for f in ok)
    text = (
        f"{plural(len(ok), 'file')} indexed into `{safe(report.collection)}`: "
        f"{plural(pages, 'page')}, {plural(chunks, 'chunk')}"
    )
    if failed:
        text += f"; {len(failed)} failed"
    return text


def render_ingest_report(report: IngestReport, action: str = "Indexed") -> Message:
    """Pages, chunks, modules found and warnings per file, plus what happened to the index."""
    ok = [f for f in report.files if f.ok]
    failed = [f for f in report.files if not f.ok]
    if report.changed:
        head_text = (
            f":white_check_mark: *{safe(action)}* {frontend.report_preposition(action)} collection "
            f"`{safe(report.collection)}` — "
            f"{plural(report.total_chunks, 'chunk')} in the index now"
            + (f" (version `{safe(report.index_version)}`)" if report.index_version else "")
        )
    else:
        head_text = (
            f":warning: *Nothing new was indexed* in `{safe(report.collection)}`; the previous index "
            "stays in place."
        )
    lines: list[str] = []
    for f in ok:
        modules = ", ".join(safe(m) for m in f.modules[:12]) if f.modules else "none detected"
        if len(f.modules) > 12:
            modules += f", … ({len(f.modules)} in all)"
        replaced = f"; replaced the earlier {safe(f.replaced)}" if f.replaced else ""
        lines.append(
            f"• *{safe(f.file)}* — {plural(f.pages, 'page')}, {plural(f.chunks, 'chunk')}; modules: {modules}"
            f"{replaced}"
        )
        lines.extend(f"    :warning: {safe(w)}" for w in f.warnings[:10])
        if len(f.warnings) > 10:
            lines.append(f"    … and {len(f.warnings) - 10} more warnings")
        if f.left_out():
            lines.append(f"    left out of the index: {safe(f.left_out())}")
        if f.guessed():
            lines.append(f"    read by a guess: {safe(f.guessed())}")
    for f in failed:
        lines.append(f"• :x: *{safe(f.file)}* — {safe(f.error or 'could not be read')}")
        lines.extend(f"    :warning: {safe(w)}" for w in f.warnings[:5])
    middle = [section(piece) for piece in _pack(lines, SECTION_LIMIT, "\n")]
    if not ok and not failed:
        middle = [section("No files were processed.")]
    blocks = _fit([section(head_text)], middle, [])
    fallback = ingest_summary_line(report) if report.files else _plain(head_text)
    return {"text": _truncate(_plain(fallback), FALLBACK_LIMIT), "blocks": blocks}


def usage_ask() -> Message:
    return render_notice(
        "Ask a question about your course materials, for example:\n"
        "`/ask What are the course outcomes of Module 2?`\n"
        "You can also mention me in a channel: `@Syllabot what is paging?`",
        ":question:",
    )


def vote_confirmation(vote: str, changed: bool) -> Message:
    emoji = "👍" if vote == "up" else "👎"
    if changed:
        return render_notice(f"Vote changed to {emoji}. Thanks — it helps us improve the answers.", "")
    return render_notice(f"Thanks for the {emoji} — it helps us improve the answers.", "")


def render_gap_report(report: GapReport) -> Message:
    """The teacher's gap report: one sentence and a short table of the largest topics (the CSV with
    every topic goes to the admin's direct messages)."""
    summary = safe(summary_line(report))
    blocks = [
        section(f":bar_chart: *Unanswered questions — {safe(report.collection)}*\n{summary}"),
        section(f"```{safe(table(report, limit=10, width=40))}```"),
    ]
    disagree = disagreements(report, limit=5, width=120)
    if disagree:
        blocks.append(section(safe("\n".join(disagree))))
    blocks.append(context(["Who asked is never recorded."]))
    return {"text": _truncate(_plain(summary), FALLBACK_LIMIT), "blocks": blocks}
