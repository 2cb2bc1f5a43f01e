"""A small fake of the Slack Web API, file hosting, response_url and Socket Mode, on 127.0.0.1.

Tests point the bot's ``SLACK_API_URL`` at :attr:`FakeSlack.api_url` and then assert on what the
fake received: every request is recorded (method, headers, merged query/form/JSON arguments) and
tests can ``await`` the one they expect with a bounded timeout.

It answers like Slack does where the bot depends on it: JSON with ``ok``; ``invalid_auth`` for a wrong
token; ``files.info`` returning ``url_private`` on this same server; the download answering an
HTML login page (status 200, like Slack) when the bot token is missing; ``apps.connections.open``
returning a ``ws://`` URL whose server sends ``hello`` and then the envelopes a test queues;
``conversations.open`` (a direct message channel ``D`` + user id) and the three steps of
``files_upload_v2`` (``files.getUploadURLExternal``, the upload to the URL it returns, kept in
:attr:`FakeSlack.uploads`, and ``files.completeUploadExternal``, which shares it in a channel).

It refuses what Slack refuses where the bot must respect it: a section text over 3,000 characters
(``invalid_blocks``) and a sixth post to one response_url (404 ``used_url``). Tests can also make it
refuse: :meth:`FakeSlack.fail_api` answers a Web API method with ``ok: false`` and
an error (e.g. ``msg_blocks_too_long``); :meth:`FakeSlack.fail_response` answers a response_url post
with an HTTP error and Slack's body (e.g. 404 ``expired_url``, 400 ``invalid_blocks``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import WSMsgType, web

BOT_TOKEN = "xoxb-test-token"
APP_TOKEN = "xapp-test-token"
BOT_USER_ID = "UBOT"
TEAM_ID = "T0001"


#: How many times a response_url may be posted to (Slack: five times within 30 minutes).
RESPONSE_URL_POSTS = 5
#: Slack refuses a section block whose text is longer than this (``invalid_blocks``).
SECTION_TEXT_MAX = 3000


def blocks_too_long(args: dict[str, Any]) -> bool:
    """Whether a message's blocks hold a section text Slack would refuse as too long."""
    blocks = args.get("blocks") or []
    if isinstance(blocks, str):
        blocks = json.loads(blocks)
    return any(
        isinstance(b, dict)
        and len(((b.get("text") or {}) if isinstance(b.get("text"), dict) else {}).get("text") or "")
        > SECTION_TEXT_MAX
        for b in blocks
    )


@dataclass
class Recorded:
    """One request the fake received."""

    kind: str  # "api", "download", "response", "socket_ack", "upload"
    name: str  # API method, file id, response_url key, envelope id
    args: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    at: float = field(default_factory=time.monotonic)
    status: int = 200  # what the fake answered (HTTP status for "response", 200 otherwise)
    error: str | None = None  # the Web API ``error`` the fake answered, if any


@dataclass
class FakeFile:
    id: str
    name: str
    content: bytes
    size: int
    mimetype: str = "application/pdf"
    filetype: str = "pdf"


class FakeSlack:
    """Start with ``await fake.start()``; stop with ``await fake.stop()``."""

    def __init__(self, users: dict[str, dict[str, Any]] | None = None) -> None:
        self.users: dict[str, dict[str, Any]] = users or {}
        self.files: dict[str, FakeFile] = {}
        self.uploads: dict[str, dict[str, Any]] = {}  # file id -> filename, content, channel, title
        self.records: list[Recorded] = []
        self._changed = asyncio.Condition()
        self._ts = itertools.count(1)
        self._envelopes: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.socket_connections = 0
        self._runner: web.AppRunner | None = None
        self._sockets: set[web.WebSocketResponse] = set()
        self.port = 0
        self._api_failures: dict[str, list[str]] = {}
        self._api_plain_failures: dict[str, list[tuple[int, str]]] = {}
        self._response_failures: dict[str, dict[int, tuple[int, str]]] = {}
        self._response_counts: dict[str, int] = {}
        #: Messages the bot posted to channels (chat.postMessage, in_channel response_url posts), by ts,
        #: as ``conversations.replies`` returns them.
        self.messages: dict[str, dict[str, Any]] = {}
        #: The ts of the channel message each response_url key last posted or replaced.
        self.response_messages: dict[str, str] = {}

    # --- lifecycle ---------------------------------------------------------------------------
    async def start(self) -> FakeSlack:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_get("/files-pri/{file_id}/{name}", self._download)
        app.router.add_post("/response/{key}", self._response)
        app.router.add_post("/upload/{file_id}", self._upload)
        app.router.add_get("/socket", self._socket)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def stop(self) -> None:
        for ws in list(self._sockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_url(self) -> str:
        """What ``SLACK_API_URL`` should be set to (slack_sdk wants the trailing slash)."""
        return f"{self.base}/api/"

    def response_url(self, key: str) -> str:
        return f"{self.base}/response/{key}"

    # --- test set-up -------------------------------------------------------------------------
    def add_user(self, user_id: str, *, admin: bool = False, owner: bool = False) -> None:
        self.users[user_id] = {"id": user_id, "name": user_id.lower(), "is_admin": admin, "is_owner": owner}

    def add_file(
        self,
        file_id: str,
        name: str,
        content: bytes,
        *,
        size: int | None = None,
        mimetype: str = "application/pdf",
        filetype: str | None = None,
    ) -> dict[str, Any]:
        """Host a file; ``size`` may claim more than ``content`` holds (to test the size check).

        ``filetype`` is Slack's short type (``pdf``, ``docx``, ``markdown``, ``text``, ``png``…);
        by default it follows the name's extension, as Slack's does.
        """
        if filetype is None:
            ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
            filetype = {"md": "markdown", "txt": "text", "": "binary"}.get(ext, ext)
        self.files[file_id] = FakeFile(
            file_id, name, content, len(content) if size is None else size, mimetype, filetype
        )
        return self._file_object(self.files[file_id])

    def _file_object(self, f: FakeFile) -> dict[str, Any]:
        url = f"{self.base}/files-pri/{f.id}/{f.name}"
        return {
            "id": f.id,
            "name": f.name,
            "title": f.name,
            "mimetype": f.mimetype,
            "filetype": f.filetype,
            "size": f.size,
            "url_private": url,
            "url_private_download": url + "?download=1",
        }

    def fail_api(self, method: str, error: str, times: int = 1) -> None:
        """Answer the next ``times`` calls of ``method`` with ``{"ok": false, "error": error}``."""
        self._api_failures.setdefault(method, []).extend([error] * times)

    def fail_api_plain(self, method: str, status: int, text: str) -> None:
        """Answer the next call of ``method`` with HTTP ``status`` and a text/plain body (what a
        proxy or an outage page sends): not the JSON object Slack's API always returns."""
        self._api_plain_failures.setdefault(method, []).append((status, text))

    def fail_response(self, key: str, status: int, body: str, nth: int = 1) -> None:
        """Answer the ``nth`` post (1-based) to response_url ``key`` with HTTP ``status`` and ``body``."""
        self._response_failures.setdefault(key, {})[nth] = (status, body)

    # --- assertions --------------------------------------------------------------------------
    def find(self, kind: str, name: str | None = None) -> list[Recorded]:
        return [r for r in self.records if r.kind == kind and (name is None or r.name == name)]

    async def wait_for(
        self,
        kind: str,
        name: str | None = None,
        predicate: Callable[[Recorded], bool] | None = None,
        timeout: float = 15.0,
        after: int = 0,
    ) -> Recorded:
        """The first record (from index ``after`` on) matching; TimeoutError after ``timeout`` s."""

        def match() -> Recorded | None:
            for r in self.records[after:]:
                if (
                    r.kind == kind
                    and (name is None or r.name == name)
                    and (predicate is None or predicate(r))
                ):
                    return r
            return None

        async with asyncio.timeout(timeout):
            async with self._changed:
                while (found := match()) is None:
                    await self._changed.wait()
                return found

    async def _record(self, rec: Recorded) -> None:
        async with self._changed:
            self.records.append(rec)
            self._changed.notify_all()

    # --- Web API -----------------------------------------------------------------------------
    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args: dict[str, Any] = dict(request.query)
        body = await request.read()
        if body:
            ctype = request.headers.get("Content-Type", "")
            if "json" in ctype:
                args.update(json.loads(body))
            else:
                args.update(dict(parse_qsl(body.decode())))
        headers = dict(request.headers)
        plain = self._api_plain_failures.get(method)
        if plain:
            status, text = plain.pop(0)
            await self._record(Recorded("api", method, args, headers, error=f"HTTP {status}"))
            return web.Response(status=status, text=text, content_type="text/plain")
        pending = self._api_failures.get(method)
        error = pending.pop(0) if pending else None
        if error is None and method in ("chat.postMessage", "chat.update") and blocks_too_long(args):
            error = "invalid_blocks"
        await self._record(Recorded("api", method, args, headers, error=error))
        if error is not None:
            return self._json({"ok": False, "error": error})
        token = args.get("token") or headers.get("Authorization", "").removeprefix("Bearer ").strip()
        wanted = APP_TOKEN if method == "apps.connections.open" else BOT_TOKEN
        if token != wanted:
            return self._json({"ok": False, "error": "invalid_auth"})
        handler = getattr(self, "_m_" + method.replace(".", "_"), None)
        if handler is None:
            return self._json({"ok": False, "error": "unknown_method"})
        return self._json(handler(args))

    @staticmethod
    def _json(payload: dict[str, Any]) -> web.Response:
        return web.Response(text=json.dumps(payload), content_type="application/json")

    def _next_ts(self) -> str:
        return f"{int(time.time())}.{next(self._ts):06d}"

    def _m_auth_test(self, args: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": "https://fake.slack.com/",
            "team": "Fake",
            "user": "syllabot",
            "team_id": TEAM_ID,
            "user_id": BOT_USER_ID,
            "bot_id": "BBOT",
        }

    def _m_conversations_replies(self, args: dict[str, Any]) -> dict[str, Any]:
        """The thread's parent message only (``limit=1`` is all the bot asks for)."""
        message = self.messages.get(str(args.get("ts")))
        if message is None:
            return {"ok": False, "error": "thread_not_found"}
        return {"ok": True, "messages": [message], "has_more": False}

    def _message(self, ts: str, args: dict[str, Any]) -> None:
        blocks = args.get("blocks")
        if isinstance(blocks, str):  # form-encoded calls send them as JSON text
            blocks = json.loads(blocks)
        self.messages[ts] = {"type": "message", "ts": ts, "user": BOT_USER_ID, "bot_id": "BBOT",
                             "text": args.get("text"), "blocks": blocks or []}  # fmt: skip

    def _m_chat_postMessage(self, args: dict[str, Any]) -> dict[str, Any]:
        ts = self._next_ts()
        self._message(ts, args)
        return {
            "ok": True,
            "channel": args.get("channel"),
            "ts": ts,
            "message": {"ts": ts, "text": args.get("text")},
        }

    def _m_chat_update(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "channel": args.get("channel"), "ts": args.get("ts"), "text": args.get("text")}

    def _m_chat_postEphemeral(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "message_ts": self._next_ts()}

    def _m_users_info(self, args: dict[str, Any]) -> dict[str, Any]:
        user = self.users.get(str(args.get("user")))
        if user is None:
            return {"ok": False, "error": "user_not_found"}
        return {"ok": True, "user": user}

    def _m_files_info(self, args: dict[str, Any]) -> dict[str, Any]:
        f = self.files.get(str(args.get("file")))
        if f is None:
            return {"ok": False, "error": "file_not_found"}
        return {"ok": True, "file": self._file_object(f)}

    def _m_conversations_open(self, args: dict[str, Any]) -> dict[str, Any]:
        user = str(args.get("users") or "")
        if user not in self.users:
            return {"ok": False, "error": "user_not_found"}
        return {"ok": True, "channel": {"id": f"D{user}"}}

    def _m_files_getUploadURLExternal(self, args: dict[str, Any]) -> dict[str, Any]:
        file_id = f"F{next(self._ts):08d}"
        self.uploads[file_id] = {"filename": args.get("filename"), "length": int(args.get("length") or 0)}
        return {"ok": True, "file_id": file_id, "upload_url": f"{self.base}/upload/{file_id}"}

    def _m_files_completeUploadExternal(self, args: dict[str, Any]) -> dict[str, Any]:
        files = args.get("files")
        files = json.loads(files) if isinstance(files, str) else files or []
        done = []
        for f in files:
            upload = self.uploads.get(f["id"])
            if upload is None or "content" not in upload:
                return {"ok": False, "error": "file_not_found"}
            upload.update(channel=args.get("channel_id"), title=f.get("title"), complete=True)
            done.append({"id": f["id"], "name": upload["filename"], "title": f.get("title")})
        return {"ok": True, "files": done}

    def _m_apps_connections_open(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": f"ws://127.0.0.1:{self.port}/socket"}

    # --- file hosting and response_url --------------------------------------------------------
    async def _download(self, request: web.Request) -> web.Response:
        file_id = request.match_info["file_id"]
        auth = request.headers.get("Authorization", "")
        await self._record(Recorded("download", file_id, dict(request.query), {"Authorization": auth}))
        f = self.files.get(file_id)
        if f is None:
            return web.Response(status=404, text="not found")
        if auth != f"Bearer {BOT_TOKEN}":  # what Slack does: a 200 login page, not the file
            return web.Response(text="<html><body>Sign in to Slack</body></html>", content_type="text/html")
        return web.Response(body=f.content, content_type=f.mimetype)

    async def _upload(self, request: web.Request) -> web.Response:
        file_id = request.match_info["file_id"]
        body = await request.read()
        await self._record(Recorded("upload", file_id, {"bytes": len(body)}, dict(request.headers)))
        upload = self.uploads.get(file_id)
        if upload is None:
            return web.Response(status=404, text="no such upload")
        if len(body) != upload["length"]:
            return web.Response(status=400, text="length mismatch")
        upload["content"] = body
        return web.Response(text="OK - " + str(len(body)))

    async def _response(self, request: web.Request) -> web.Response:
        body = await request.json()
        key = request.match_info["key"]
        self._response_counts[key] = n = self._response_counts.get(key, 0) + 1
        status, text = self._response_failures.get(key, {}).get(n, (200, "ok"))
        if n > RESPONSE_URL_POSTS:
            status, text = 404, "used_url"
        elif status == 200 and blocks_too_long(body):
            status, text = 400, "invalid_blocks"
        if status == 200 and body.get("response_type") == "in_channel":
            replaced = self.response_messages.get(key) if body.get("replace_original") else None
            self.response_messages[key] = ts = replaced or self._next_ts()
            self._message(ts, body)
        await self._record(Recorded("response", key, body, dict(request.headers), status=status))
        return web.Response(status=status, text=text)

    # --- Socket Mode -------------------------------------------------------------------------
    async def send_envelope(self, envelope: dict[str, Any]) -> None:
        """Queue an envelope; the connected client receives it after ``hello``."""
        await self._envelopes.put(envelope)

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self._sockets.add(ws)
        self.socket_connections += 1
        await ws.send_str(
            json.dumps(
                {
                    "type": "hello",
                    "num_connections": 1,
                    "debug_info": {"host": "fake", "approximate_connection_time": 3600},
                    "connection_info": {"app_id": "AFAKE"},
                }
            )
        )

        async def pump() -> None:
            while not ws.closed:
                envelope = await self._envelopes.get()
                await ws.send_str(json.dumps(envelope))

        pumper = asyncio.create_task(pump())
        try:
            async for msg in ws:
                if msg.type == WSMsgType.TEXT:
                    data = json.loads(msg.data)
                    await self._record(Recorded("socket_ack", str(data.get("envelope_id")), data))
        finally:
            pumper.cancel()
            self._sockets.discard(ws)
        return ws


def slash_command_payload(
    command: str, text: str, *, user: str, channel: str = "C0001", response_url: str, trigger: str = "t1"
) -> dict[str, str]:
    """The form fields Slack posts for a slash command (also the Socket Mode payload)."""
    return {
        "token": "deprecated",
        "team_id": TEAM_ID,
        "team_domain": "fake",
        "channel_id": channel,
        "channel_name": "general",
        "user_id": user,
        "user_name": user.lower(),
        "command": command,
        "text": text,
        "api_app_id": "AFAKE",
        "is_enterprise_install": "false",
        "response_url": response_url,
        "trigger_id": trigger,
    }
