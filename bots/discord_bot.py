"""`syllabot discord`: the Discord front-end (discord.py application commands).

The bot holds no retrieval code. For every command it validates input, checks permissions and the
per-user rate limit, acknowledges Discord at once (``defer``: Discord allows 3 s), hands the work to
a worker through :class:`shared.queue.QueueClient`, and renders what comes back with
:mod:`bots.discord_render`. Every failure becomes a message in the same interaction: a student who
asks must always see *something*.

Commands: ``/ask``, ``/sources`` for everyone; ``/upload``, ``/reindex``, ``/remove``,
``/collection set|show|list|drop`` and ``/report`` (the gap report, with its CSV attached) for admins (Manage
Server, or a role in ``DISCORD_ADMIN_ROLE_IDS``); with ``DISCORD_REPORT_CHANNEL_ID`` set, the gap
report is also posted there once a week.
Admin commands are registered with ``default_permissions(manage_guild=True)`` so Discord hides them
from other members, and checked again when run, because a server can override who sees them.

Endpoints: ``DISCORD_API_BASE`` replaces ``discord.http.Route.BASE`` (REST, webhooks and interaction
callbacks all build their URLs from it) and ``DISCORD_GATEWAY_URL`` replaces
``DiscordWebSocket.DEFAULT_GATEWAY``, which discord.py 2.7's plain ``Client`` connects to directly
(it never asks ``GET /gateway``); see :func:`apply_endpoint_overrides`.
"""

from __future__ import annotations

import asyncio
import io
import logging
import re
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

import aiohttp
import discord
import redis.asyncio as aioredis
import yarl
from discord import app_commands
from discord.gateway import DiscordWebSocket
from discord.utils import MISSING

from syllabot.bots import discord_render as render
from syllabot.bots.frontend import (
    AdminReply,
    QuestionRejected,
    UsageError,
    ask_streamed,
    before_queueing,
    check_question,
    classify,
    drop_collection,
    is_expected,
    list_collections,
    list_conflicts,
    mark_document,
    repeat_weekly_post,
    show_card,
)
from syllabot.shared.bindings import Bindings, InvalidCollectionName, validate_collection_name
from syllabot.shared.config import Settings
from syllabot.shared.feedback import Feedback, UnknownAnswer
from syllabot.shared.formats import SUPPORTED_TYPES, clean_name, is_document_name
from syllabot.shared.gap_report import (
    DEFAULT_REPORT_DAYS,
    MAX_REPORT_DAYS,
    GapReport,
    csv_filename,
    post_weekly,
    to_csv,
)
from syllabot.shared.keys import Keys
from syllabot.shared.metrics import QuestionMetrics, start_endpoint
from syllabot.shared.pseudonyms import pseudonym, pseudonym_key
from syllabot.shared.queue import QueueClient, QueueError, QueueTimeout, RedisUnreachable
from syllabot.shared.ratelimit import RateLimiter
from syllabot.shared.redis_conn import (
    REDIS_ERRORS,
    Durability,
    RedisUnavailable,
    async_client_at,
    resolve_redis_url,
)
from syllabot.shared.schema import MAX_QUESTION_CHARS, Answer, AskRequest, IngestReport, SourceInfo
from syllabot.shared.threads import thread_id

log = logging.getLogger("syllabot.discord")

PLATFORM = "discord"
#: Every message is sent with this: the bot never pings anyone, whatever the text says.
NO_PINGS = discord.AllowedMentions.none()
#: An interaction token is valid for 15 minutes; after that the reply cannot be edited at all.
TOKEN_LIFETIME_S = 15 * 60
#: Stop waiting this long before the token dies, so there is still time to say what happened.
TOKEN_SAFETY_S = 30
#: Bound on the one Redis round trip done before deferring (rate limit): Discord wants a reply in 3 s.
PRE_DEFER_REDIS_S = 1.5
#: Minimum seconds between progress edits (Discord rate-limits webhook edits to about 5 per 5 s).
PROGRESS_EVERY_S = 1.5
#: Autocomplete must answer within 3 s; the list of sources is cached this long per collection.
AUTOCOMPLETE_CACHE_S = 15.0
#: One bound on *all* the work behind an autocomplete (binding lookup + sources), leaving ~0.5 s of
#: Discord's 3 s for the gateway and the callback; past it the user just sees no suggestions.
AUTOCOMPLETE_TIMEOUT_S = 2.5
#: Bound on the Redis work behind a 👍/👎 click (done after the click is acknowledged).
VOTE_REDIS_S = 5.0
#: File types /upload accepts (the worker's loaders).
T = TypeVar("T")


# --- endpoints ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Endpoints:
    """The REST base and gateway URL discord.py uses; returned so tests can restore them."""

    api_base: str
    gateway: yarl.URL


def current_endpoints() -> Endpoints:
    return Endpoints(discord.http.Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY)


def apply_endpoint_overrides(settings: Settings) -> Endpoints:
    """Point discord.py at ``DISCORD_API_BASE`` / ``DISCORD_GATEWAY_URL``; return the previous values.

    Both are class attributes, read each time a request or a connection is made, so setting them
    before ``Client.start`` redirects everything: ``Route.BASE`` is used by the HTTP client and by
    the interaction webhooks (callbacks, ``@original`` edits, follow-ups); ``DEFAULT_GATEWAY`` is
    where ``Client.connect`` opens the websocket (and where it goes back after an invalidated
    session). A resumed session uses the ``resume_gateway_url`` the gateway itself sent in READY.
    The API base includes the version, e.g. ``http://127.0.0.1:8080/api/v10``.
    """
    previous = current_endpoints()
    if settings.discord_api_base:
        discord.http.Route.BASE = settings.discord_api_base.rstrip("/")
    if settings.discord_gateway_url:
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(settings.discord_gateway_url)
    return previous


def restore_endpoints(endpoints: Endpoints) -> None:
    discord.http.Route.BASE = endpoints.api_base
    DiscordWebSocket.DEFAULT_GATEWAY = endpoints.gateway


# --- user-facing failure messages --------------------------------------------------------------
def failure_message(exc: BaseException, *, timeout_s: float | None = None) -> render.Rendered:
    """What to tell a user when a job could not be done: the front-end core's words
    (:func:`bots.frontend.classify`), as a Discord notice."""
    failure = classify(exc, timeout_s=timeout_s)
    return render.notice(failure.title, render.truncate(failure.detail, 1500))


# --- feedback buttons --------------------------------------------------------------------------
class VoteButton(
    discord.ui.DynamicItem[discord.ui.Button],
    template=r"syllabot:vote:(?P<vote>up|down):(?P<answer_id>[0-9A-Za-z]{1,64})",
):
    """👍/👎 under an answer. The custom_id carries the vote and the answer id, so the button keeps
    working after the bot restarts (no in-memory view state) and on any replica."""

    def __init__(self, vote: str, answer_id: str) -> None:
        self.vote = vote
        self.answer_id = answer_id
        up = vote == "up"
        super().__init__(
            discord.ui.Button(
                style=discord.ButtonStyle.secondary,
                emoji="👍" if up else "👎",
                label="Helpful" if up else "Not helpful",
                custom_id=f"syllabot:vote:{vote}:{answer_id}",
            )
        )

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: Any, /
    ) -> VoteButton:
        return cls(match["vote"], match["answer_id"])

    async def callback(self, interaction: discord.Interaction) -> None:
        bot = interaction.client
        assert isinstance(bot, SyllabotBot)
        await bot.handle_vote(interaction, self.vote, self.answer_id)


def vote_view(answer_id: str) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(VoteButton("up", answer_id))
    view.add_item(VoteButton("down", answer_id))
    return view


class FollowUpButton(
    discord.ui.DynamicItem[discord.ui.Button],
    template=r"syllabot:followup:(?P<privacy>p|o):(?P<conversation>[0-9A-Za-z-]{1,64})",
):
    """ "Ask a follow-up" under an answer: opens a modal; the question typed there is answered against
    the conversation (``AskRequest.thread``), privately when the answer was private. The custom_id
    carries both, so the button works after a restart and on any replica."""

    def __init__(self, conversation: str, private: bool) -> None:
        self.conversation = conversation
        self.private = private
        super().__init__(
            discord.ui.Button(
                style=discord.ButtonStyle.primary,
                emoji="💬",
                label="Ask a follow-up",
                custom_id=f"syllabot:followup:{'p' if private else 'o'}:{conversation}",
            )
        )

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: Any, /
    ) -> FollowUpButton:
        return cls(match["conversation"], match["privacy"] == "p")

    async def callback(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_modal(FollowUpModal(self.conversation, self.private))


#: A follow-up modal's custom_id: the privacy and the conversation, so a submission is answered by
#: :meth:`SyllabotBot.on_interaction` whichever process opened the modal (one restarted meanwhile,
#: another replica). Modals of before the privacy was added carry the conversation alone: public.
FOLLOW_UP_MODAL = re.compile(
    r"syllabot:followup-modal:(?:(?P<privacy>p|o):)?(?P<conversation>[0-9A-Za-z-]{1,64})"
)


class FollowUpModal(discord.ui.Modal, title="Ask a follow-up"):
    """The follow-up question's form. Its submission is answered from the custom_id alone (see
    :data:`FOLLOW_UP_MODAL`), not by this object, which a restart would lose."""

    question: discord.ui.TextInput[FollowUpModal] = discord.ui.TextInput(
        label="Your follow-up",
        style=discord.TextStyle.paragraph,
        placeholder="e.g. and which textbook for that?",
        max_length=MAX_QUESTION_CHARS,
    )

    def __init__(self, conversation: str, private: bool) -> None:
        super().__init__(custom_id=f"syllabot:followup-modal:{'p' if private else 'o'}:{conversation}")


def answer_view(answer_id: str | None, conversation: str, private: bool) -> discord.ui.View:
    """Under an answer: 👍/👎 (when the answer could be recorded) and "Ask a follow-up"."""
    view = vote_view(answer_id) if answer_id else discord.ui.View(timeout=None)
    view.add_item(FollowUpButton(conversation, private))
    return view


# --- the client --------------------------------------------------------------------------------
class SyllabotBot(discord.Client):
    """discord.py client with the Syllabot command tree and the shared Redis helpers."""

    def __init__(self, settings: Settings, queue: QueueClient | None = None, **options: Any) -> None:
        """``options`` go to ``discord.Client`` (e.g. ``guild_ready_timeout`` in tests)."""
        intents = discord.Intents.none()
        intents.guilds = True  # guild and role cache, so admin roles resolve; nothing privileged
        super().__init__(intents=intents, allowed_mentions=NO_PINGS, **options)
        self.settings = settings
        self.keys = Keys(settings.key_prefix)
        self._pseudonym_key = pseudonym_key(settings, PLATFORM)
        self.queue = queue or QueueClient(settings)
        self.redis: aioredis.Redis | None = None
        self.tree = app_commands.CommandTree(self)
        self.tree.error(self._on_tree_error)
        for command in COMMANDS:
            self.tree.add_command(command)
        self._sources_cache: dict[str, tuple[float, list[SourceInfo]]] = {}
        self._weekly: asyncio.Task[None] | None = None
        # Served by run_discord when SYLLABOT_METRICS_PORT is set; counted either way.
        self.metrics = QuestionMetrics()

    # --- lifecycle ------------------------------------------------------------------------------
    async def setup_hook(self) -> None:
        """Connect to Redis (lazily usable later if it is down now), register buttons, sync commands."""
        url = await asyncio.to_thread(resolve_redis_url, self.settings)
        self.redis = async_client_at(url)
        try:
            await self.queue.connect()
        except QueueError as exc:  # keep running: each command will say Redis is unreachable
            log.warning("queue not connected yet: %s", exc)
        self.add_dynamic_items(VoteButton, FollowUpButton)
        await self.sync_commands()
        if self.settings.discord_report_channel_id is not None:
            self._weekly = asyncio.create_task(
                repeat_weekly_post(self.post_weekly_report), name="syllabot-weekly-report"
            )

    async def sync_commands(self) -> None:
        """Guild sync is instant (for development); global sync can take a while to show up."""
        try:
            if self.settings.discord_guild_ids:
                for guild_id in self.settings.discord_guild_ids:
                    guild = discord.Object(id=guild_id)
                    self.tree.copy_global_to(guild=guild)
                    synced = await self.tree.sync(guild=guild)
                    log.info("synced %d commands to guild %s", len(synced), guild_id)
            else:
                synced = await self.tree.sync()
                log.info("synced %d global commands (may take up to an hour to appear)", len(synced))
        except discord.HTTPException:
            log.exception("could not sync application commands; existing registrations stay in use")

    async def close(self) -> None:
        weekly, self._weekly = self._weekly, None
        if weekly is not None:
            weekly.cancel()
        await super().close()
        await self.queue.close()
        if self.redis is not None:
            await self.redis.aclose()
            self.redis = None

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """A follow-up modal's submission, answered from its custom_id (:data:`FOLLOW_UP_MODAL`):
        discord.py hands a modal only to the process that opened it, and a restart forgets it."""
        if interaction.type is not discord.InteractionType.modal_submit:
            return
        data = cast("dict[str, Any]", interaction.data or {})
        match = FOLLOW_UP_MODAL.fullmatch(str(data.get("custom_id", "")))
        if match is None:
            return
        typed = [
            str(component.get("value") or "")
            for row in data.get("components", [])
            for component in row.get("components", [])
        ]
        await self.handle_ask(
            interaction,
            typed[0] if typed else "",
            private=match["privacy"] == "p",
            conversation=match["conversation"],
        )

    async def on_ready(self) -> None:
        log.info("connected as %s (%s) to %d guild(s)", self.user, self.application_id, len(self.guilds))

    # --- helpers --------------------------------------------------------------------------------
    def _redis(self) -> aioredis.Redis:
        if self.redis is None:
            raise RedisUnreachable("the bot has no Redis connection yet")
        return self.redis

    @property
    def bindings(self) -> Bindings:
        return Bindings(
            self._redis(),
            self.keys,
            PLATFORM,
            default=self.settings.default_collection,
            durability=Durability.of(self.settings),
        )

    @property
    def feedback(self) -> Feedback:
        return Feedback(self._redis(), self.keys, Durability.of(self.settings))

    def is_admin(self, interaction: discord.Interaction) -> bool:
        """Manage Server (or Administrator) in this channel, or one of the configured admin roles."""
        if interaction.guild_id is None:
            return False
        perms = interaction.permissions
        if perms.manage_guild or perms.administrator:
            return True
        admin_roles = set(self.settings.discord_admin_role_ids)
        roles = getattr(interaction.user, "roles", [])
        return bool(admin_roles) and any(role.id in admin_roles for role in roles)

    async def require_admin(self, interaction: discord.Interaction) -> bool:
        """True for admins; otherwise send the ephemeral refusal and return False."""
        if self.is_admin(interaction):
            return True
        roles = " or one of the Syllabot admin roles" if self.settings.discord_admin_role_ids else ""
        where = "" if interaction.guild_id else " Run it in a server channel."
        await send(
            interaction,
            [
                render.notice(
                    "Admins only",
                    f"This command needs the **Manage Server** permission{roles}.{where}",
                )
            ],
            ephemeral=True,
        )
        return False

    @staticmethod
    def parent_channel_id(interaction: discord.Interaction) -> int | None:
        """The channel a thread (or forum post) belongs to; None outside threads.

        In a thread ``interaction.channel_id`` is the *thread's* id, so a binding of the channel the
        thread was opened in has to be looked up through ``parent_id``.
        """
        return getattr(interaction.channel, "parent_id", None) if _in_thread(interaction) else None

    def scopes(self, interaction: discord.Interaction) -> list[str]:
        """Binding scopes, most specific first: thread, then its parent channel, then the server."""
        scopes = [f"channel:{interaction.channel_id}"] if interaction.channel_id else []
        parent_id = self.parent_channel_id(interaction)
        if parent_id:
            scopes.append(f"channel:{parent_id}")
        if interaction.guild_id:
            scopes.append(f"guild:{interaction.guild_id}")
        return scopes

    async def collection_for(self, interaction: discord.Interaction) -> str:
        return await self.bindings.resolve(*self.scopes(interaction))

    def who(self, interaction: discord.Interaction) -> str:
        """The member as a keyed hash (shared/pseudonyms.py): their id never leaves this process."""
        return pseudonym(self._pseudonym_key, PLATFORM, interaction.user.id)

    @staticmethod
    def budget(interaction: discord.Interaction, wanted: float | None) -> float:
        """Seconds we may still wait and be able to edit the reply (the token lasts 15 minutes)."""
        elapsed = (datetime.now(UTC) - interaction.created_at).total_seconds()
        left = TOKEN_LIFETIME_S - TOKEN_SAFETY_S - max(0.0, elapsed)
        return max(1.0, min(wanted, left) if wanted else left)

    async def sources_cached(self, collection: str) -> list[SourceInfo]:
        cached = self._sources_cache.get(collection)
        if cached and time.monotonic() - cached[0] < AUTOCOMPLETE_CACHE_S:
            return cached[1]
        sources = await self.queue.sources(collection, timeout=self.settings.ask_timeout_s)
        self._sources_cache[collection] = (time.monotonic(), sources)
        return sources

    def progress_editor(
        self, interaction: discord.Interaction, filename: str | None = None
    ) -> Callable[[dict], Awaitable[None]]:
        """A throttled progress callback that edits the deferred reply ("Embedding 120/300 chunks…")."""
        last = 0.0

        async def on_progress(progress: dict) -> None:
            nonlocal last
            now = time.monotonic()
            done, total = progress.get("done"), progress.get("total")
            finished = isinstance(done, int) and done == total
            if now - last < PROGRESS_EVERY_S and not finished:
                return
            last = now
            try:
                await asyncio.wait_for(
                    interaction.edit_original_response(
                        content=render.progress_text(progress, filename), allowed_mentions=NO_PINGS
                    ),
                    timeout=5,
                )
            except Exception as exc:  # progress is a nicety: never let it break the ingest
                log.debug(
                    "progress edit failed: %s", exc, exc_info=not isinstance(exc, discord.HTTPException)
                )

        return on_progress

    async def _on_tree_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        """Anything a command let escape still ends in a message, never in silence."""
        original = getattr(error, "original", error)
        log.error("command failed", exc_info=original)
        await safe_send(interaction, [failure_message(original)], ephemeral=True)

    @staticmethod
    def conversation_of(interaction: discord.Interaction) -> str:
        """A new question's conversation: the Discord thread it is asked in (so ``/ask`` in a thread
        continues that thread's conversation), else a new one named after the interaction."""
        if _in_thread(interaction) and interaction.channel_id:
            return f"thread-{interaction.channel_id}"
        return str(interaction.id)

    # --- commands -------------------------------------------------------------------------------
    async def handle_ask(
        self,
        interaction: discord.Interaction,
        question: str,
        *,
        private: bool = False,
        conversation: str | None = None,
    ) -> None:
        """``/ask`` and a follow-up's modal. ``private``: only the asker sees the question and the
        answer (ephemeral from the deferral on). ``conversation``: the follow-up's conversation."""
        try:
            question = check_question(question)
        except QuestionRejected as rejected:
            if rejected.kind == "empty":
                notice = render.notice(
                    "Empty question", "Type a question after `/ask`, e.g. `/ask What is in module 2?`"
                )
            else:
                notice = render.notice(
                    "Question too long",
                    f"Please keep questions under {rejected.limit} characters (this one has {rejected.length}).",
                )
            await send(interaction, [notice], ephemeral=True)
            return
        # The rate limit is checked *before* deferring so the refusal can be ephemeral (only the asker
        # sees it); that one Redis round trip is bounded well inside Discord's 3 s.
        # A Sentinel failover (~2.5 s) does not fit in Discord's 3 s: when the first try fails there,
        # the reply is deferred and the check waits the failover out like the queue (before_queueing).
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.budget(interaction, self.settings.ask_timeout_s)
        sentinel = bool(self.settings.redis_sentinels)
        limiter = RateLimiter(self._redis(), self.keys, self.settings.rate_limit_per_minute)
        deferred = False
        try:
            decision = await asyncio.wait_for(
                limiter.check(PLATFORM, self.who(interaction)), timeout=PRE_DEFER_REDIS_S
            )
        except (TimeoutError, *REDIS_ERRORS) as exc:
            log.warning("rate limit check failed: %s", exc)
            if not sentinel:
                await send(interaction, [failure_message(RedisUnreachable(str(exc)))], ephemeral=True)
                return
            await interaction.response.defer(thinking=True, ephemeral=private)
            deferred = True
            try:
                decision = await before_queueing(
                    lambda: limiter.check(PLATFORM, self.who(interaction)),
                    sentinel,
                    deadline - loop.time(),
                    "checking the rate limit",
                )
            except REDIS_ERRORS as lost:
                await safe_send(
                    interaction, [failure_message(RedisUnreachable(str(lost)))], ephemeral=private
                )
                return
        if not decision.allowed:
            limited = [render.rate_limited(decision.retry_after_s, self.settings.rate_limit_per_minute)]
            await (safe_send if deferred else send)(interaction, limited, ephemeral=not deferred or private)
            return

        if not deferred:
            await interaction.response.defer(thinking=True, ephemeral=private)
        conversation = conversation or self.conversation_of(interaction)
        collection = ""  # not resolved yet when the binding lookup itself fails
        timeout = max(1.0, deadline - loop.time())
        try:
            collection = await before_queueing(
                lambda: self.collection_for(interaction),
                sentinel,
                deadline - loop.time(),
                "looking up the channel's collection",
            )
            timeout = max(1.0, deadline - loop.time())
            request = AskRequest(
                question=question,
                collection=collection,
                user=self.who(interaction),
                platform="discord",
                thread=thread_id(PLATFORM, conversation),
            )
            answer = await ask_streamed(
                self.queue,
                request,
                timeout=timeout,
                every_s=self.settings.stream_edit_every_s,
                show=lambda text: self.show_partial(interaction, text, question),
            )
        except Exception as exc:  # every failure ends in a message; a bug also in the log with its traceback
            self.metrics.count_failure(collection, PLATFORM, exc)
            log.warning("ask failed: %r", exc, exc_info=not is_expected(exc))
            await safe_send(interaction, [failure_message(exc, timeout_s=timeout)], ephemeral=private)
            return
        self.metrics.count(collection, PLATFORM, answer.status)
        await self.send_answer(interaction, answer, question, conversation=conversation, private=private)

    @staticmethod
    async def show_partial(interaction: discord.Interaction, text: str, question: str) -> None:
        """The answer so far, in place of "thinking…" (the deferred reply); the final edit replaces it."""
        partial = render.render_partial(text, question)
        await asyncio.wait_for(
            interaction.edit_original_response(
                content=partial.content, embeds=partial.embeds, allowed_mentions=NO_PINGS
            ),
            timeout=5,
        )

    async def send_answer(
        self,
        interaction: discord.Interaction,
        answer: Answer,
        question: str,
        *,
        conversation: str | None = None,
        private: bool = False,
    ) -> None:
        if not answer.question:
            answer = answer.model_copy(update={"question": question})
        answer_id: str | None = None
        try:
            answer_id = await self.feedback.record_answer(answer, PLATFORM, self.who(interaction))
        except Exception as exc:  # the answer matters more than the feedback buttons
            log.warning("could not record answer for feedback: %s", exc, exc_info=not is_expected(exc))
        view = answer_view(answer_id, conversation or self.conversation_of(interaction), private)
        await safe_send(interaction, render.render_answer(answer), view=view, ephemeral=private)

    async def handle_vote(self, interaction: discord.Interaction, vote: str, answer_id: str) -> None:
        """Acknowledge the click at once, then store the vote and confirm privately.

        ``defer()`` without ``thinking`` on a component interaction is DEFERRED_UPDATE_MESSAGE (type 6):
        no loading state, and the answer the buttons sit under stays exactly as it is (its
        ``@original`` is never edited here). The confirmation is an ephemeral follow-up, which after a
        type-6 ack is a new message that honours the ephemeral flag.
        """
        try:
            await interaction.response.defer(thinking=False)
        except discord.HTTPException as exc:
            log.warning("could not acknowledge vote click %s: %s", interaction.id, exc)
            return
        emoji = "👍" if vote == "up" else "👎"
        try:
            changed = await asyncio.wait_for(
                self.feedback.vote(answer_id, self.who(interaction), vote),  # type: ignore[arg-type]
                timeout=VOTE_REDIS_S,
            )
        except UnknownAnswer:
            message = render.notice(
                "Too late to vote", "This answer is too old to take feedback.", error=False
            )
        except TimeoutError:
            log.warning("vote on %s timed out after %.0f s", answer_id, VOTE_REDIS_S)
            message = render.notice(
                "Vote not saved",
                f"Syllabot's database did not answer within {VOTE_REDIS_S:.0f} s, so your "
                f"{emoji} may not have been recorded. Please try again in a minute.",
            )
        except Exception as exc:
            log.warning("vote failed: %r", exc, exc_info=not is_expected(exc))
            message = failure_message(exc)
        else:
            title = f"Vote changed to {emoji}" if changed else f"Thanks for the feedback {emoji}"
            message = render.notice(title, "It helps the course staff improve the materials.", error=False)
        await safe_send(interaction, [message], ephemeral=True)

    async def handle_sources(self, interaction: discord.Interaction) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        timeout = self.budget(interaction, self.settings.ask_timeout_s)
        try:
            collection = await self.collection_for(interaction)
            sources = await self.queue.sources(collection, timeout=timeout)
        except Exception as exc:
            log.info("sources failed: %r", exc, exc_info=not is_expected(exc))
            await safe_send(interaction, [failure_message(exc, timeout_s=timeout)], ephemeral=True)
            return
        self._sources_cache[collection] = (time.monotonic(), sources)
        await safe_send(interaction, render.render_sources(collection, sources), ephemeral=True)

    async def handle_upload(
        self, interaction: discord.Interaction, file: discord.Attachment, replace: bool = False
    ) -> None:
        if not await self.require_admin(interaction):
            return
        filename = clean_name(file.filename)  # no bidi override or NUL is shown or stored
        if not is_document_name(filename):
            await send(
                interaction,
                [
                    render.notice(
                        "Unsupported file type",
                        f"`{render.plain(filename)}`: upload {SUPPORTED_TYPES} files.",
                    )
                ],
                ephemeral=True,
            )
            return
        limit = self.settings.max_document_bytes
        if file.size > limit:  # refused from the attachment's metadata, before downloading anything
            await send(
                interaction,
                [
                    render.notice(
                        "File too large",
                        f"`{render.plain(filename)}` is {file.size / 1_048_576:.1f} MB; "
                        f"the limit is {limit / 1_048_576:.1f} MB (SYLLABOT_MAX_DOCUMENT_MB).",
                    )
                ],
                ephemeral=True,
            )
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        timeout = self.budget(interaction, None)
        try:
            collection = await self.collection_for(interaction)
            await safe_edit_content(interaction, f"⏳ Downloading {render.plain(filename)}…")
            data = await asyncio.wait_for(file.read(), timeout=min(120.0, timeout))
            if len(data) > limit:  # the metadata lied; still refuse
                raise UsageError(f"{filename} is larger than the {limit / 1_048_576:.1f} MB limit")
            report = await self.queue.ingest(
                collection,
                filename,
                data,
                self.who(interaction),
                progress=self.progress_editor(interaction, filename),
                timeout=self.budget(interaction, None),
                replace=replace,
            )
        except (TimeoutError, QueueTimeout) as exc:
            if isinstance(exc, QueueTimeout) and exc.withdrawn:  # no worker started it: nothing changed
                await safe_send(interaction, [failure_message(exc)], ephemeral=True)
                return
            await safe_send(
                interaction,
                [
                    render.notice(
                        "Still indexing",
                        "This is taking longer than Discord lets me wait. If a worker picked the file up it "
                        "keeps going; check `/sources` in a few minutes.",
                        error=False,
                    )
                ],
                ephemeral=True,
            )
            return
        except Exception as exc:
            log.info("upload failed: %r", exc, exc_info=not is_expected(exc))
            await safe_send(interaction, [failure_message(exc)], ephemeral=True)
            return
        self._sources_cache.pop(collection, None)
        await safe_send(interaction, render.render_ingest_report(report, action="Uploaded"), ephemeral=True)

    async def handle_reindex(self, interaction: discord.Interaction) -> None:
        if not await self.require_admin(interaction):
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        await self._run_admin_job(
            interaction,
            "Re-indexed",
            lambda collection: self.queue.reindex(
                collection,
                self.who(interaction),
                progress=self.progress_editor(interaction),
                timeout=self.budget(interaction, None),
            ),
        )

    async def handle_remove(self, interaction: discord.Interaction, document: str) -> None:
        if not await self.require_admin(interaction):
            return
        await interaction.response.defer(ephemeral=True, thinking=True)

        async def job(collection: str) -> IngestReport:
            sources = await self.queue.sources(collection, timeout=self.budget(interaction, 60))
            doc = next((s for s in sources if s.doc_id == document), None)
            doc = doc or next((s for s in sources if s.file == document), None)
            if doc is None:
                raise UsageError(f"no document {document!r} in collection {collection!r}; see /sources")
            return await self.queue.remove(
                collection, doc.doc_id, self.who(interaction), timeout=self.budget(interaction, None)
            )

        await self._run_admin_job(interaction, "Removed", job)

    async def handle_mark(
        self, interaction: discord.Interaction, document: str, status: str, by: str | None = None
    ) -> None:
        """``/supersede`` and ``/current``: which version of a document counts in this channel's
        collection (admins only, answered privately)."""

        async def work() -> AdminReply:
            collection = await self.collection_for(interaction)
            reply = await mark_document(
                self.queue,
                collection,
                document,
                status,
                self.who(interaction),
                by=by,
                timeout=self.budget(interaction, None),
            )
            self._sources_cache.pop(collection, None)
            return reply

        await self.handle_collection_admin(interaction, work, status)

    async def handle_conflicts(self, interaction: discord.Interaction) -> None:
        """``/conflicts``: where this channel's collection's documents disagree (admins only)."""
        await self._collection_reply(interaction, list_conflicts, "conflicts")

    async def handle_card(self, interaction: discord.Interaction) -> None:
        """``/card``: this channel's collection's course card, each fact with its source (admins only)."""
        await self._collection_reply(interaction, show_card, "card")

    async def _collection_reply(
        self,
        interaction: discord.Interaction,
        read: Callable[[QueueClient, str, float | None], Awaitable[AdminReply]],
        what: str,
    ) -> None:
        """An admin command that reads one thing of this channel's collection with ``read``
        (``frontend.list_conflicts``, ``show_card``), answered as :meth:`handle_collection_admin` does."""

        async def work() -> AdminReply:
            collection = await self.collection_for(interaction)
            return await read(self.queue, collection, self.budget(interaction, 60))

        await self.handle_collection_admin(interaction, work, what)

    async def _run_admin_job(
        self,
        interaction: discord.Interaction,
        action: str,
        job: Callable[[str], Awaitable[IngestReport]],
    ) -> None:
        try:
            collection = await self.collection_for(interaction)
            report = await job(collection)
        except Exception as exc:
            log.info("%s failed: %r", action.lower(), exc, exc_info=not is_expected(exc))
            await safe_send(interaction, [failure_message(exc)], ephemeral=True)
            return
        self._sources_cache.pop(collection, None)
        await safe_send(interaction, render.render_ingest_report(report, action=action), ephemeral=True)

    async def handle_report(self, interaction: discord.Interaction, days: int) -> None:
        """The gap report of this channel's collection, to the admin only: a table and the CSV."""
        if not await self.require_admin(interaction):
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        try:
            collection = await self.collection_for(interaction)
            report = await self.queue.report(collection, days, timeout=self.budget(interaction, 60))
        except Exception as exc:
            log.info("report failed: %r", exc, exc_info=not is_expected(exc))
            await safe_send(interaction, [failure_message(exc)], ephemeral=True)
            return
        if interaction.is_expired():
            return
        message = render.render_gap_report(report)
        try:
            await interaction.followup.send(
                embeds=message.embeds, file=_csv_file(report), ephemeral=True, allowed_mentions=NO_PINGS
            )
        except discord.HTTPException as exc:
            log.error("could not deliver the gap report to interaction %s: %s", interaction.id, exc)

    async def post_weekly_report(self, now: datetime | None = None) -> bool:
        """Post last week's gap report in DISCORD_REPORT_CHANNEL_ID once per ISO week (all replicas
        together); True when this call posted it."""
        channel_id = self.settings.discord_report_channel_id
        if channel_id is None:
            return False

        async def post() -> str:
            channel = self.get_channel(channel_id) or await self.fetch_channel(channel_id)
            scopes = [f"channel:{channel_id}"]
            guild_id = getattr(channel, "guild", None) and channel.guild.id  # type: ignore[union-attr]
            if guild_id:
                scopes.append(f"guild:{guild_id}")
            collection = await self.bindings.resolve(*scopes)
            report = await self.queue.report(collection, DEFAULT_REPORT_DAYS)
            message = render.render_gap_report(report)
            await channel.send(embeds=message.embeds, file=_csv_file(report), allowed_mentions=NO_PINGS)  # type: ignore[union-attr]
            return collection

        return await post_weekly(
            self._redis(), self.keys, PLATFORM, str(channel_id), now or datetime.now(UTC), post
        )

    async def autocomplete_documents(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        """Up to 25 documents of this channel's collection whose name contains what was typed."""
        if not self.is_admin(interaction):
            return []

        async def lookup() -> list[SourceInfo]:
            return await self.sources_cached(await self.collection_for(interaction))

        try:  # one deadline for both steps: Discord drops an autocomplete answer after 3 s
            sources = await asyncio.wait_for(lookup(), AUTOCOMPLETE_TIMEOUT_S)
        except Exception as exc:  # an empty list is the only failure autocomplete can show
            log.info("autocomplete failed: %r", exc, exc_info=not is_expected(exc))
            return []
        needle = current.lower().strip()
        choices = []
        for s in sorted(sources, key=lambda s: s.file.lower()):
            if needle and needle not in s.file.lower() and needle not in (s.title or "").lower():
                continue
            name = s.file if not s.title or s.title == s.file else f"{s.file} — {s.title}"
            choices.append(app_commands.Choice(name=render.truncate(name, 100), value=s.doc_id[:100]))
            if len(choices) == 25:
                break
        return choices

    async def handle_collection_set(self, interaction: discord.Interaction, name: str, scope: str) -> None:
        if not await self.require_admin(interaction):
            return
        try:
            name = validate_collection_name(name)
        except InvalidCollectionName as exc:
            await send(interaction, [render.notice("Invalid collection name", str(exc))], ephemeral=True)
            return
        parent_id = self.parent_channel_id(interaction)
        if scope == "channel":
            # In a thread, "this channel" is the channel the thread belongs to: binding the thread
            # alone would leave the rest of the class's channel (and its other threads) unchanged.
            target = f"channel:{parent_id or interaction.channel_id}"
            where = "the parent channel" if parent_id else "this channel"
        else:
            target, where = f"guild:{interaction.guild_id}", "this server"
        try:
            await asyncio.wait_for(self.bindings.bind(target, name), timeout=PRE_DEFER_REDIS_S)
        except Exception as exc:
            log.info("collection lookup failed: %r", exc, exc_info=not is_expected(exc))
            await send(interaction, [failure_message(exc)], ephemeral=True)
            return
        if scope == "server":
            message = f"`/ask` here searches **{name}**. Channels bound to their own collection keep it."
        elif parent_id:
            parent = getattr(interaction.channel, "parent", None)
            label = f"#{render.plain(parent.name)}" if parent is not None else "the parent channel"
            message = (
                f"This is a thread, so the binding is on its parent channel, {label}: `/ask` there "
                f"and in all its threads searches **{name}**. This overrides the server's collection."
            )
        else:
            message = f"`/ask` here searches **{name}**. This overrides the server's collection here."
        await send(
            interaction,
            [render.notice(f"{where.capitalize()} now uses “{name}”", message, error=False)],
            ephemeral=True,
        )

    async def handle_collection_admin(
        self, interaction: discord.Interaction, work: Callable[[], Awaitable[AdminReply]], what: str
    ) -> None:
        """``/collection list`` and ``/collection drop``: admins only, answered privately."""
        if not await self.require_admin(interaction):
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        try:
            reply = await work()
        except Exception as exc:
            log.info("%s failed: %r", what, exc, exc_info=not is_expected(exc))
            await safe_send(interaction, [failure_message(exc)], ephemeral=True)
            return
        if reply.ok and what == "drop":
            self._sources_cache.clear()
        await safe_send(
            interaction, render.admin_notice(reply.title, reply.body(), error=not reply.ok), ephemeral=True
        )

    async def handle_collection_list(self, interaction: discord.Interaction) -> None:
        await self.handle_collection_admin(
            interaction, lambda: list_collections(self.queue, timeout=self.budget(interaction, 60)), "list"
        )

    async def handle_collection_drop(
        self, interaction: discord.Interaction, name: str, confirm: bool
    ) -> None:
        await self.handle_collection_admin(
            interaction,
            lambda: drop_collection(
                self.queue, name, confirm, self.who(interaction), timeout=self.budget(interaction, None)
            ),
            "drop",
        )

    async def handle_collection_show(self, interaction: discord.Interaction) -> None:
        if not await self.require_admin(interaction):
            return
        try:
            collection = await asyncio.wait_for(self.collection_for(interaction), timeout=PRE_DEFER_REDIS_S)
        except Exception as exc:
            log.info("collection lookup failed: %r", exc, exc_info=not is_expected(exc))
            await send(interaction, [failure_message(exc)], ephemeral=True)
            return
        where = "This thread" if _in_thread(interaction) else "This channel"
        await send(
            interaction,
            [render.notice(f"{where} uses “{collection}”", "Change it with `/collection set`.", error=False)],
            ephemeral=True,
        )


# --- sending -----------------------------------------------------------------------------------
async def send(
    interaction: discord.Interaction,
    messages: list[render.Rendered],
    *,
    view: discord.ui.View | None = None,
    ephemeral: bool = False,
) -> None:
    """Send rendered messages as this interaction's reply: the first answers (or edits the deferred
    reply), the rest are follow-ups; ``view`` goes under the last one.

    After a component's DEFERRED_UPDATE_MESSAGE (``defer()`` without thinking on a button click)
    ``@original`` is the message the button is on, so every message is sent as a follow-up instead.
    """
    edit_first = interaction.response.is_done() and interaction.response.type not in _UPDATES_SOURCE
    for i, message in enumerate(messages):
        last = i == len(messages) - 1
        item_view = view if last and view is not None else MISSING
        if i == 0 and edit_first:
            await interaction.edit_original_response(
                content=message.content,
                embeds=message.embeds,
                view=item_view if item_view is not MISSING else None,
                allowed_mentions=NO_PINGS,
            )
        elif i == 0 and not interaction.response.is_done():
            await interaction.response.send_message(
                content=message.content,
                embeds=message.embeds,
                view=item_view,
                ephemeral=ephemeral,
                allowed_mentions=NO_PINGS,
            )
        else:
            await interaction.followup.send(
                content=message.content or MISSING,
                embeds=message.embeds,
                view=item_view,
                ephemeral=ephemeral,
                allowed_mentions=NO_PINGS,
            )


async def safe_send(
    interaction: discord.Interaction,
    messages: list[render.Rendered],
    *,
    view: discord.ui.View | None = None,
    ephemeral: bool = False,
) -> None:
    """:func:`send`, except that an expired token or a Discord error is logged instead of raised:
    by then there is no other way left to reach the user."""
    if interaction.is_expired():
        log.warning("interaction %s expired before its reply was ready", interaction.id)
        return
    try:
        await send(interaction, messages, view=view, ephemeral=ephemeral)
    except discord.HTTPException as exc:
        log.error("could not deliver the reply to interaction %s: %s", interaction.id, exc)


async def safe_edit_content(interaction: discord.Interaction, content: str) -> None:
    try:
        await asyncio.wait_for(
            interaction.edit_original_response(content=content, allowed_mentions=NO_PINGS), timeout=5
        )
    except Exception as exc:  # a status line is a nicety
        log.debug(
            "status edit failed: %s", exc, exc_info=not isinstance(exc, discord.HTTPException | TimeoutError)
        )


#: Responses after which ``@original`` is the message a component sits on, not a reply of ours.
_UPDATES_SOURCE = (
    discord.InteractionResponseType.deferred_message_update,
    discord.InteractionResponseType.message_update,
)


def _csv_file(report: GapReport) -> discord.File:
    return discord.File(io.BytesIO(to_csv(report).encode("utf-8")), filename=csv_filename(report))


def _in_thread(interaction: discord.Interaction) -> bool:
    """True in a thread or a forum/media post (discord.py builds a ``Thread`` for both)."""
    return isinstance(interaction.channel, discord.Thread)


def _bot(interaction: discord.Interaction) -> SyllabotBot:
    client = interaction.client
    assert isinstance(client, SyllabotBot)
    return client


# --- the command tree --------------------------------------------------------------------------
@app_commands.command(name="ask", description="Ask a question about your course materials")
@app_commands.describe(
    question="Your question (up to 2,000 characters)",
    private="Only you see the question and the answer",
)
async def ask_command(interaction: discord.Interaction, question: str, private: bool = False) -> None:
    await _bot(interaction).handle_ask(interaction, question, private=private)


@app_commands.command(name="sources", description="List the documents this channel's answers come from")
async def sources_command(interaction: discord.Interaction) -> None:
    await _bot(interaction).handle_sources(interaction)


@app_commands.command(name="upload", description="Admin: add a document (PDF, Markdown, text, DOCX)")
@app_commands.describe(
    file="The document to index into this channel's collection",
    replace="True: it replaces a document of another file name with its id, supersedes one with its title",
)
@app_commands.default_permissions(manage_guild=True)
@app_commands.guild_only()
async def upload_command(
    interaction: discord.Interaction, file: discord.Attachment, replace: bool = False
) -> None:
    await _bot(interaction).handle_upload(interaction, file, replace)


@app_commands.command(name="reindex", description="Admin: rebuild this channel's collection index")
@app_commands.default_permissions(manage_guild=True)
@app_commands.guild_only()
async def reindex_command(interaction: discord.Interaction) -> None:
    await _bot(interaction).handle_reindex(interaction)


@app_commands.command(name="remove", description="Admin: remove a document from this channel's collection")
@app_commands.describe(document="The document to remove")
@app_commands.default_permissions(manage_guild=True)
@app_commands.guild_only()
async def remove_command(interaction: discord.Interaction, document: str) -> None:
    await _bot(interaction).handle_remove(interaction, document)


@remove_command.autocomplete("document")
async def remove_autocomplete(
    interaction: discord.Interaction, current: str
) -> list[app_commands.Choice[str]]:
    return await _bot(interaction).autocomplete_documents(interaction, current)


@app_commands.command(
    name="supersede", description="Admin: mark a document as an old version, left out of answers"
)
@app_commands.describe(document="The old version", by="The document that replaces it (optional)")
@app_commands.default_permissions(manage_guild=True)
@app_commands.guild_only()
async def supersede_command(interaction: discord.Interaction, document: str, by: str | None = None) -> None:
    await _bot(interaction).handle_mark(interaction, document, "superseded", by)


@app_commands.command(name="conflicts", description="Admin: where this collection's documents disagree")
@app_commands.default_permissions(manage_guild=True)
@app_commands.guild_only()
async def conflicts_command(interaction: discord.Interaction) -> None:
    await _bot(interaction).handle_conflicts(interaction)


@app_commands.command(
    name="card", description="Admin: the course facts read from this collection, with sources"
)
@app_commands.default_permissions(manage_guild=True)
@app_commands.guild_only()
async def card_command(interaction: discord.Interaction) -> None:
    await _bot(interaction).handle_card(interaction)


@app_commands.command(name="current", description="Admin: mark a document as the current version")
@app_commands.describe(document="The document that counts")
@app_commands.default_permissions(manage_guild=True)
@app_commands.guild_only()
async def current_command(interaction: discord.Interaction, document: str) -> None:
    await _bot(interaction).handle_mark(interaction, document, "current")


@supersede_command.autocomplete("document")
@supersede_command.autocomplete("by")
@current_command.autocomplete("document")
async def version_autocomplete(
    interaction: discord.Interaction, current: str
) -> list[app_commands.Choice[str]]:
    return await _bot(interaction).autocomplete_documents(interaction, current)


@app_commands.command(
    name="report", description="Admin: what students asked that the materials did not answer"
)
@app_commands.describe(days="How many days back (default 7)")
@app_commands.default_permissions(manage_guild=True)
@app_commands.guild_only()
async def report_command(
    interaction: discord.Interaction, days: app_commands.Range[int, 1, MAX_REPORT_DAYS] = DEFAULT_REPORT_DAYS
) -> None:
    await _bot(interaction).handle_report(interaction, days)


collection_group = app_commands.Group(
    name="collection",
    description="Admin: which collection this server or channel answers from",
    default_permissions=discord.Permissions(manage_guild=True),
    guild_only=True,
)


@collection_group.command(name="set", description="Bind this server or this channel to a collection")
@app_commands.describe(name="Collection name, e.g. os-2026", scope="Whole server, or only this channel")
@app_commands.choices(
    scope=[
        app_commands.Choice(name="server", value="server"),
        app_commands.Choice(name="channel", value="channel"),
    ]
)
async def collection_set_command(
    interaction: discord.Interaction, name: str, scope: app_commands.Choice[str] | None = None
) -> None:
    await _bot(interaction).handle_collection_set(interaction, name, scope.value if scope else "server")


@collection_group.command(name="show", description="Show which collection this channel answers from")
async def collection_show_command(interaction: discord.Interaction) -> None:
    await _bot(interaction).handle_collection_show(interaction)


@collection_group.command(name="list", description="List every collection: documents, chunks, size")
async def collection_list_command(interaction: discord.Interaction) -> None:
    await _bot(interaction).handle_collection_list(interaction)


@collection_group.command(name="drop", description="Delete a collection for good (asks first)")
@app_commands.describe(
    name="The collection to delete", confirm="True to delete it; without, see what would go"
)
async def collection_drop_command(interaction: discord.Interaction, name: str, confirm: bool = False) -> None:
    await _bot(interaction).handle_collection_drop(interaction, name, confirm)


COMMANDS: list[app_commands.Command[Any, ..., Any] | app_commands.Group] = [
    ask_command,
    sources_command,
    upload_command,
    reindex_command,
    remove_command,
    supersede_command,
    current_command,
    conflicts_command,
    card_command,
    report_command,
    collection_group,
]


# --- entry point -------------------------------------------------------------------------------
def unreachable_discord(exc: BaseException) -> str:
    """One line for a Discord that cannot be reached: where (the API base, which
    ``DISCORD_API_BASE`` may override), the network's own reason, and what to check."""
    where = yarl.URL(discord.http.Route.BASE)
    reason = getattr(exc, "os_error", None) or exc
    text = getattr(reason, "strerror", None) or str(reason) or type(exc).__name__
    override = ", and DISCORD_API_BASE / DISCORD_GATEWAY_URL" if where.host != "discord.com" else ""
    return f"cannot reach Discord at {where.host}:{where.port} ({text}); check this host's network and proxy{override}"


class _StartNoise(logging.Filter):
    """Drops discord.py's "logging in using static token" line: every start says it, it tells an
    operator nothing, and a start that fails should print one line of its own."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != "logging in using static token"


def _quiet_start() -> None:
    """No voice warnings (the bot never joins voice, so PyNaCl and davey are not installed on
    purpose) and no static-token line: what a start prints is the bot's own."""
    discord.VoiceClient.warn_nacl = False
    discord.VoiceClient.warn_dave = False
    logging.getLogger("discord.client").addFilter(_StartNoise())


async def _serve(bot: SyllabotBot, token: str) -> None:
    async with bot:
        await bot.start(token)


def run_discord(settings: Settings) -> int:
    """Run the bot until interrupted. Exit codes: 0 stopped, 1 crashed, 2 misconfigured."""
    if not settings.discord_token:
        print(
            "error: DISCORD_TOKEN is not set. Create a bot in the Discord Developer Portal, copy its "
            "token into DISCORD_TOKEN (environment or .env), and run `syllabot discord` again. "
            "See docs/DISCORD.md.",
            file=sys.stderr,
        )
        return 2
    apply_endpoint_overrides(settings)
    discord.utils.setup_logging(level=logging.INFO)
    _quiet_start()
    bot = SyllabotBot(settings)
    endpoint = start_endpoint(settings, bot.metrics.registry, "discord bot")
    try:
        asyncio.run(_serve(bot, settings.discord_token))
    except KeyboardInterrupt:
        return 0
    except discord.LoginFailure:
        print(
            "error: Discord rejected DISCORD_TOKEN; reset the bot token in the Developer Portal.",
            file=sys.stderr,
        )
        return 2
    except RedisUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (aiohttp.ClientError, OSError, TimeoutError, discord.GatewayNotFound) as exc:
        # No network, a proxy in the way, a wrong DISCORD_API_BASE: one line, not aiohttp's
        # 70-line traceback (discord.py gives up only when the first login cannot connect; once
        # connected it reconnects by itself).
        print(f"error: {unreachable_discord(exc)}", file=sys.stderr)
        return 1
    except Exception as exc:
        log.exception("the Discord bot stopped")
        print(f"error: the Discord bot stopped: {exc}", file=sys.stderr)
        return 1
    finally:
        if endpoint is not None:
            endpoint.close()
    return 0
