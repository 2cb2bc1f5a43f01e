"""Turn an :class:`Answer` (and the other worker replies) into Discord messages.

Pure functions, no I/O: the bot decides *where* a message goes, this module decides *what* it says,
so every limit and every escaping rule is unit-tested without a network.

Discord's limits this module respects (https://discord.com/developers/docs/resources/message):
embed title 256, description 4,096, field name 256, field value 1,024, footer 2,048, 25 fields per
embed, 6,000 characters across all embeds of one message, 10 embeds per message, 2,000 characters
of message content. An answer that does not fit one message becomes several :class:`Rendered`
messages; the bot sends the first as the interaction's response and the rest as follow-ups.

Text that comes from documents or from the LLM is untrusted: ``@everyone``, ``@here``, user, role
and channel mentions are broken with a zero-width space (``allowed_mentions`` already stops the
ping; this stops the *look* of one and any client that ignores it), and every square bracket is
escaped so a document cannot dress a phishing URL up as harmless words with a masked link
``[text](url)``, whatever variant of the link syntax it uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

import discord

from syllabot.bots import frontend
from syllabot.shared.gap_report import GapReport, disagreements, summary_line, table
from syllabot.shared.labels import citation_label
from syllabot.shared.schema import (
    UNCERTAIN_LEAD,
    Answer,
    Citation,
    FileReport,
    IngestReport,
    SourceInfo,
)
from syllabot.shared.wording import plural

# --- limits ------------------------------------------------------------------------------------
TITLE_MAX = 256
DESCRIPTION_MAX = 4096
FIELD_NAME_MAX = 256
FIELD_VALUE_MAX = 1024
FOOTER_MAX = 2048
FIELDS_PER_EMBED = 25
EMBED_TOTAL_MAX = 6000
EMBEDS_PER_MESSAGE = 10
CONTENT_MAX = 2000

# --- colours: the marker must be impossible to miss, so "not answered" never looks like "answered",
# and "can't tell" looks like neither
COLOUR_ANSWERED = discord.Colour(0x2ECC71)  # green
COLOUR_UNCERTAIN = discord.Colour(0xF1C40F)  # yellow: the closest passages, not claimed as an answer
COLOUR_NOT_IN_MATERIALS = discord.Colour(0xE67E22)  # orange
COLOUR_GENERAL = discord.Colour(0x95A5A6)  # grey: general knowledge, not from the materials
COLOUR_INFO = discord.Colour(0x5865F2)  # blurple: lists, progress
COLOUR_WARNING = discord.Colour(0xF1C40F)  # yellow: done, with warnings
COLOUR_ERROR = discord.Colour(0xE74C3C)  # red: refusals and failures

ZWSP = "\u200b"
GENERAL_KNOWLEDGE_TITLE = "General knowledge (not from your materials)"
#: The first line of an uncertain answer: plain words, so it is read as "maybe", never as an answer.
UNCERTAIN_HEADING = f"{UNCERTAIN_LEAD} — closest passages:"
#: Names of the sources field, by status: only an answer has "Sources"; the others show passages.
SOURCES_NAME = {
    "answered": "Sources",
    "uncertain": "Closest passages (may not answer it)",
    "not_in_materials": "Sources",
}
ELLIPSIS = "…"


@dataclass
class Rendered:
    """One Discord message: optional content plus up to 10 embeds."""

    content: str | None = None
    embeds: list[discord.Embed] = field(default_factory=list)

    def total_embed_chars(self) -> int:
        return sum(len(e) for e in self.embeds)


# --- escaping ----------------------------------------------------------------------------------
_MASS_MENTION = re.compile(r"@(everyone|here)", re.IGNORECASE)
_ID_MENTION = re.compile(r"<(@[!&]?|#)(\d+)>")
#: A markdown escape pair (backslash + any character that is not a letter, digit or space: the rule
#: of simple-markdown, which Discord's parser is built on), or a bare square bracket.
_ESCAPE_OR_BRACKET = re.compile(r"\\[^0-9A-Za-z\s]|[\[\]]")


def _escape_brackets(text: str) -> str:
    """Put a backslash before every ``[`` and ``]`` that is not already escaped.

    No masked link can start without an unescaped ``[``, so this stops every variant of
    ``[text](url)`` (nested brackets, parentheses or spaces in the URL, a title, ``<url>``) instead
    of trying to recognise them. Discord shows ``\\[1\\]`` as ``[1]``, so citation markers still read
    normally. Scanning escape pairs as units keeps an existing ``\\[`` as it is and turns ``\\\\[``
    (an escaped backslash, then a live bracket) into ``\\\\\\[``.
    """
    return _ESCAPE_OR_BRACKET.sub(lambda m: m.group(0) if len(m.group(0)) == 2 else "\\" + m.group(0), text)


def neutralise(text: str) -> str:
    """Break mentions and masked links in untrusted text, leaving it readable.

    ``@everyone`` -> ``@\u200beveryone``; ``<@123>``, ``<@!123>``, ``<@&123>``, ``<#123>`` get a
    zero-width space after the sigil so Discord shows them as plain text; every ``[`` and ``]`` is
    escaped, so a ``[text](url)`` shows its real URL instead of a disguised link. Brackets inside
    inline code or code blocks then show their backslash (Discord does not unescape code): the price
    of not having to parse code spans exactly as Discord does.
    """
    if not text:
        return text
    text = _MASS_MENTION.sub(lambda m: f"@{ZWSP}{m.group(1)}", text)
    text = _ID_MENTION.sub(lambda m: f"<{m.group(1)}{ZWSP}{m.group(2)}>", text)
    return _escape_brackets(text)


def plain(text: str) -> str:
    """Untrusted short text shown verbatim (file names, titles): no markdown, no mentions."""
    return neutralise(discord.utils.escape_markdown(text or "", as_needed=False))


def truncate(text: str, limit: int) -> str:
    """Cut to ``limit`` characters, ending with an ellipsis when anything was dropped."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - 1)].rstrip() + ELLIPSIS


# --- splitting ---------------------------------------------------------------------------------
def split_text(text: str, limit: int) -> list[str]:
    """The core's splitter (:func:`bots.frontend.split_text`); a hard cut never separates a backslash
    from the character it escapes."""
    return frontend.split_text(text, limit, guard=frontend.keep_escapes)


# --- citations ---------------------------------------------------------------------------------
def citation_line(c: Citation) -> str:
    """One numbered source line: ``**1.** Subject — Module N, p. P (file.pdf)``."""
    label = citation_label(c)
    suffix = f" ({plain(c.file)})" if c.file and c.file not in label else ""
    return f"**{c.n}.** {plain(label)}{suffix}"


def _pack_lines(lines: list[str], limit: int) -> list[str]:
    """Join lines with newlines into blocks of at most ``limit`` characters (long lines truncated)."""
    blocks: list[str] = []
    current = ""
    for line in lines:
        line = truncate(line, limit)
        candidate = f"{current}\n{line}" if current else line
        if len(candidate) > limit:
            blocks.append(current)
            current = line
        else:
            current = candidate
    if current:
        blocks.append(current)
    return blocks


# --- packing embeds into messages --------------------------------------------------------------
def pack_messages(embeds: list[discord.Embed], content: str | None = None) -> list[Rendered]:
    """Group embeds into messages of at most 10 embeds and 6,000 embed characters each."""
    messages: list[Rendered] = [Rendered(content=truncate(content, CONTENT_MAX) if content else None)]
    for embed in embeds:
        current = messages[-1]
        if current.embeds and (
            len(current.embeds) >= EMBEDS_PER_MESSAGE
            or current.total_embed_chars() + len(embed) > EMBED_TOTAL_MAX
        ):
            current = Rendered()
            messages.append(current)
        current.embeds.append(embed)
    return messages


def _body_embeds(text: str, colour: discord.Colour, title: str | None, per_embed: int) -> list[discord.Embed]:
    chunks = split_text(text, per_embed) if text else []
    if not chunks:
        chunks = [""]
    embeds: list[discord.Embed] = []
    for i, chunk in enumerate(chunks):
        embed = discord.Embed(colour=colour, description=chunk or None)
        if i == 0 and title:
            embed.title = truncate(title, TITLE_MAX)
        embeds.append(embed)
    return embeds


def render_answer(answer: Answer, *, per_embed: int = DESCRIPTION_MAX) -> list[Rendered]:
    """The messages showing one answer, in order; usually exactly one.

    Layout by ``answer.status`` (never guessed from the text): ``answered`` is a green embed titled
    with the question; ``not_in_materials`` an orange embed whose first line is **Not in your
    materials**; ``uncertain`` a yellow embed whose first line says in plain words that we cannot
    tell whether the materials answer it and that closest passages follow, so it reads as neither
    an answer nor a refusal. The worker sends only the body (``Answer.text``); the heading comes
    from the status (:func:`frontend.answer_parts`). Then numbered sources (for ``uncertain`` named as closest passages), the
    labelled general-knowledge part (grey) if any, and the collection in the footer of the last
    embed. ``per_embed`` exists so tests can exercise splitting with short texts.
    """
    per_embed = min(per_embed, DESCRIPTION_MAX)
    parts = frontend.answer_parts(answer)
    question = neutralise(frontend.shown_question(parts.question))
    if parts.status == "answered":
        body = neutralise(parts.body)
        embeds = _body_embeds(body, COLOUR_ANSWERED, question or None, per_embed)
    else:
        if parts.status == "uncertain":
            heading, colour = UNCERTAIN_HEADING, COLOUR_UNCERTAIN
        else:
            heading, colour = parts.label, COLOUR_NOT_IN_MATERIALS
        heading = f"**{heading}**"
        rest = neutralise(parts.body)
        body = f"{heading}\n\n{rest}" if rest else heading
        embeds = _body_embeds(body, colour, None, per_embed)
        if question:
            # The question goes under the heading's line, not above it: the heading comes first.
            embeds[0].set_author(name=truncate(f"You asked: {question}", TITLE_MAX))

    if parts.citations:
        lines = [citation_line(c) for c in parts.citations]
        blocks = _pack_lines(lines, FIELD_VALUE_MAX)
        target = embeds[-1]
        for i, block in enumerate(blocks):
            name = SOURCES_NAME[answer.status] if i == 0 else f"{SOURCES_NAME[answer.status]} (continued)"
            if (
                len(target.fields) >= FIELDS_PER_EMBED
                or len(target) + len(name) + len(block) > EMBED_TOTAL_MAX - 200
            ):
                target = discord.Embed(colour=target.colour)
                embeds.append(target)
            target.add_field(name=name, value=block, inline=False)

    if parts.general_knowledge:
        gk = neutralise(parts.general_knowledge)
        embeds.extend(_body_embeds(gk, COLOUR_GENERAL, GENERAL_KNOWLEDGE_TITLE, per_embed))

    footer = f"Collection: {answer.collection}"
    if answer.note:
        footer += f" · {neutralise(answer.note)}"
    # Short footer: the per-embed packing above keeps 200 characters spare for it.
    embeds[-1].set_footer(text=truncate(footer, 200))
    return pack_messages(embeds)


#: Footer of an answer still being written: sources and the outcome come with the final edit.
WRITING_FOOTER = "✍️ Writing… sources follow when the answer is complete."


def render_partial(text: str, question: str = "") -> Rendered:
    """An answer while an LLM writes it (``frontend.ask_streamed``): one embed with the text so far,
    escaped like a final answer and cut to the description limit, titled with the question. It
    carries no status label and no sources: those come with the final edit, which replaces it."""
    body = frontend.clip_partial(neutralise(text), DESCRIPTION_MAX, guard=frontend.keep_escapes)
    embed = discord.Embed(colour=COLOUR_INFO, description=body or None)
    shown = frontend.shown_question(question)
    if shown:
        embed.title = truncate(neutralise(shown), TITLE_MAX)
    embed.set_footer(text=WRITING_FOOTER)
    return Rendered(embeds=[embed])


# --- sources, ingest reports, progress, notices -------------------------------------------------
def format_when(indexed_at: str) -> str:
    """An ISO time as a Discord timestamp (shown in each reader's time zone), else as given."""
    try:
        when = datetime.fromisoformat(indexed_at.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return plain(indexed_at or "unknown")
    return f"<t:{int(when.timestamp())}:f>"


def render_sources(collection: str, sources: list[SourceInfo]) -> list[Rendered]:
    """The documents of a collection: name, pages, chunks and when each was indexed."""
    if not sources:
        embed = discord.Embed(
            title=truncate(f"No documents in collection “{collection}”", TITLE_MAX),
            description="An admin can add some with `/upload`.",
            colour=COLOUR_INFO,
        )
        return [Rendered(embeds=[embed])]
    lines = []
    for i, s in enumerate(sorted(sources, key=lambda s: s.file.lower()), start=1):
        title = f" — {plain(s.title)}" if s.title and s.title != s.file else ""
        status = f" · {plain(s.status)}" if s.status and s.status != "current" else ""
        lines.append(
            f"**{i}. {plain(s.file)}**{title}\n{plural(s.pages, 'page')} · "
            f"{plural(s.chunks, 'chunk')} · indexed {format_when(s.indexed_at)}{status}"
        )
    blocks = _pack_lines(lines, DESCRIPTION_MAX - 100)
    total_chunks = sum(s.chunks for s in sources)
    embeds = []
    for i, block in enumerate(blocks):
        embed = discord.Embed(description=block, colour=COLOUR_INFO)
        if i == 0:
            embed.title = truncate(f"{plural(len(sources), 'document')} in “{collection}”", TITLE_MAX)
        embeds.append(embed)
    embeds[-1].set_footer(text=f"Collection: {collection} · {total_chunks} chunks")
    return pack_messages(embeds)


def _file_report_value(f: FileReport) -> str:
    if not f.ok:
        return truncate(f"❌ {neutralise(f.error or 'could not be indexed')}", FIELD_VALUE_MAX)
    lines = [f"{plural(f.pages, 'page')} · {plural(f.chunks, 'chunk')}"]
    if f.replaced:
        lines.append(f"Replaced the earlier {plain(f.replaced)}")
    if f.modules:
        lines.append("Modules: " + ", ".join(plain(m) for m in f.modules))
    lines.extend(f"⚠️ {neutralise(w)}" for w in f.warnings)
    if f.left_out():
        lines.append(f"Left out of the index: {plain(f.left_out())}")
    if f.guessed():
        lines.append(f"Read by a guess: {plain(f.guessed())}")
    if f.error:
        lines.append(f"❌ {neutralise(f.error)}")
    return truncate("\n".join(lines), FIELD_VALUE_MAX)


def render_ingest_report(report: IngestReport, action: str = "Indexed") -> list[Rendered]:
    """Summary of an upload, re-index or removal: per file pages, chunks, modules, warnings, errors."""
    failed = [f for f in report.files if not f.ok]
    warned = any(f.warnings for f in report.files)
    into = frontend.report_preposition(action)
    if report.files and len(failed) == len(report.files):
        colour, title = COLOUR_ERROR, f"{action}: nothing changed in “{report.collection}”"
    elif failed or warned:
        colour, title = COLOUR_WARNING, f"{action} {into} “{report.collection}”, with warnings"
    else:
        colour, title = COLOUR_ANSWERED, f"{action} {into} “{report.collection}”"
    modules = sorted({m for f in report.files for m in f.modules})
    pages = sum(f.pages for f in report.files if f.ok)
    chunks = sum(f.chunks for f in report.files if f.ok)
    summary = [
        f"**{pages}** {'page' if pages == 1 else 'pages'}, **{chunks}** {'chunk' if chunks == 1 else 'chunks'} from "
        f"{len(report.files) - len(failed)}/{len(report.files)} file(s).",
        f"The collection now holds **{plural(report.total_chunks, 'chunk')}**.",
    ]
    if modules:
        summary.append("Modules found: " + truncate(", ".join(plain(m) for m in modules), 1500))
    if not report.changed:
        summary.append("The index was not changed.")
    embed = discord.Embed(title=truncate(title, TITLE_MAX), description="\n".join(summary), colour=colour)
    embeds = [embed]
    for f in report.files:
        target = embeds[-1]
        name = truncate(
            ("✅ " if f.ok and not f.warnings else "⚠️ " if f.ok else "❌ ") + plain(f.file), FIELD_NAME_MAX
        )
        value = _file_report_value(f)
        if (
            len(target.fields) >= FIELDS_PER_EMBED
            or len(target) + len(name) + len(value) > EMBED_TOTAL_MAX - 200
        ):
            target = discord.Embed(colour=colour)
            embeds.append(target)
        target.add_field(name=name, value=value, inline=False)
    if report.index_version:
        embeds[-1].set_footer(text=f"Collection: {report.collection} · index {report.index_version}")
    else:
        embeds[-1].set_footer(text=f"Collection: {report.collection}")
    return pack_messages(embeds)


def progress_text(progress: dict, filename: str | None = None) -> str:
    """ "Embedding 120/300 chunks…" from a worker progress dict (stage, done, total)."""
    stage = str(progress.get("stage") or "working")
    done, total = progress.get("done"), progress.get("total")
    what = f" {plain(filename)}:" if filename else ""
    noun = "chunks" if stage.startswith("embed") else ""
    if isinstance(done, int) and isinstance(total, int) and total > 0:
        return f"⏳{what} {stage.capitalize()} {done}/{total} {noun}".rstrip() + "…"
    return f"⏳{what} {stage.capitalize()}…"


def notice(title: str, message: str = "", *, error: bool = True) -> Rendered:
    """A one-embed message: a refusal, an error, or a short confirmation."""
    embed = discord.Embed(
        title=truncate(title, TITLE_MAX),
        description=truncate(neutralise(message), DESCRIPTION_MAX) or None,
        colour=COLOUR_ERROR if error else COLOUR_INFO,
    )
    return Rendered(embeds=[embed])


def admin_notice(title: str, message: str, *, error: bool) -> list[Rendered]:
    """An admin command's reply: :func:`notice` where it fits one embed; a longer one (a course's
    card, a long list of disagreements) goes on in further embeds and messages instead of being cut."""
    text = neutralise(message)
    if len(text) <= DESCRIPTION_MAX:
        return [notice(title, message, error=error)]
    return pack_messages(_body_embeds(text, COLOUR_ERROR if error else COLOUR_INFO, title, DESCRIPTION_MAX))


def rate_limited(retry_after_s: float, limit: int) -> Rendered:
    """The friendly 'slow down' message: how many questions a minute, and when to ask again."""
    seconds = max(1, int(retry_after_s + 0.999))
    return notice(
        "Slow down a little",
        f"You can ask {limit} questions a minute. Try again in {seconds} s.",
        error=False,
    )


def render_gap_report(report: GapReport) -> Rendered:
    """The teacher's gap report: one sentence and a short table of the largest topics (the CSV with
    every topic is attached by the bot)."""
    body = f"{neutralise(summary_line(report))}\n```\n{table(report, limit=10, width=40)}\n```"
    disagree = disagreements(report, limit=5, width=120)
    if disagree:
        body += "\n" + neutralise("\n".join(disagree))
    embed = discord.Embed(
        title=truncate(f"Unanswered questions — {report.collection}", TITLE_MAX),
        description=truncate(body, DESCRIPTION_MAX),
        colour=COLOUR_INFO,
    )
    embed.set_footer(text="Full list in the attached CSV. Who asked is never recorded.")
    return Rendered(embeds=[embed])
