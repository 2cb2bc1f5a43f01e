"""The Slack front-end: ``/ask``, mentions in threads, admin document upload, re-index and gap report.

Like every front-end it holds no retrieval code. Each handler validates input, acknowledges Slack at
once (Slack gives us 3 s), checks permissions and the shared rate limit, enqueues through
:class:`shared.queue.QueueClient` and renders the result with :mod:`bots.slack_render`. Every failure
reaches the user as a message: a bot that goes quiet looks broken.

Run with ``syllabot slack`` (:func:`run_slack`): Socket Mode when ``SLACK_APP_TOKEN`` is set (no
public URL needed), otherwise an HTTP server on ``SLACK_PORT`` at ``/slack/events``, where Bolt
verifies every request's signature with ``SLACK_SIGNING_SECRET``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import signal
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import PurePath
from typing import Any

import aiohttp
import redis.asyncio as aioredis
from aiohttp import web
from slack_bolt import BoltResponse
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from syllabot.bots import slack_render as render
from syllabot.bots.frontend import (
    AdminReply,
    FailureKind,
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
from syllabot.shared.bindings import Bindings, InvalidCollectionName, Privacy, validate_collection_name
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
from syllabot.shared.queue import QueueClient, QueueError, QueueTimeout
from syllabot.shared.queue_protocol import INGEST_TIMEOUT_S
from syllabot.shared.ratelimit import RateLimiter
from syllabot.shared.redis_conn import REDIS_ERRORS, Durability, RedisUnavailable, async_client, describe
from syllabot.shared.schema import AskRequest, IngestReport
from syllabot.shared.threads import ThreadStore, thread_id

log = logging.getLogger("syllabot.slack")

#: A mention with files that says "replace" lets them replace documents of other names with their id,
#: and supersede indexed documents with their title.
_REPLACE = re.compile(r"\breplac(?:e|es|ing)\b", re.IGNORECASE)

PLATFORM = "slack"
EVENTS_PATH = "/slack/events"
#: callback_id of the message shortcut "Add to course materials" (see deploy/slack-manifest.yml).
ADD_SHORTCUT_ID = "add_to_course_materials"
#: How long a users.info admin answer is trusted, so one busy admin does not cost a call per command.
ADMIN_CACHE_S = 300.0
#: Minimum seconds between progress edits of a status message (Slack rate-limits chat.update).
PROGRESS_EVERY_S = 2.0
#: A response_url works for 30 minutes (and 5 posts); admin jobs replying through one stop waiting
#: this long after the command arrived, leaving room for the final post. Tests lower it.
RESPONSE_URL_BUDGET_S = 25 * 60.0
#: Never wait less than this for a job, even when the budget is (nearly) spent.
MIN_JOB_WAIT_S = 1.0
#: Partial answers posted through one response_url: it takes 5 posts in all, and the final answer
#: and a possible text-only fallback need theirs.
RESPONSE_URL_PARTIALS = 3
#: How long an Events API event id is remembered, so a redelivery is not answered twice.
EVENT_DEDUP_S = 600
#: A file whose name the loaders read (``shared.formats``) is downloaded; anything else is refused
#: before downloading. Slack's ``filetype`` for PDF and Word counts too: the worker recognises those
#: by their content whatever the name.
SUPPORTED_FILETYPES = frozenset({"pdf", "docx"})

Message = dict[str, Any]


class BotUsageError(UsageError):
    """Something the user (or admin) must fix; the message is shown as-is (already mrkdwn-safe)."""


class DeliveryFailed(Exception):
    """A response_url refused a post (slack_sdk returns the status instead of raising): 404
    ``expired_url``/``used_url`` after 30 minutes or 5 posts, 400 ``invalid_blocks`` and the like."""

    def __init__(self, status: int, body: str) -> None:
        self.status = status
        self.body = body.strip()[:200]
        super().__init__(f"response_url answered HTTP {status}: {self.body or 'no body'}")


def check_webhook(resp: Any) -> Any:
    """Raise :class:`DeliveryFailed` unless ``resp`` (a ``WebhookResponse``) is a 2xx."""
    status = getattr(resp, "status_code", None)
    if isinstance(status, int) and not 200 <= status < 300:
        raise DeliveryFailed(status, str(getattr(resp, "body", "") or ""))
    return resp


def failure_code(exc: BaseException) -> str:
    """The short reason Slack gave for refusing a post, e.g. ``invalid_blocks``."""
    if isinstance(exc, DeliveryFailed):
        return exc.body or f"HTTP {exc.status}"
    if isinstance(exc, SlackApiError):
        return slack_error_code(exc)
    return type(exc).__name__


def retry_number(headers: Any) -> int:
    """``x-slack-retry-num`` as an int (0 when absent). Bolt gives header values as lists, and in
    Socket Mode it mirrors the envelope's ``retry_attempt``, which is ``0`` on the first delivery."""
    value = headers.get("x-slack-retry-num") if headers else None
    if isinstance(value, list | tuple):
        value = value[0] if value else None
    try:
        return int(value) if value not in (None, "") else 0
    except (TypeError, ValueError):
        return 0


# --- errors → words ------------------------------------------------------------------------------


def describe_error(exc: BaseException, settings: Settings) -> str:
    """What to tell a user about a failure (mrkdwn-safe): the front-end core's words
    (:func:`bots.frontend.classify`), Slack's own for Slack's refusals."""
    if isinstance(exc, BotUsageError):
        return str(exc)  # already mrkdwn-safe
    if isinstance(exc, SlackApiError):
        error = slack_error_code(exc)
        hint = " (the app may be missing a scope; see docs/SLACK.md)" if error == "missing_scope" else ""
        return f"Slack refused a request: `{render.safe(str(error))}`{hint}."
    failure = classify(exc, timeout_s=settings.ask_timeout_s)
    if failure.kind is FailureKind.JOB_FAILED:
        return f"The worker could not finish this: {render.safe(failure.detail)}"
    return render.safe(failure.detail)


def slack_error_code(exc: SlackApiError) -> str:
    """Slack's error code (``missing_scope``), or ``HTTP 503`` for a body that is not a JSON
    object (a proxy's text/plain page): the failure must still reach the admin."""
    response = exc.response
    data = getattr(response, "data", None)
    if isinstance(data, dict):
        return str(data.get("error") or "unknown_error")
    status = getattr(response, "status_code", None)
    return f"HTTP {status}" if status else "unknown_error"


def question_refusal(rejected: QuestionRejected) -> Message:
    """Slack's words for a question that is not sent (empty, or over the one length limit)."""
    if rejected.kind == "empty":
        return render.usage_ask()
    return render.render_refusal(
        f"That question is {rejected.length} characters long; please keep it under {rejected.limit}."
    )


def _error_message(exc: BaseException, settings: Settings) -> Message:
    if isinstance(exc, BotUsageError):
        return render.render_refusal(str(exc))
    return render.render_error(describe_error(exc, settings))


# --- replying ------------------------------------------------------------------------------------


class Reporter:
    """Where replies of one interaction go: a thread (mentions) or a ``response_url`` (commands).

    ``public`` is the answer itself; ``private`` is for refusals, errors and admin reports, which
    only the person who asked needs to see. ``status`` shows (and later edits) a progress line.
    """

    async def public(self, message: Message) -> None:
        raise NotImplementedError

    async def private(self, message: Message) -> None:
        raise NotImplementedError

    async def status(self, message: Message, force: bool = False) -> None:
        """Show progress; ``force`` for a new stage, otherwise implementations may throttle."""
        await self.private(message)

    async def fallback(self, text: str) -> None:
        """Text only, no blocks: the last resort after a Block Kit message was refused."""
        raise NotImplementedError

    def job_wait(self, default: float) -> float:
        """How long an admin job may be waited for while this reporter can still deliver the result."""
        return default

    async def partial(self, message: Message) -> None:
        """Show an answer still being written (public, like the answer it becomes); later calls
        replace it, and :meth:`answer` replaces it with the final answer."""

    async def answer(self, message: Message) -> None:
        """The final answer: in place of the partial one when one was shown, else :meth:`public`."""
        await self.public(message)

    @property
    def shows_partial(self) -> bool:
        """Whether a partial answer is on screen (a failure must then replace it)."""
        return False


class ResponseUrlReporter(Reporter):
    """Replies via ``respond()``. A response_url allows 5 posts in 30 minutes, so progress is not
    streamed here: one status post at the start, one result at the end."""

    def __init__(self, respond: Callable[..., Awaitable[Any]], response_type: str) -> None:
        self._respond = respond
        self._type = response_type
        self._status_sent = False
        self._partials = 0
        self.created = time.monotonic()  # ~ when the command arrived: the response_url's clock starts

    async def _post(self, **kwargs: Any) -> None:
        check_webhook(await self._respond(**kwargs))

    async def public(self, message: Message) -> None:
        await self._replace(message, False)

    async def private(self, message: Message) -> None:
        await self._post(
            text=message["text"], blocks=message["blocks"], response_type="ephemeral", replace_original=False
        )

    async def partial(self, message: Message) -> None:
        if self._partials >= RESPONSE_URL_PARTIALS:
            return  # keep the response_url's last posts for the answer
        self._partials += 1
        await self._replace(message, self._partials > 1)

    async def answer(self, message: Message) -> None:
        await self._replace(message, self._partials > 0)

    @property
    def shows_partial(self) -> bool:
        return self._partials > 0

    async def _replace(self, message: Message, replace: bool) -> None:
        await self._post(
            text=message["text"],
            blocks=message["blocks"],
            response_type=self._type,
            replace_original=replace,
            unfurl_links=False,
            unfurl_media=False,
        )

    async def fallback(self, text: str) -> None:
        await self._post(text=text, response_type="ephemeral", replace_original=False)

    def job_wait(self, default: float) -> float:
        left = RESPONSE_URL_BUDGET_S - (time.monotonic() - self.created)
        return max(MIN_JOB_WAIT_S, min(default, left))

    async def status(self, message: Message, force: bool = False) -> None:
        if not self._status_sent:
            self._status_sent = True
            await self.private(message)


class ThreadReporter(Reporter):
    """Replies in the thread of a mention; a status message is posted once and then edited."""

    def __init__(self, client: AsyncWebClient, channel: str, thread_ts: str, user: str) -> None:
        self.client = client
        self.channel = channel
        self.thread_ts = thread_ts
        self.user = user
        self._status_ts: str | None = None
        self._last_edit = 0.0
        self._partial_ts: str | None = None

    async def public(self, message: Message) -> None:
        await self.client.chat_postMessage(
            channel=self.channel,
            thread_ts=self.thread_ts,
            text=message["text"],
            blocks=message["blocks"],
            unfurl_links=False,
            unfurl_media=False,
        )

    async def private(self, message: Message) -> None:
        await self.client.chat_postEphemeral(
            channel=self.channel,
            user=self.user,
            thread_ts=self.thread_ts,
            text=message["text"],
            blocks=message["blocks"],
        )

    async def fallback(self, text: str) -> None:
        await self.client.chat_postMessage(channel=self.channel, thread_ts=self.thread_ts, text=text)

    async def partial(self, message: Message) -> None:
        if self._partial_ts is None:
            resp = await self.client.chat_postMessage(
                channel=self.channel,
                thread_ts=self.thread_ts,
                text=message["text"],
                blocks=message["blocks"],
                unfurl_links=False,
                unfurl_media=False,
            )
            self._partial_ts = resp.get("ts")
            return
        await self.client.chat_update(
            channel=self.channel, ts=self._partial_ts, text=message["text"], blocks=message["blocks"]
        )

    async def answer(self, message: Message) -> None:
        if self._partial_ts is None:
            await self.public(message)
            return
        await self.client.chat_update(
            channel=self.channel, ts=self._partial_ts, text=message["text"], blocks=message["blocks"]
        )

    @property
    def shows_partial(self) -> bool:
        return self._partial_ts is not None

    async def status(self, message: Message, force: bool = False) -> None:
        now = time.monotonic()
        if self._status_ts is None:
            resp = await self.client.chat_postMessage(
                channel=self.channel, thread_ts=self.thread_ts, text=message["text"], blocks=message["blocks"]
            )
            self._status_ts = resp.get("ts")
            self._last_edit = now
        elif force or now - self._last_edit >= PROGRESS_EVERY_S:
            await self.finish(message)

    @property
    def has_status(self) -> bool:
        return self._status_ts is not None

    def reset_status(self) -> None:
        """The next status line is a new message (one per file)."""
        self._status_ts = None

    async def finish(self, message: Message) -> None:
        """Replace the status line with the final result (or post it, if there was none)."""
        if self._status_ts is None:
            await self.public(message)
            return
        self._last_edit = time.monotonic()
        await self.client.chat_update(
            channel=self.channel, ts=self._status_ts, text=message["text"], blocks=message["blocks"]
        )


def _fallback_text(exc: BaseException, message: Message) -> str:
    return (
        f":warning: Slack would not show this reply (`{render.safe(failure_code(exc))}`), so here it is "
        f"as plain text:\n\n{message['text']}"
    )


async def deliver(send: Callable[[], Awaitable[Any]], out: Reporter, message: Message, what: str) -> bool:
    """``send()`` the Block Kit ``message``; if Slack refuses it, log that and post a text-only
    fallback, so a refused message is never lost silently. True when the message itself got through."""
    try:
        await send()
        return True
    except Exception as exc:
        known = isinstance(exc, DeliveryFailed | SlackApiError)
        log.error("could not deliver %s: %s", what, exc, exc_info=None if known else exc)
        failure = exc
    try:
        await out.fallback(_fallback_text(failure, message))
    except Exception as exc:
        known = isinstance(exc, DeliveryFailed | SlackApiError)
        log.error("the plain-text fallback for %s failed too: %s", what, exc, exc_info=not known)
    return False


async def _finish(reporter: Reporter, message: Message, what: str = "an admin result") -> None:
    """Deliver an admin result where the admin will look for it (text-only fallback on refusal)."""
    if isinstance(reporter, ThreadReporter):
        await deliver(lambda: reporter.finish(message), reporter, message, what)
    else:
        await deliver(lambda: reporter.private(message), reporter, message, what)


def still_running(exc: QueueTimeout, waited: float, what: str) -> Message:
    """What to say when an admin job outlived our wait (``what`` already safe): the worker keeps
    going, unless no worker had started it (then :class:`QueueClient` withdrew it)."""
    log.info("stopped waiting for %s after %.0f s: %s", what, waited, exc)
    if exc.withdrawn:
        return render.render_error(
            f"No worker started indexing {what} within {waited:.0f} s (all busy?), so nothing was "
            "changed. Please try again later."
        )
    return render.render_notice(
        f"Still indexing {what} after {waited:.0f} s; the worker keeps going. "
        "Check `/syllabot-collection` later to see the documents it holds.",
        ":hourglass_flowing_sand:",
    )


# --- the front-end -------------------------------------------------------------------------------


@dataclass
class FileRef:
    """A Slack file the admin wants indexed, as far as we know it before calling files.info."""

    id: str
    name: str = ""


def _file_refs(files: list[dict] | None) -> list[FileRef]:
    """The files of an event or a message, their names cleaned (no bidi override or NUL shown)."""
    return [FileRef(f["id"], clean_name(f.get("name") or "", "")) for f in files or [] if f.get("id")]


class SlackFrontEnd:
    """What every listener shares: settings, the queue, and the Redis-backed shared services."""

    def __init__(self, settings: Settings, queue: QueueClient, redis_client: aioredis.Redis) -> None:
        self.settings = settings
        self.queue = queue
        self.redis = redis_client
        keys = Keys(settings.key_prefix)
        self.rate = RateLimiter(redis_client, keys, settings.rate_limit_per_minute)
        durability = Durability.of(settings)
        self.bindings = Bindings(redis_client, keys, PLATFORM, settings.default_collection, durability)
        self.privacy = Privacy(redis_client, keys, PLATFORM, durability)
        self.threads = ThreadStore.from_settings(redis_client, settings)
        self.feedback = Feedback(redis_client, keys, durability)
        self.keys = keys
        self._pseudonym_key = pseudonym_key(settings, PLATFORM)
        self._admin_cache: dict[str, tuple[float, bool]] = {}
        # Served by serve() when SYLLABOT_METRICS_PORT is set; counted either way.
        self.metrics = QuestionMetrics()

    # --- helpers ---------------------------------------------------------------------------
    @staticmethod
    def scopes(channel: str | None, team: str | None) -> list[str]:
        """Setting scopes, most specific first: the channel, then the workspace."""
        return [s for s in (f"channel:{channel}" if channel else "", f"team:{team}" if team else "") if s]

    async def collection_for(self, channel: str | None, team: str | None) -> str:
        return await self.bindings.resolve(*self.scopes(channel, team))

    async def response_type(self, channel: str | None, team: str | None) -> str:
        """How ``/ask`` answers here: ``ephemeral`` when the channel (or else the workspace) is set
        private with ``/syllabot-privacy``, ``in_channel`` when set public, else
        ``SLACK_RESPONSE_TYPE``. Redis down: the default (the question itself will say Redis is down)."""
        try:
            private = await self.privacy.resolve(*self.scopes(channel, team))
        except (*REDIS_ERRORS, RedisUnavailable) as exc:
            log.warning("privacy lookup failed: %s", exc)
            private = None
        if private is None:
            return self.settings.slack_response_type
        return "ephemeral" if private else "in_channel"

    def who(self, user: str) -> str:
        """The user as a keyed hash (shared/pseudonyms.py): their id never leaves this process."""
        return pseudonym(self._pseudonym_key, PLATFORM, user)

    async def is_admin(self, client: AsyncWebClient, user: str) -> bool:
        """SLACK_ADMIN_USER_IDS when set (and then only those), else workspace admins and owners."""
        if self.settings.slack_admin_user_ids:
            return user in self.settings.slack_admin_user_ids
        cached = self._admin_cache.get(user)
        if cached and time.monotonic() - cached[0] < ADMIN_CACHE_S:
            return cached[1]
        resp = await client.users_info(user=user)
        info = resp.get("user") or {}
        admin = bool(info.get("is_admin") or info.get("is_owner") or info.get("is_primary_owner"))
        self._admin_cache[user] = (time.monotonic(), admin)
        return admin

    async def require_admin(self, client: AsyncWebClient, user: str, what: str) -> None:
        if not await self.is_admin(client, user):
            raise BotUsageError(
                f"Only Syllabot admins can {what}. Ask a workspace admin, or the person who runs "
                "Syllabot, to add your user id to `SLACK_ADMIN_USER_IDS`."
            )

    async def first_delivery(self, event_id: str | None, retry_num: int) -> bool:
        """True the first time an Events API ``event_id`` arrives; False for a redelivery.

        ``SET {prefix}event:{event_id} 1 NX EX 600``, so every replica agrees. Without an event id
        (or without Redis) only an explicit retry number > 0 counts as a redelivery.
        """
        if not event_id:
            return retry_num == 0
        try:
            return bool(await self.redis.set(self.keys.slack_event(event_id), "1", nx=True, ex=EVENT_DEDUP_S))
        except Exception as exc:
            log.warning("could not de-duplicate event %s (%s)", event_id, exc, exc_info=not is_expected(exc))
            return retry_num == 0

    # --- questions -------------------------------------------------------------------------
    async def answer(
        self,
        question: str,
        user: str,
        channel: str | None,
        team: str | None,
        out: Reporter,
        thread: str | None = None,
    ) -> None:
        """Rate-limit, resolve the collection, ask a worker and post the answer; errors privately.
        ``thread``: the conversation (a Slack thread) the question is part of."""
        collection = ""  # not resolved yet when the rate limit or the binding lookup fails
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.ask_timeout_s
        sentinel = bool(self.settings.redis_sentinels)
        try:
            decision = await before_queueing(
                lambda: self.rate.check(PLATFORM, self.who(user)),
                sentinel,
                deadline - loop.time(),
                "checking the rate limit",
            )
            if not decision.allowed:
                wait = max(1, round(decision.retry_after_s))
                await out.private(
                    render.render_refusal(
                        f"You've asked {self.settings.rate_limit_per_minute} questions in the last minute — "
                        f"that's the limit. Please try again in {wait} s."
                    )
                )
                return
            collection = await before_queueing(
                lambda: self.collection_for(channel, team),
                sentinel,
                deadline - loop.time(),
                "looking up the channel's collection",
            )
            request = AskRequest(
                question=question,
                collection=collection,
                user=self.who(user),
                platform="slack",
                thread=thread,
            )
            result = await ask_streamed(
                self.queue,
                request,
                timeout=max(1.0, deadline - loop.time()),
                every_s=self.settings.stream_edit_every_s,
                show=lambda text: out.partial(render.render_partial(text)),
            )
        except Exception as exc:  # noqa: BLE001 - _report_failure logs it, with its traceback when unexpected
            self.metrics.count_failure(collection, PLATFORM, exc)
            await self._report_failure(exc, out, "answering a question")
            return
        self.metrics.count(collection, PLATFORM, result.status)
        answer_id: str | None = None
        try:
            answer_id = await self.feedback.record_answer(result, PLATFORM, self.who(user))
        except Exception:  # feedback is a nicety: still show the answer, just without buttons
            log.warning("could not record the answer for feedback", exc_info=True)
        message = render.render_answer(result, answer_id, thread)
        await deliver(lambda: out.answer(message), out, message, "an answer")

    async def _report_failure(self, exc: BaseException, out: Reporter, doing: str) -> None:
        if not is_expected(exc) and not isinstance(exc, SlackApiError | DeliveryFailed):
            log.error("failed while %s", doing, exc_info=exc)
        else:
            log.info("%s: %s: %s", doing, type(exc).__name__, exc)
        message = _error_message(exc, self.settings)
        if isinstance(out, ThreadReporter) and out.has_status:
            # turn "Downloading…" into the error, so nothing hangs there
            await deliver(lambda: out.finish(message), out, message, "a failure report")
        elif out.shows_partial:
            # turn the half-written answer into the error, so it does not read as the answer
            await deliver(lambda: out.answer(message), out, message, "a failure report")
        else:
            await deliver(lambda: out.private(message), out, message, "a failure report")

    # --- documents -------------------------------------------------------------------------
    async def fetch_file(self, client: AsyncWebClient, ref: FileRef) -> tuple[str, bytes]:
        """files.info, the type and size checks *before* download, then the download with the bot token."""
        info = (await client.files_info(file=ref.id)).get("file") or {}
        name = clean_name(str(info.get("name") or ref.name or ref.id))  # no bidi override or NUL
        filetype = str(info.get("filetype") or "").lower()
        if not is_document_name(name) and filetype not in SUPPORTED_FILETYPES:
            ext = PurePath(name).suffix.lower()
            kind = (
                f"a {filetype} file"
                if filetype
                else f"a {ext} file"
                if ext
                else "a file without an extension"
            )
            hint = (
                " If it is plain text, rename it to .txt or .md." if filetype in {"text", "markdown"} else ""
            )
            raise BotUsageError(
                f"*{render.safe(name)}* is {render.safe(kind)}, which Syllabot cannot index. Upload "
                f"{render.safe(SUPPORTED_TYPES)} files instead. It was not downloaded.{hint}"
            )
        size = int(info.get("size") or 0)
        limit = self.settings.max_document_bytes
        if size > limit:
            raise BotUsageError(
                f"*{render.safe(name)}* is {size / 1048576:.1f} MB; the limit is "
                f"{limit / 1048576:.0f} MB (`SYLLABOT_MAX_DOCUMENT_MB`). It was not downloaded."
            )
        url = info.get("url_private_download") or info.get("url_private")
        if not url:
            raise BotUsageError(f"Slack gave no download link for *{render.safe(name)}*.")
        return name, await self._download(str(url), name, limit)

    async def _download(self, url: str, name: str, limit: int) -> bytes:
        headers = {"Authorization": f"Bearer {self.settings.slack_bot_token}"}
        timeout = aiohttp.ClientTimeout(total=120, sock_connect=10)
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.get(url, headers=headers) as resp,
        ):
            if resp.status != 200:
                raise BotUsageError(f"Downloading *{render.safe(name)}* failed (HTTP {resp.status}).")
            ctype = resp.headers.get("Content-Type", "")
            if "text/html" in ctype and not name.lower().endswith((".html", ".htm")):
                # Slack answers a login page, not the file, when the token lacks files:read.
                raise BotUsageError(
                    f"Slack returned a sign-in page instead of *{render.safe(name)}*: the app probably lacks "
                    "the `files:read` scope. Add it and reinstall the app (see docs/SLACK.md)."
                )
            data = bytearray()
            async for chunk in resp.content.iter_chunked(1 << 16):
                data += chunk
                if len(data) > limit:  # files.info may have understated; never hold more than the limit
                    raise BotUsageError(f"*{render.safe(name)}* is larger than the document size limit.")
        return bytes(data)

    async def add_files(
        self,
        client: AsyncWebClient,
        refs: list[FileRef],
        user: str,
        channel: str | None,
        team: str | None,
        out: Reporter,
        replace: bool = False,
    ) -> None:
        """Admin only: fetch each file, ingest it into the channel's collection, report a summary.
        ``replace``: the mention said "replace", so a file may replace a document of another name
        with the same id (see ``Engine.ingest``)."""
        try:
            await self.require_admin(client, user, "add documents to the course materials")
            if not refs:
                raise BotUsageError(
                    "That message has no file attached. Share a PDF, DOCX, Markdown or text file."
                )
            collection = await self.collection_for(channel, team)
        except Exception as exc:  # noqa: BLE001 - _report_failure logs it, with its traceback when unexpected
            await self._report_failure(exc, out, "checking a document upload")
            return
        fetched: list[tuple[str, bytes]] = []
        for ref in refs:
            label = ref.name or ref.id
            try:
                await out.status(render.render_progress("downloading", what=label), force=True)
                fetched.append(await self.fetch_file(client, ref))
            except Exception as exc:  # noqa: BLE001 - _report_failure logs it, with its traceback when unexpected
                await self._report_failure(exc, out, f"downloading {label}")
                if isinstance(out, ThreadReporter):
                    out.reset_status()  # that line now shows the error; the next file gets its own
        if not fetched:
            return
        names = ", ".join(name for name, _ in fetched)
        last_stage = ""

        async def progress(update: dict) -> None:
            nonlocal last_stage
            stage = str(update.get("stage") or "working")
            message = render.render_progress(stage, update.get("done"), update.get("total"), names)
            await out.status(message, force=stage != last_stage)
            last_stage = stage

        wait = out.job_wait(INGEST_TIMEOUT_S)
        try:
            await out.status(render.render_progress("indexing", what=names), force=True)
            # One job for all files of the message, so the index is rebuilt once.
            report = await self.queue.ingest_many(
                collection, fetched, self.who(user), progress=progress, timeout=wait, replace=replace
            )
        except QueueTimeout as exc:
            await _finish(out, still_running(exc, wait, render.safe(names)), "a still-indexing notice")
            return
        except Exception as exc:  # noqa: BLE001 - _report_failure logs it, with its traceback when unexpected
            await self._report_failure(exc, out, f"indexing {names}")
            return
        await _finish(out, render.render_ingest_report(report, "Added"), "an ingest report")

    async def reindex(
        self, client: AsyncWebClient, user: str, channel: str | None, team: str | None, out: Reporter
    ) -> None:
        wait, collection = 0.0, ""
        try:
            await self.require_admin(client, user, "re-index the course materials")
            collection = await self.collection_for(channel, team)
            await out.status(
                render.render_progress("re-indexing", what=f"collection {collection}"), force=True
            )
            wait = out.job_wait(INGEST_TIMEOUT_S)
            report: IngestReport = await self.queue.reindex(collection, self.who(user), timeout=wait)
        except QueueTimeout as exc:
            what = f"collection `{render.safe(collection)}`"
            await _finish(out, still_running(exc, wait, what), "a still-indexing notice")
            return
        except Exception as exc:  # noqa: BLE001 - _report_failure logs it, with its traceback when unexpected
            await self._report_failure(exc, out, "re-indexing")
            return
        await _finish(out, render.render_ingest_report(report, "Re-indexed"), "a re-index report")

    async def collection_command(
        self,
        client: AsyncWebClient,
        text: str,
        user: str,
        channel: str | None,
        team: str | None,
        out: Reporter,
    ) -> None:
        """No argument: say which collection this channel uses and what it holds. A name: bind it."""
        name = text.strip()
        try:
            if not name:
                collection = await self.collection_for(channel, team)
                try:
                    sources = await self.queue.sources(collection)
                    message = render.render_sources(sources, collection)
                except Exception as exc:  # the binding is still worth telling
                    log.info("sources unavailable: %s", exc, exc_info=not is_expected(exc))
                    message = render.render_notice(
                        f"This channel answers from collection `{render.safe(collection)}`. "
                        f"(Listing its documents failed: {describe_error(exc, self.settings)})"
                    )
            else:
                await self.require_admin(client, user, "change which collection this channel uses")
                if not channel:
                    raise BotUsageError("Run this command in the channel you want to bind.")
                try:
                    collection = validate_collection_name(name)
                except InvalidCollectionName as exc:
                    raise BotUsageError(render.safe(str(exc))) from exc
                await self.bindings.bind(f"channel:{channel}", collection)
                message = render.render_notice(
                    f"This channel now answers from collection `{render.safe(collection)}`. "
                    "Documents added here go into it too.",
                    ":white_check_mark:",
                )
        except Exception as exc:  # noqa: BLE001 - _report_failure logs it, with its traceback when unexpected
            await self._report_failure(exc, out, "binding a collection")
            return
        await deliver(lambda: out.private(message), out, message, "a collection notice")

    async def supersede_command(
        self,
        client: AsyncWebClient,
        text: str,
        user: str,
        channel: str | None,
        team: str | None,
        out: Reporter,
    ) -> None:
        """``/syllabot-supersede OLD [by NEW]``: mark a document of this channel's collection as an
        old version (left out of answers), optionally replaced by another. Admins only, privately."""
        words = text.split()
        by = None
        if len(words) == 3 and words[1].lower() == "by":
            by = words[2]
        elif len(words) != 1:
            words = []
        await self._mark(client, words[0] if words else "", "superseded", by, user, channel, team, out)

    async def current_command(
        self,
        client: AsyncWebClient,
        text: str,
        user: str,
        channel: str | None,
        team: str | None,
        out: Reporter,
    ) -> None:
        """``/syllabot-current DOC``: mark a document as the current version (undoes supersede)."""
        words = text.split()
        await self._mark(
            client, words[0] if len(words) == 1 else "", "current", None, user, channel, team, out
        )

    async def conflicts_command(
        self,
        client: AsyncWebClient,
        text: str,
        user: str,
        channel: str | None,
        team: str | None,
        out: Reporter,
    ) -> None:
        """``/syllabot-conflicts``: where this channel's collection's documents disagree (admins)."""
        await self._collection_reply(
            client,
            user,
            channel,
            team,
            out,
            list_conflicts,
            ("list where the documents disagree", "listing where the documents disagree", ":mag:"),
        )

    async def card_command(
        self,
        client: AsyncWebClient,
        text: str,
        user: str,
        channel: str | None,
        team: str | None,
        out: Reporter,
    ) -> None:
        """``/syllabot-card``: this channel's collection's course card, each fact with its source (admins)."""
        await self._collection_reply(
            client,
            user,
            channel,
            team,
            out,
            show_card,
            ("see the course card", "reading the course card", ":card_index:"),
        )

    async def _mark(
        self,
        client: AsyncWebClient,
        name: str,
        status: str,
        by: str | None,
        user: str,
        channel: str | None,
        team: str | None,
        out: Reporter,
    ) -> None:
        async def work() -> AdminReply:
            if not name:
                raise BotUsageError(
                    "Use `/syllabot-supersede OLD [by NEW]` or `/syllabot-current DOC` (doc_id or file "
                    "name, see `/syllabot-collection`)."
                )
            collection = await self.collection_for(channel, team)
            return await mark_document(
                self.queue,
                collection,
                name,
                status,
                self.who(user),
                by=by,
                sources_command="`/syllabot-collection`",
                timeout=out.job_wait(self.settings.ask_timeout_s),
            )

        await self._admin_reply(
            client, user, out, "say which version of a document counts", "marking a document's version", work
        )

    async def _collection_reply(
        self,
        client: AsyncWebClient,
        user: str,
        channel: str | None,
        team: str | None,
        out: Reporter,
        read: Callable[[QueueClient, str, float | None], Awaitable[AdminReply]],
        words: tuple[str, str, str],
    ) -> None:
        """An admin command that reads one thing of this channel's collection (where its documents
        disagree, its course card) with ``read`` (``frontend.list_conflicts``, ``show_card``):
        ``words`` are the permission asked, what is being done and the notice's emoji, as
        :meth:`_admin_reply` takes them."""

        async def work() -> AdminReply:
            collection = await self.collection_for(channel, team)
            return await read(self.queue, collection, out.job_wait(self.settings.ask_timeout_s))

        permission, doing, icon = words
        await self._admin_reply(client, user, out, permission, doing, work, icon)

    async def _admin_reply(
        self,
        client: AsyncWebClient,
        user: str,
        out: Reporter,
        permission: str,
        doing: str,
        work: Callable[[], Awaitable[AdminReply]],
        icon: str | None = None,
    ) -> None:
        """An admin command whose answer is an :class:`AdminReply`: the admin check, ``work``, the
        failure (if any) in the shared words, else the reply, privately. ``icon``: the notice's
        emoji (default: a check mark, a warning when the reply is not ok)."""
        try:
            await self.require_admin(client, user, permission)
            reply = await work()
        except Exception as exc:  # noqa: BLE001 - _report_failure logs it, with its traceback when unexpected
            await self._report_failure(exc, out, doing)
            return
        message = render.render_notice(
            f"*{render.safe(reply.title)}*\n{reply.body(render.safe)}",
            icon or (":white_check_mark:" if reply.ok else ":warning:"),
        )
        await deliver(lambda: out.private(message), out, message, f"the reply to {doing}")

    async def collections_command(
        self,
        client: AsyncWebClient,
        text: str,
        user: str,
        channel: str | None,
        team: str | None,
        out: Reporter,
    ) -> None:
        """``/syllabot-collections``: no argument lists every collection; ``drop NAME`` says what
        dropping would delete; ``drop NAME confirm`` deletes it. Admins only, answered privately."""
        words = text.split()

        async def work() -> AdminReply:
            wait = out.job_wait(self.settings.ask_timeout_s)
            if not words:
                return await list_collections(self.queue, timeout=wait)
            if words[0].lower() == "drop" and len(words) in (2, 3):
                confirm = len(words) == 3 and words[2].lower() == "confirm"
                if len(words) == 3 and not confirm:
                    raise BotUsageError("Use `/syllabot-collections drop NAME confirm` to drop a collection.")
                return await drop_collection(self.queue, words[1], confirm, self.who(user), timeout=wait)
            raise BotUsageError(
                "Use `/syllabot-collections` to list collections, or `/syllabot-collections drop NAME` "
                "to drop one."
            )

        await self._admin_reply(
            client, user, out, "list or drop collections", "listing or dropping collections", work
        )

    async def privacy_command(
        self,
        client: AsyncWebClient,
        text: str,
        user: str,
        channel: str | None,
        team: str | None,
        out: Reporter,
    ) -> None:
        """No argument: say how ``/ask`` answers here. ``private``/``public`` [``workspace``]: set it
        for this channel (or the whole workspace); admins only."""
        words = text.lower().split()
        try:
            if not words:
                kind = await self.response_type(channel, team)
                how = "privately (only the asker sees it)" if kind == "ephemeral" else "in the channel"
                message = render.render_notice(
                    f"`/ask` answers {how} here. Admins change it with `/syllabot-privacy private` or "
                    "`/syllabot-privacy public` (add `workspace` for the whole workspace)."
                )
            else:
                if words[0] not in ("private", "public") or words[1:] not in ([], ["workspace"]):
                    raise BotUsageError(
                        "Use `/syllabot-privacy private` or `/syllabot-privacy public`, "
                        "optionally followed by `workspace`."
                    )
                await self.require_admin(client, user, "change whether answers are private")
                workspace = words[1:] == ["workspace"]
                scope = f"team:{team}" if workspace else f"channel:{channel}" if channel else ""
                if not scope:
                    raise BotUsageError("Run this command in the channel (or workspace) you want to set.")
                private = words[0] == "private"
                await self.privacy.set(scope, private)
                where = "the workspace" if workspace else "this channel"
                how = (
                    "privately: only the asker sees the question and its answer"
                    if private
                    else "in the channel"
                )
                note = " Channels with their own setting keep it." if workspace else ""
                message = render.render_notice(
                    f"`/ask` in {where} now answers {how}.{note}", ":white_check_mark:"
                )
        except Exception as exc:  # noqa: BLE001 - _report_failure logs it, with its traceback when unexpected
            await self._report_failure(exc, out, "setting privacy")
            return
        await deliver(lambda: out.private(message), out, message, "a privacy notice")

    async def follow_up_thread(
        self, client: AsyncWebClient, channel: str, thread_ts: str, under_ours: bool
    ) -> str | None:
        """The conversation of a Slack thread Syllabot answered in, else None (a thread of others).

        A mention's thread is named after its ts. A ``/ask`` answer came through a response_url,
        which gives no ts to name a thread after, so under one of our messages (``under_ours``: the
        thread's parent is the bot's) the conversation is read off the answer's footer -- one
        ``conversations.replies`` call (scope ``channels:history``, which replies need anyway)."""
        thread = thread_id(PLATFORM, channel, thread_ts)
        try:
            if await self.threads.exists(thread):
                return thread
            if not under_ours:
                return None
            replies = await client.conversations_replies(channel=channel, ts=thread_ts, limit=1)
            messages = replies.get("messages") or []
            conversation = render.conversation_of(messages[0]) if messages else None
            if conversation is None or not await self.threads.exists(conversation):
                return None
            return conversation
        except (*REDIS_ERRORS, RedisUnavailable, SlackApiError) as exc:
            log.warning("thread lookup failed: %s", exc)
            return None

    async def report(
        self,
        client: AsyncWebClient,
        text: str,
        user: str,
        channel: str | None,
        team: str | None,
        out: Reporter,
    ) -> None:
        """The gap report of this channel's collection, to the admin only: the table in a private
        reply, the CSV in a direct message (a file cannot be attached to an ephemeral reply)."""
        try:
            await self.require_admin(client, user, "see the gap report")
            days = report_days(text)
            collection = await self.collection_for(channel, team)
            report = await self.queue.report(
                collection, days, timeout=out.job_wait(self.settings.ask_timeout_s)
            )
        except Exception as exc:  # noqa: BLE001 - _report_failure logs it, with its traceback when unexpected
            await self._report_failure(exc, out, "building the gap report")
            return
        await _finish(out, render.render_gap_report(report), "a gap report")
        try:
            dm = await client.conversations_open(users=user)
            await upload_csv(client, str((dm.get("channel") or {}).get("id")), report)
        except Exception as exc:
            log.warning("gap report CSV not sent: %s", exc, exc_info=not isinstance(exc, SlackApiError))
            note = render.render_error(
                f"The CSV could not be sent to you ({describe_error(exc, self.settings)}). "
                "The bot needs the im:write and files:write scopes."
            )
            await deliver(lambda: out.private(note), out, note, "a CSV failure notice")

    async def post_weekly_report(self, client: AsyncWebClient, now: datetime | None = None) -> bool:
        """Post last week's gap report in SLACK_REPORT_CHANNEL once per ISO week (all replicas
        together); True when this call posted it."""
        channel = self.settings.slack_report_channel
        if not channel:
            return False

        async def post() -> str:
            collection = await self.collection_for(channel, None)
            report = await self.queue.report(collection, DEFAULT_REPORT_DAYS)
            message = render.render_gap_report(report)
            await client.chat_postMessage(channel=channel, text=message["text"], blocks=message["blocks"])
            await upload_csv(client, channel, report)
            return collection

        return await post_weekly(self.redis, self.keys, PLATFORM, channel, now or datetime.now(UTC), post)

    async def weekly_reports(self, client: AsyncWebClient) -> None:
        """The scheduled task of ``serve()`` when SLACK_REPORT_CHANNEL is set."""
        await repeat_weekly_post(lambda: self.post_weekly_report(client))

    async def vote(self, answer_id: str, user: str, vote: str) -> Message:
        try:
            changed = await self.feedback.vote(answer_id, self.who(user), vote)  # type: ignore[arg-type]
        except UnknownAnswer:
            return render.render_notice("That answer is too old to vote on now — thanks anyway!", "")
        except Exception as exc:
            log.info("vote failed: %s", exc, exc_info=not is_expected(exc))
            return render.render_error(describe_error(exc, self.settings))
        return render.vote_confirmation(vote, changed)


def report_days(text: str | None) -> int:
    """``/syllabot-report [days]``: the period, 1-365 days (default 7)."""
    text = (text or "").strip()
    if not text:
        return DEFAULT_REPORT_DAYS
    if not text.isdigit() or not 1 <= int(text) <= MAX_REPORT_DAYS:
        raise BotUsageError(
            f"Usage: `/syllabot-report [days]`, with days from 1 to {MAX_REPORT_DAYS} (default {DEFAULT_REPORT_DAYS})."
        )
    return int(text)


async def upload_csv(client: AsyncWebClient, channel: str, report: GapReport) -> None:
    name = csv_filename(report)
    await client.files_upload_v2(channel=channel, content=to_csv(report), filename=name, title=name)


# --- the Bolt app --------------------------------------------------------------------------------


def _api_base(settings: Settings) -> str | None:
    if not settings.slack_api_url:
        return None
    return settings.slack_api_url if settings.slack_api_url.endswith("/") else settings.slack_api_url + "/"


def make_web_client(settings: Settings) -> AsyncWebClient:
    """The Web API client; ``SLACK_API_URL`` points it at a Slack-compatible endpoint or a fake."""
    base = _api_base(settings)
    if base:
        return AsyncWebClient(token=settings.slack_bot_token, base_url=base)
    return AsyncWebClient(token=settings.slack_bot_token)


_MENTION = re.compile(r"<@[UW][A-Z0-9]+(?:\|[^>]*)?>")


def build_app(settings: Settings, queue: QueueClient, redis_client: aioredis.Redis | None = None) -> AsyncApp:
    """The Bolt app with every listener registered. Tests serve it over HTTP or Socket Mode."""
    if not settings.slack_bot_token:
        raise ValueError("SLACK_BOT_TOKEN is required")
    if not settings.slack_signing_secret and not settings.slack_app_token:
        raise ValueError("SLACK_SIGNING_SECRET is required unless SLACK_APP_TOKEN selects Socket Mode")
    app = AsyncApp(
        client=make_web_client(settings),
        signing_secret=settings.slack_signing_secret or None,
        # Socket Mode requests are not signed (the websocket is authenticated instead); HTTP ones are.
        request_verification_enabled=bool(settings.slack_signing_secret),
        # Bolt names its logger after the app and copies the root logger's level onto it: named
        # "syllabot", it set our whole namespace to the root's level (WARNING unless configured),
        # silencing every syllabot.* INFO line of the process that built it.
        name="syllabot.slack.bolt",
    )
    if settings.slack_team_id:
        pinned = settings.slack_team_id

        @app.middleware
        async def pin_workspace(context: Any, next: Callable[[], Awaitable[Any]]) -> Any:
            """Every request must come from the one workspace SLACK_TEAM_ID names."""
            team = context.team_id or context.enterprise_id
            if team != pinned:
                log.warning("refused a request for workspace %s: SLACK_TEAM_ID pins %s", team, pinned)
                return BoltResponse(status=403, body="This Syllabot serves another workspace.")
            return await next()

    fe = SlackFrontEnd(settings, queue, redis_client if redis_client is not None else async_client(settings))
    app._syllabot = fe  # type: ignore[attr-defined]  # for tests and shutdown

    def responder(respond: Any) -> ResponseUrlReporter:
        return ResponseUrlReporter(respond, settings.slack_response_type)

    @app.command("/ask")
    async def on_ask(ack: Any, command: dict, respond: Any) -> None:
        try:
            question = check_question(command.get("text"))
        except QuestionRejected as rejected:
            await ack(response_type="ephemeral", **question_refusal(rejected))
            return
        await ack(response_type="ephemeral", text=":mag: Looking it up…")
        channel, team = command.get("channel_id"), command.get("team_id")
        kind = await fe.response_type(channel, team)
        # An answer the channel sees begins a conversation: replies in the thread under it are
        # follow-ups (found through the answer's footer, see follow_up_thread).
        conversation = None
        if kind == "in_channel" and channel:
            conversation = thread_id(PLATFORM, channel, f"ask-{uuid.uuid4().hex[:16]}")
        out = ResponseUrlReporter(respond, kind)
        await fe.answer(question, command["user_id"], channel, team, out, conversation)

    @app.command("/syllabot-reindex")
    async def on_reindex(ack: Any, command: dict, respond: Any, client: AsyncWebClient) -> None:
        await ack()
        await fe.reindex(
            client, command["user_id"], command.get("channel_id"), command.get("team_id"), responder(respond)
        )

    def admin_text_command(name: str, handle: Callable[..., Awaitable[None]]) -> None:
        """``/name [text]``: acknowledged at once, then handled by ``fe`` with the command's text,
        user, channel and team, replying through its response_url."""

        async def on_command(ack: Any, command: dict, respond: Any, client: AsyncWebClient) -> None:
            await ack()
            await handle(
                client,
                command.get("text") or "",
                command["user_id"],
                command.get("channel_id"),
                command.get("team_id"),
                responder(respond),
            )

        app.command(name)(on_command)

    admin_text_command("/syllabot-report", fe.report)
    admin_text_command("/syllabot-collection", fe.collection_command)
    admin_text_command("/syllabot-collections", fe.collections_command)
    admin_text_command("/syllabot-privacy", fe.privacy_command)
    admin_text_command("/syllabot-supersede", fe.supersede_command)
    admin_text_command("/syllabot-current", fe.current_command)
    admin_text_command("/syllabot-conflicts", fe.conflicts_command)
    admin_text_command("/syllabot-card", fe.card_command)

    @app.event("message")
    async def on_message(event: dict, body: dict, context: Any, client: AsyncWebClient, request: Any) -> None:
        """A reply in a thread Syllabot answered in (a mention's, or under a ``/ask`` answer) is a
        follow-up."""
        user, channel, thread_ts = event.get("user"), event.get("channel"), event.get("thread_ts")
        if not user or not channel or not thread_ts or thread_ts == event.get("ts"):
            return  # not a reply in a thread
        if event.get("subtype") or event.get("bot_id"):
            return  # edits, joins, other bots (and our own answers)
        text = event.get("text") or ""
        bot_user = context.get("bot_user_id")
        if bot_user and f"<@{bot_user}" in text:
            return  # a mention: on_mention answers it
        under_ours = bool(bot_user) and event.get("parent_user_id") == bot_user
        thread = await fe.follow_up_thread(client, channel, thread_ts, under_ours)
        if thread is None:
            return
        if not await fe.first_delivery(body.get("event_id"), retry_number(request.headers)):
            return
        try:
            question = check_question(_MENTION.sub("", text))
        except QuestionRejected:
            return  # an empty or over-long reply in a conversation is not a question to refuse aloud
        team = event.get("team") or context.get("team_id")
        await fe.answer(
            question, user, channel, team, ThreadReporter(client, channel, thread_ts, user), thread
        )

    @app.event("app_mention")
    async def on_mention(event: dict, body: dict, context: Any, client: AsyncWebClient, request: Any) -> None:
        user = event.get("user")
        channel = event.get("channel")
        if not user or not channel or event.get("bot_id"):
            return  # other bots mentioning us: never answer bots, it can loop
        # Slack redelivers an event it thinks we missed (x-slack-retry-num 1, 2, 3; Socket Mode sends
        # retry_attempt 0 on the *first* delivery). Answer each event id once, whatever its number.
        retry_num = retry_number(request.headers)
        if not await fe.first_delivery(body.get("event_id"), retry_num):
            log.info("ignoring redelivered event %s (retry %d)", body.get("event_id"), retry_num)
            return
        team = event.get("team") or context.get("team_id")
        thread_ts: str = event.get("thread_ts") or event["ts"]
        out = ThreadReporter(client, channel, thread_ts, user)
        files = _file_refs(event.get("files"))
        if files:
            replace = bool(_REPLACE.search(_MENTION.sub("", event.get("text") or "")))
            await fe.add_files(client, files, user, channel, team, out, replace)
            return
        try:
            question = check_question(_MENTION.sub("", event.get("text") or ""))
        except QuestionRejected as rejected:
            # through deliver(): if Slack refuses the ephemeral post, a plain-text fallback follows
            refusal = question_refusal(rejected)
            await deliver(lambda: out.private(refusal), out, refusal, "a question refusal")
            return
        await fe.answer(question, user, channel, team, out, thread_id(PLATFORM, channel, thread_ts))

    @app.shortcut(ADD_SHORTCUT_ID)
    async def on_add_shortcut(ack: Any, shortcut: dict, respond: Any, client: AsyncWebClient) -> None:
        await ack()
        user = (shortcut.get("user") or {}).get("id", "")
        channel = (shortcut.get("channel") or {}).get("id")
        team = (shortcut.get("team") or {}).get("id")
        message = shortcut.get("message") or {}
        files = _file_refs(message.get("files"))
        await fe.add_files(client, files, user, channel, team, ResponseUrlReporter(respond, "ephemeral"))

    @app.action(re.compile(f"^({render.VOTE_UP_ACTION}|{render.VOTE_DOWN_ACTION})$"))
    async def on_vote(ack: Any, body: dict, action: dict, respond: Any, client: AsyncWebClient) -> None:
        await ack()
        user = (body.get("user") or {}).get("id", "")
        vote = "up" if action.get("action_id") == render.VOTE_UP_ACTION else "down"
        reply = await fe.vote(str(action.get("value") or ""), user, vote)
        # The click's own response_url works without channel membership (chat.postEphemeral needs
        # it) and for ephemeral answers too; chat.postEphemeral is only the fallback.
        try:
            check_webhook(await respond(response_type="ephemeral", replace_original=False, **reply))
            return
        except Exception as exc:
            log.warning(
                "vote confirmation via response_url failed (%s); trying chat.postEphemeral",
                exc,
                exc_info=not isinstance(exc, DeliveryFailed | SlackApiError | aiohttp.ClientError),
            )
        channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")
        if not channel:
            log.error("could not confirm a vote: no response_url and no channel")
            return
        try:
            thread_ts = (body.get("message") or {}).get("thread_ts")
            kwargs = {"thread_ts": thread_ts} if thread_ts else {}
            await client.chat_postEphemeral(
                channel=channel, user=user, text=reply["text"], blocks=reply["blocks"], **kwargs
            )
        except Exception as exc:
            log.error("could not confirm a vote: %s", exc, exc_info=not isinstance(exc, SlackApiError))

    @app.error
    async def on_error(error: Exception, body: dict) -> None:
        log.error("unhandled error in a Slack listener: %s", error, exc_info=error)

    return app


def web_app(app: AsyncApp, path: str = EVENTS_PATH) -> web.Application:
    """An aiohttp application serving ``app`` at ``path`` (Bolt's own adapter), plus ``/healthz``."""

    async def events(request: web.Request) -> web.Response:
        bolt_resp = await app.async_dispatch(await to_bolt_request(request))
        return await to_aiohttp_response(bolt_resp)

    async def health(_: web.Request) -> web.Response:
        return web.Response(text="ok")

    application = web.Application()
    application.router.add_post(path, events)
    application.router.add_get("/healthz", health)
    return application


# --- running -------------------------------------------------------------------------------------


def settings_problem(settings: Settings) -> str | None:
    """Why these settings cannot run the Slack bot, in words an operator can act on; None if fine."""
    if not settings.slack_bot_token:
        return (
            "SLACK_BOT_TOKEN is not set. Install the Slack app (see docs/SLACK.md) and set SLACK_BOT_TOKEN "
            "to its Bot User OAuth Token (xoxb-…)."
        )
    if not settings.slack_app_token and not settings.slack_signing_secret:
        return (
            "Set SLACK_APP_TOKEN (xapp-…, for Socket Mode) or SLACK_SIGNING_SECRET (for HTTP mode on "
            "SLACK_PORT). See docs/SLACK.md."
        )
    if settings.slack_app_token and not settings.slack_app_token.startswith("xapp-"):
        return "SLACK_APP_TOKEN must be an app-level token starting with xapp- (with the connections:write scope)."
    return None


async def serve(
    settings: Settings,
    *,
    queue: QueueClient | None = None,
    stop: asyncio.Event | None = None,
    host: str = "0.0.0.0",
    ready: asyncio.Event | None = None,
) -> int:
    """Run until ``stop`` is set (or SIGINT/SIGTERM). Returns the process exit code."""
    problem = settings_problem(settings)
    if problem:
        print(f"syllabot slack: {problem}", file=sys.stderr)
        return 2
    stop = stop or asyncio.Event()
    own_queue = queue is None
    queue = queue or QueueClient(settings)
    redis_client = async_client(settings)
    try:
        await queue.connect()
    except QueueError as exc:  # keep running: users get a clear message per request until Redis is back
        log.warning("queue not reachable at start-up (%s); answering with an error until it is", exc)
    try:
        await redis_client.ping()
    except (*REDIS_ERRORS, RedisUnavailable) as exc:
        url = describe(settings.redis_url or "embedded redis")
        log.warning("Redis at %s is unreachable (%s); users will be told until it is back", url, exc)
    app = build_app(settings, queue, redis_client)
    try:
        auth = await app.client.auth_test()
    except SlackApiError as exc:
        print(
            f"syllabot slack: Slack rejected SLACK_BOT_TOKEN ({slack_error_code(exc)}). Check the token.",
            file=sys.stderr,
        )
        await _close(queue if own_queue else None, redis_client)
        return 2
    except (aiohttp.ClientError, OSError) as exc:
        print(f"syllabot slack: cannot reach the Slack API ({exc}).", file=sys.stderr)
        await _close(queue if own_queue else None, redis_client)
        return 1
    log.info("connected to Slack as %s in %s", auth.get("user"), auth.get("team"))
    endpoint = start_endpoint(settings, app._syllabot.metrics.registry, "slack bot")  # type: ignore[attr-defined]

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop.set)

    handler: AsyncSocketModeHandler | None = None
    runner: web.AppRunner | None = None
    weekly: asyncio.Task[None] | None = None
    if settings.slack_report_channel:
        fe: SlackFrontEnd = app._syllabot  # type: ignore[attr-defined]
        weekly = asyncio.create_task(fe.weekly_reports(app.client), name="syllabot-weekly-report")
    try:
        if settings.slack_app_token:
            handler = AsyncSocketModeHandler(app, settings.slack_app_token, web_client=app.client)
            await handler.connect_async()
            log.info("Socket Mode connected")
        else:
            runner = web.AppRunner(web_app(app), access_log=None)
            await runner.setup()
            await web.TCPSite(runner, host, settings.slack_port).start()
            log.info("listening for Slack on http://%s:%s%s", host, settings.slack_port, EVENTS_PATH)
        if ready is not None:
            ready.set()
        await stop.wait()
    finally:
        if weekly is not None:
            weekly.cancel()
        if handler is not None:
            await handler.close_async()
        if runner is not None:
            await runner.cleanup()
        if endpoint is not None:
            await asyncio.to_thread(endpoint.close)
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(sig)
        await _close(queue if own_queue else None, redis_client)
    return 0


async def _close(queue: QueueClient | None, redis_client: aioredis.Redis) -> None:
    with contextlib.suppress(Exception):
        if queue is not None:
            await queue.close()
    with contextlib.suppress(Exception):
        await redis_client.aclose()


def run_slack(settings: Settings) -> int:
    """Entry point of ``syllabot slack``: Socket Mode with SLACK_APP_TOKEN, else HTTP on SLACK_PORT."""
    problem = settings_problem(settings)
    if problem:
        print(f"syllabot slack: {problem}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return asyncio.run(serve(settings))
    except KeyboardInterrupt:
        return 0
