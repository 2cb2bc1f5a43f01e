"""A small fake of Discord's REST API and Gateway, on 127.0.0.1, for driving the real discord.py.

What it speaks (API v10, JSON encoding, no compression):

* Gateway websocket at ``/gateway``: HELLO, IDENTIFY -> READY (bot user, application id, one guild
  listed as unavailable) followed by GUILD_CREATE (roles, two text channels; the public thread
  :attr:`DiscordFake.thread_id` in the second is *not* listed, as for a thread the bot never
  joined, so discord.py builds it from the interaction's partial channel), heartbeat ACKs, RESUME
  -> RESUMED, and INTERACTION_CREATE dispatches made by the test: slash commands (options typed
  from the command schema the bot registered), autocomplete and button clicks.
* REST under ``/api/v10``: ``/users/@me``, ``/oauth2/applications/@me``, ``/gateway``,
  ``/gateway/bot``, application and guild command bulk overwrite (PUT), interaction callbacks,
  ``@original`` GET/PATCH/DELETE (a PATCH past Discord's message limits is refused with 400 and
  listed in ``rejected``), follow-ups (POST) and their edits, channel messages (POST
  ``/channels/{id}/messages``). Files sent as multipart are kept in :attr:`Recorded.files`.
* Attachments under ``/cdn/attachments/...``, with every download counted.

Every request the bot makes is recorded in order (:attr:`DiscordFake.requests`) so tests assert on
the exact JSON discord.py sent. REST replies carry ``Content-Type: application/json`` exactly:
discord.py only parses a body as JSON when the header is byte-for-byte that.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import WSMsgType, web

DISCORD_EPOCH_MS = 1420070400000
API = "/api/v10"

# Permission bits used by tests.
SEND_MESSAGES = 1 << 11
VIEW_CHANNEL = 1 << 10
ADMINISTRATOR = 1 << 3
MANAGE_GUILD = 1 << 5
MEMBER_PERMISSIONS = VIEW_CHANNEL | SEND_MESSAGES | (1 << 31)  # + use application commands

# Application command option types.
OPT_SUB_COMMAND, OPT_SUB_GROUP, OPT_STRING, OPT_ATTACHMENT = 1, 2, 3, 11

_counter = itertools.count(1)


def snowflake() -> int:
    """A fresh snowflake for *now*: discord.py derives an interaction's age from its id."""
    return ((int(time.time() * 1000) - DISCORD_EPOCH_MS) << 22) | (next(_counter) % 4096)


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


def json_response(data: Any, status: int = 200) -> web.Response:
    body = json.dumps(data).encode()
    return web.Response(body=body, status=status, headers={"Content-Type": "application/json"})


def over_limits(body: Any) -> str | None:
    """Which of Discord's message limits ``body`` passes, if any (Discord answers 400 Invalid Form
    Body): content 2,000; 10 embeds; per embed title 256, description 4,096, 6,000 in all."""
    if not isinstance(body, dict):
        return None
    if len(body.get("content") or "") > 2000:
        return "content longer than 2000"
    embeds = body.get("embeds") or []
    if len(embeds) > 10:
        return "more than 10 embeds"
    total = 0
    for embed in embeds:
        title, description = embed.get("title") or "", embed.get("description") or ""
        if len(title) > 256 or len(description) > 4096:
            return "embed title or description too long"
        fields = embed.get("fields") or []
        footer = (embed.get("footer") or {}).get("text") or ""
        author = (embed.get("author") or {}).get("name") or ""
        total += len(title) + len(description) + len(footer) + len(author)
        total += sum(len(f.get("name") or "") + len(f.get("value") or "") for f in fields)
    if total > 6000:
        return "embeds longer than 6000 in all"
    return None


@dataclass
class Recorded:
    """One request the bot sent: ``kind`` names the endpoint, ``json`` is the decoded body."""

    kind: str
    method: str
    path: str
    json: Any
    token: str | None = None
    query: dict[str, str] = field(default_factory=dict)
    at: float = field(default_factory=time.monotonic)
    files: dict[str, bytes] = field(default_factory=dict)  # multipart attachments: file name -> bytes


class DiscordFake:
    """One guild, one text channel, one application; start() before the bot, stop() after."""

    def __init__(self) -> None:
        self.app_id = snowflake()
        self.bot_user = {
            "id": str(snowflake()),
            "username": "Syllabot",
            "discriminator": "0",
            "global_name": "Syllabot",
            "avatar": None,
            "bot": True,
            "flags": 0,
        }
        self.guild_id = snowflake()
        self.channel_id = snowflake()
        self.other_channel_id = snowflake()
        self.thread_id = snowflake()  # a public thread (type 11) in other_channel_id
        self.admin_role_id = snowflake()
        self.student_role_id = snowflake()
        self.requests: list[Recorded] = []
        self.rejected: list[tuple[Recorded, str]] = []  # requests refused for passing Discord's limits
        self.commands: dict[str, list[dict]] = {}  # "global" or guild id -> registered commands
        self.attachments: dict[str, tuple[dict, bytes]] = {}
        self.downloads: list[str] = []
        self.originals: dict[str, dict] = {}  # token -> the @original message as Discord holds it
        self.interaction_types: dict[str, int] = {}  # token -> interaction type (2 command, 3 button…)
        self.identified = asyncio.Event()
        self.commands_synced = asyncio.Event()
        self._ws: web.WebSocketResponse | None = None
        self._seq = 0
        self._changed = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self.port = 0

    # --- lifecycle --------------------------------------------------------------------------------
    async def start(self) -> None:
        app = web.Application(middlewares=[self._record_unknown])
        app.router.add_get("/gateway", self._gateway_ws)
        r = app.router
        r.add_get(f"{API}/users/@me", self._me)
        r.add_get(f"{API}/oauth2/applications/@me", self._app_info)
        r.add_get(f"{API}/gateway", self._gateway)
        r.add_get(f"{API}/gateway/bot", self._gateway_bot)
        r.add_put(f"{API}/applications/{{app}}/commands", self._bulk_commands)
        r.add_put(f"{API}/applications/{{app}}/guilds/{{guild}}/commands", self._bulk_commands)
        r.add_post(f"{API}/interactions/{{iid}}/{{token}}/callback", self._callback)
        r.add_route("*", f"{API}/webhooks/{{app}}/{{token}}/messages/@original", self._original)
        r.add_post(f"{API}/webhooks/{{app}}/{{token}}", self._followup)
        r.add_patch(f"{API}/webhooks/{{app}}/{{token}}/messages/{{mid}}", self._followup_edit)
        r.add_post(f"{API}/channels/{{channel}}/messages", self._channel_message)
        r.add_get("/cdn/attachments/{aid}/{name}", self._download)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        if self._ws is not None and not self._ws.closed:
            await self._ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}{API}"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    # --- recording --------------------------------------------------------------------------------
    async def _record(self, request: web.Request, kind: str, token: str | None = None) -> Recorded:
        body: Any = None
        files: dict[str, bytes] = {}
        if request.can_read_body:
            if request.content_type.startswith("multipart/"):
                reader = await request.multipart()
                async for part in reader:
                    if part.name == "payload_json":  # type: ignore[union-attr]
                        body = json.loads(await part.text())  # type: ignore[union-attr]
                    elif part.filename:  # type: ignore[union-attr]
                        files[part.filename] = bytes(await part.read())  # type: ignore[union-attr]
            else:
                raw = await request.read()
                body = json.loads(raw) if raw else None
        rec = Recorded(kind, request.method, request.path, body, token, dict(request.query), files=files)
        async with self._changed:
            self.requests.append(rec)
            self._changed.notify_all()
        return rec

    async def wait_for(
        self, predicate: Callable[[Recorded], bool], timeout: float = 15.0, start: int = 0
    ) -> Recorded:
        """The first recorded request from index ``start`` matching ``predicate`` (waiting for it)."""

        async def scan() -> Recorded:
            async with self._changed:
                while True:
                    for rec in self.requests[start:]:
                        if predicate(rec):
                            return rec
                    await self._changed.wait()

        return await asyncio.wait_for(scan(), timeout)

    @web.middleware
    async def _record_unknown(self, request: web.Request, handler: Any) -> web.StreamResponse:
        try:
            return await handler(request)
        except web.HTTPNotFound:
            await self._record(request, "unknown")
            return json_response({"message": "404: Not Found", "code": 0}, status=404)

    # --- REST -------------------------------------------------------------------------------------
    async def _me(self, request: web.Request) -> web.Response:
        return json_response(self.bot_user)

    async def _gateway(self, request: web.Request) -> web.Response:
        return json_response({"url": self.gateway_url})

    async def _app_info(self, request: web.Request) -> web.Response:
        return json_response(
            {
                "id": str(self.app_id),
                "name": "Syllabot",
                "description": "",
                "icon": None,
                "bot_public": True,
                "bot_require_code_grant": False,
                "owner": {**self.bot_user, "id": str(snowflake()), "bot": False, "username": "teacher"},
                "verify_key": "0" * 64,
                "flags": 0,
                "team": None,
            }
        )

    async def _gateway_bot(self, request: web.Request) -> web.Response:
        limit = {"total": 1000, "remaining": 1000, "reset_after": 0, "max_concurrency": 1}
        return json_response({"url": self.gateway_url, "shards": 1, "session_start_limit": limit})

    async def _bulk_commands(self, request: web.Request) -> web.Response:
        rec = await self._record(request, "commands")
        scope = request.match_info.get("guild", "global")
        registered = [
            {**cmd, "id": str(snowflake()), "application_id": str(self.app_id), "version": "1"}
            for cmd in rec.json or []
        ]
        self.commands[scope] = registered
        self.commands_synced.set()
        return json_response(registered)

    def _message(self, token: str, body: dict, flags: int = 0, msg_id: str | None = None) -> dict:
        return {
            "id": msg_id or str(snowflake()),
            "channel_id": str(self.channel_id),
            "author": self.bot_user,
            "content": body.get("content") or "",
            "timestamp": now_iso(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": [],
            "embeds": body.get("embeds") or [],
            "components": body.get("components") or [],
            "pinned": False,
            "type": 20,
            "flags": flags,
            "application_id": str(self.app_id),
            "webhook_id": str(self.app_id),
        }

    async def _callback(self, request: web.Request) -> web.Response:
        token = request.match_info["token"]
        rec = await self._record(request, "callback", token)
        kind = rec.json.get("type")
        data = rec.json.get("data") or {}
        flags = int(data.get("flags") or 0)
        interaction = {
            "id": request.match_info["iid"],
            "type": self.interaction_types.get(token, 2),
            "response_message_loading": kind == 5,
            "response_message_ephemeral": bool(flags & 64),
        }
        resource: dict[str, Any] = {"type": kind}
        if kind in (4, 5):
            message = self._message(token, data, flags)
            self.originals[token] = message
            interaction["response_message_id"] = message["id"]
            resource["message"] = message
        return json_response({"interaction": interaction, "resource": resource})

    async def _original(self, request: web.Request) -> web.Response:
        token = request.match_info["token"]
        kind = {"PATCH": "edit", "GET": "get_original", "DELETE": "delete_original"}.get(
            request.method, "other"
        )
        rec = await self._record(request, kind, token)
        message = self.originals.setdefault(token, self._message(token, {}))
        if request.method == "DELETE":
            self.originals.pop(token, None)
            return web.Response(status=204)
        problem = over_limits(rec.json) if request.method == "PATCH" else None
        if problem is not None:
            self.rejected.append((rec, problem))
            return json_response({"code": 50035, "message": f"Invalid Form Body: {problem}"}, status=400)
        if request.method == "PATCH" and rec.json:
            for key in ("content", "embeds", "components", "flags"):
                if key in rec.json:
                    message[key] = (
                        rec.json[key] if rec.json[key] is not None else ([] if key != "content" else "")
                    )
            message["edited_timestamp"] = now_iso()
        return json_response(message)

    async def _followup(self, request: web.Request) -> web.Response:
        token = request.match_info["token"]
        rec = await self._record(request, "followup", token)
        body = rec.json or {}
        return json_response(self._message(token, body, int(body.get("flags") or 0)))

    async def _followup_edit(self, request: web.Request) -> web.Response:
        token = request.match_info["token"]
        rec = await self._record(request, "followup_edit", token)
        return json_response(self._message(token, rec.json or {}, msg_id=request.match_info["mid"]))

    async def _channel_message(self, request: web.Request) -> web.Response:
        """A message the bot posts in a channel on its own (not a reply), e.g. the weekly report."""
        rec = await self._record(request, "channel_message")
        message = self._message("", rec.json or {})
        message["channel_id"] = request.match_info["channel"]
        message["type"] = 0
        return json_response(message)

    async def _download(self, request: web.Request) -> web.StreamResponse:
        aid = request.match_info["aid"]
        self.downloads.append(aid)
        if aid not in self.attachments:
            return json_response({"message": "404: Not Found", "code": 0}, status=404)
        return web.Response(body=self.attachments[aid][1], content_type="application/octet-stream")

    def add_attachment(self, filename: str, data: bytes, size: int | None = None) -> dict:
        """Serve ``data`` as an attachment; ``size`` can claim a different size (oversize tests)."""
        aid = str(snowflake())
        url = f"http://127.0.0.1:{self.port}/cdn/attachments/{aid}/{filename}"
        meta = {
            "id": aid,
            "filename": filename,
            "size": len(data) if size is None else size,
            "url": url,
            "proxy_url": url,
            "content_type": "application/octet-stream",
        }
        self.attachments[aid] = (meta, data)
        return meta

    # --- gateway ----------------------------------------------------------------------------------
    async def _gateway_ws(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._ws = ws
        await ws.send_json({"op": 10, "d": {"heartbeat_interval": 41250}, "s": None, "t": None})
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                continue
            payload = json.loads(msg.data)
            op = payload.get("op")
            if op == 1:
                await ws.send_json({"op": 11, "d": None, "s": None, "t": None})
            elif op == 2:
                await self._dispatch("READY", self._ready())
                await self._dispatch("GUILD_CREATE", self._guild())
                self.identified.set()
            elif op == 6:
                await self._dispatch("RESUMED", {})
        return ws

    async def _dispatch(self, event: str, data: dict) -> None:
        if self._ws is None or self._ws.closed:
            raise RuntimeError("the bot is not connected to the fake gateway")
        self._seq += 1
        await self._ws.send_json({"op": 0, "t": event, "s": self._seq, "d": data})

    def _ready(self) -> dict:
        return {
            "v": 10,
            "user": self.bot_user,
            "guilds": [{"id": str(self.guild_id), "unavailable": True}],
            "session_id": uuid.uuid4().hex,
            "resume_gateway_url": self.gateway_url,
            "shard": [0, 1],
            "application": {"id": str(self.app_id), "flags": 0},
            "private_channels": [],
            "relationships": [],
        }

    def _channel(self, channel_id: int, name: str) -> dict:
        return {
            "id": str(channel_id),
            "type": 0,
            "guild_id": str(self.guild_id),
            "name": name,
            "position": 0,
            "permission_overwrites": [],
            "nsfw": False,
            "topic": None,
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "parent_id": None,
        }

    def _thread(self, thread_id: int, parent_id: int, name: str) -> dict:
        """A public thread as an interaction's partial ``channel`` carries it."""
        return {
            "id": str(thread_id),
            "type": 11,
            "guild_id": str(self.guild_id),
            "parent_id": str(parent_id),
            "owner_id": str(snowflake()),
            "name": name,
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "message_count": 3,
            "member_count": 2,
            "total_message_sent": 3,
            "flags": 0,
            "permissions": str(MEMBER_PERMISSIONS),
            "thread_metadata": {
                "archived": False,
                "auto_archive_duration": 1440,
                "archive_timestamp": now_iso(),
                "locked": False,
                "create_timestamp": now_iso(),
            },
        }

    def _role(self, role_id: int, name: str, permissions: int, position: int) -> dict:
        return {
            "id": str(role_id),
            "name": name,
            "permissions": str(permissions),
            "position": position,
            "color": 0,
            "hoist": False,
            "managed": False,
            "mentionable": False,
            "flags": 0,
        }

    def _guild(self) -> dict:
        return {
            "id": str(self.guild_id),
            "name": "CS class of 2026",
            "icon": None,
            "owner_id": str(snowflake()),
            "unavailable": False,
            "member_count": 3,
            "large": False,
            "joined_at": now_iso(),
            "roles": [
                self._role(self.guild_id, "@everyone", MEMBER_PERMISSIONS, 0),
                self._role(self.student_role_id, "students", 0, 1),
                self._role(self.admin_role_id, "teachers", 0, 2),
            ],
            "channels": [
                self._channel(self.channel_id, "general"),
                self._channel(self.other_channel_id, "os-class"),
            ],
            "members": [],
            "emojis": [],
            "stickers": [],
            "features": [],
            "threads": [],
            "voice_states": [],
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "mfa_level": 0,
            "premium_tier": 0,
            "preferred_locale": "en-US",
            "system_channel_id": None,
            "system_channel_flags": 0,
        }

    # --- interactions -----------------------------------------------------------------------------
    def _find_command(self, name: str) -> dict:
        for scope in (str(self.guild_id), "global"):
            for cmd in self.commands.get(scope, []):
                if cmd["name"] == name:
                    return cmd
        raise KeyError(f"the bot did not register /{name}; registered: {self.commands}")

    def _interaction(
        self,
        itype: int,
        data: dict,
        *,
        user_id: int | None,
        permissions: int,
        roles: list[int],
        channel_id: int | None,
        message: dict | None = None,
    ) -> FakeInteraction:
        iid, token = snowflake(), f"tok-{uuid.uuid4().hex}"
        self.interaction_types[token] = itype
        channel_id = channel_id or self.channel_id
        if channel_id == self.thread_id:
            channel = self._thread(channel_id, self.other_channel_id, "week-3-questions")
        else:
            channel = self._channel(channel_id, "general" if channel_id == self.channel_id else "os-class")
        user_id = user_id or 4242
        payload: dict[str, Any] = {
            "id": str(iid),
            "application_id": str(self.app_id),
            "type": itype,
            "token": token,
            "version": 1,
            "guild_id": str(self.guild_id),
            "channel_id": str(channel_id),
            "channel": channel,
            "member": {
                "user": {
                    "id": str(user_id),
                    "username": f"user{user_id}",
                    "discriminator": "0",
                    "global_name": None,
                    "avatar": None,
                },
                "roles": [str(r) for r in roles],
                "joined_at": now_iso(),
                "permissions": str(permissions),
                "deaf": False,
                "mute": False,
                "flags": 0,
                "nick": None,
                "avatar": None,
                "pending": False,
            },
            "data": data,
            "app_permissions": str(MEMBER_PERMISSIONS),
            "locale": "en-US",
            "guild_locale": "en-US",
            "entitlements": [],
            "authorizing_integration_owners": {"0": str(self.guild_id)},
            "context": 0,
            "attachment_size_limit": 10 * 1024 * 1024,
        }
        if message is not None:
            payload["message"] = message
        return FakeInteraction(self, iid, token, payload)

    def _options(self, schema: list[dict], values: dict[str, Any], focused: str | None) -> tuple[list, dict]:
        options, resolved = [], {}
        for name, value in values.items():
            opt = next((o for o in schema if o["name"] == name), None)
            if opt is None:
                raise KeyError(f"option {name!r} not in the registered schema {schema}")
            entry: dict[str, Any] = {"name": name, "type": opt["type"], "value": value}
            if opt["type"] == OPT_ATTACHMENT:
                entry["value"] = value["id"]
                resolved.setdefault("attachments", {})[value["id"]] = value
            if name == focused:
                entry["focused"] = True
            options.append(entry)
        return options, resolved

    def _command_data(self, command: str, values: dict[str, Any], focused: str | None = None) -> dict:
        name, _, sub = command.partition(" ")
        cmd = self._find_command(name)
        data: dict[str, Any] = {"id": cmd["id"], "name": name, "type": 1, "guild_id": str(self.guild_id)}
        if sub:
            sub_schema = next(o for o in cmd.get("options", []) if o["name"] == sub)
            options, resolved = self._options(sub_schema.get("options", []), values, focused)
            data["options"] = [{"name": sub, "type": OPT_SUB_COMMAND, "options": options}]
        else:
            data["options"], resolved = self._options(cmd.get("options", []), values, focused)
        if resolved:
            data["resolved"] = resolved
        return data

    async def command(
        self,
        command: str,
        *,
        user_id: int | None = None,
        permissions: int = MEMBER_PERMISSIONS,
        roles: list[int] | None = None,
        channel_id: int | None = None,
        **values: Any,
    ) -> FakeInteraction:
        """Dispatch a slash command, e.g. ``command("ask", question="…")`` or ``command("collection set", name=…)``."""
        ix = self._interaction(
            2,
            self._command_data(command, values),
            user_id=user_id,
            permissions=permissions,
            roles=roles or [],
            channel_id=channel_id,
        )
        await self._dispatch("INTERACTION_CREATE", ix.payload)
        return ix

    async def autocomplete(
        self,
        command: str,
        focused: str,
        *,
        user_id: int | None = None,
        permissions: int = MEMBER_PERMISSIONS,
        roles: list[int] | None = None,
        **values: Any,
    ) -> FakeInteraction:
        ix = self._interaction(
            4,
            self._command_data(command, values, focused),
            user_id=user_id,
            permissions=permissions,
            roles=roles or [],
            channel_id=None,
        )
        await self._dispatch("INTERACTION_CREATE", ix.payload)
        return ix

    async def click(self, message: dict, custom_id: str, *, user_id: int | None = None) -> FakeInteraction:
        """Click a button of ``message`` (as Discord holds it, e.g. ``fake.originals[token]``)."""
        data = {"custom_id": custom_id, "component_type": 2}
        ix = self._interaction(
            3,
            data,
            user_id=user_id,
            permissions=MEMBER_PERMISSIONS,
            roles=[],
            channel_id=None,
            message={**message, "guild_id": str(self.guild_id)},
        )
        await self._dispatch("INTERACTION_CREATE", ix.payload)
        return ix

    async def submit_modal(
        self, modal: Recorded, values: list[str], *, user_id: int | None = None, channel_id: int | None = None
    ) -> FakeInteraction:
        """Submit the modal a bot opened (``modal``: its type-9 callback) with one value per text input,
        in order, as Discord sends it: a MODAL_SUBMIT interaction (type 5)."""
        data = modal.json.get("data") or {}
        inputs = [c for row in data.get("components", []) for c in row.get("components", [])]
        if len(inputs) != len(values):
            raise ValueError(f"the modal has {len(inputs)} inputs, {len(values)} values given")
        rows = [
            {"type": 1, "components": [{"type": 4, "custom_id": c["custom_id"], "value": v}]}
            for c, v in zip(inputs, values, strict=True)
        ]
        ix = self._interaction(
            5,
            {"custom_id": data["custom_id"], "components": rows},
            user_id=user_id,
            permissions=MEMBER_PERMISSIONS,
            roles=[],
            channel_id=channel_id,
        )
        await self._dispatch("INTERACTION_CREATE", ix.payload)
        return ix


@dataclass
class FakeInteraction:
    """A dispatched interaction; helpers wait for what the bot sent back for it."""

    fake: DiscordFake
    id: int
    token: str
    payload: dict

    def requests(self) -> list[Recorded]:
        return [r for r in self.fake.requests if r.token == self.token]

    async def wait_for(self, predicate: Callable[[Recorded], bool], timeout: float = 15.0) -> Recorded:
        return await self.fake.wait_for(lambda r: r.token == self.token and predicate(r), timeout)

    async def callback(self, timeout: float = 10.0) -> Recorded:
        return await self.wait_for(lambda r: r.kind == "callback", timeout)

    async def followup(self, timeout: float = 10.0) -> Recorded:
        """The first follow-up message (``POST /webhooks/{app}/{token}``)."""
        return await self.wait_for(lambda r: r.kind == "followup", timeout)

    async def final(self, timeout: float = 30.0) -> Recorded:
        """The first response carrying embeds: an ``@original`` edit or an immediate message."""

        def has_embeds(r: Recorded) -> bool:
            body = r.json or {}
            if r.kind == "edit":
                return bool(body.get("embeds"))
            if r.kind == "callback" and body.get("type") == 4:
                return bool((body.get("data") or {}).get("embeds"))
            return False

        return await self.wait_for(has_embeds, timeout)

    @staticmethod
    def body(rec: Recorded) -> dict:
        """The message part of a recorded response (callback ``data`` or the edit body)."""
        if rec.kind == "callback":
            return rec.json.get("data") or {}
        return rec.json or {}

    @property
    def original(self) -> dict:
        return self.fake.originals[self.token]
