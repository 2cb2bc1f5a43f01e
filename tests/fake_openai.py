"""A local OpenAI-compatible ``/chat/completions`` server that streams, stalls and breaks.

Outside the machine an LLM streams its reply as server-sent events; this stands in for it on
127.0.0.1 (tests and ``bench/streaming.py``). The reply is cut into word tokens sent ``tokens_per_s``
a second after ``first_token_s``; ``mode`` scripts what goes wrong:

* ``normal``: every token, then ``data: [DONE]``;
* ``stall``: ``stall_after`` tokens, then keep-alive comments only (no text) until stopped;
* ``break``: ``stall_after`` tokens, then the connection is cut mid-stream;
* ``no_done``: every token, then the stream ends cleanly without ``[DONE]`` or a finish reason.

``finish_reason`` is the stop reason the reply ends with (``"length"``: cut at ``max_tokens``, as a
real server says of a model that rambled until its limit). ``status`` other than 200 answers every
request with that status and an OpenAI-style ``{"error": {"message": error_message}}``.

A request without ``"stream": true`` gets the whole reply as one chat completion, once all its
tokens would have been written.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

_TOKEN = re.compile(r"\s*\S+")


def tokens(text: str) -> list[str]:
    """Word tokens with their leading spaces, joined back they give ``text``."""
    return _TOKEN.findall(text)


async def serve_chat_completions(
    handle: Callable[[web.Request], Awaitable[web.StreamResponse]],
) -> tuple[web.AppRunner, str]:
    """``handle`` answering ``POST /v1/chat/completions`` on 127.0.0.1 at a free port: the app's
    runner (to clean up) and the base URL a client is given (``http://127.0.0.1:PORT/v1``)."""
    app = web.Application()
    app.router.add_post("/v1/chat/completions", handle)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}/v1"


@dataclass
class StreamingLLM:
    reply: str | Callable[[dict], str] = "A semaphore is an integer variable [1]."
    mode: str = "normal"
    first_token_s: float = 0.0
    tokens_per_s: float = 200.0
    stall_after: int = 5
    finish_reason: str = "stop"
    status: int = 200
    error_message: str = ""
    keepalive_s: float = 0.2
    requests: list[dict] = field(default_factory=list)
    #: time.monotonic() of each token sent, per request (the bench measures against them).
    sent_at: list[list[float]] = field(default_factory=list)
    url: str = ""
    _runner: web.AppRunner | None = None
    _stopping: asyncio.Event = field(default_factory=asyncio.Event)

    def text_for(self, body: dict) -> str:
        return self.reply(body) if callable(self.reply) else self.reply

    async def start(self) -> StreamingLLM:
        self._runner, self.url = await serve_chat_completions(self.handle)
        return self

    async def stop(self) -> None:
        self._stopping.set()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _pause(self, seconds: float) -> bool:
        """Sleep ``seconds``; False when the server is stopping meanwhile."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)
            return False
        return True

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        text = self.text_for(body)
        if self.status != 200:
            error = {"error": {"message": self.error_message, "type": "invalid_request_error"}}
            return web.json_response(error, status=self.status)
        if not body.get("stream"):  # the model writes every token before the reply is sent
            await self._pause(self.first_token_s + len(tokens(text)) / self.tokens_per_s)
            message = {"role": "assistant", "content": text}
            return web.json_response(
                {
                    "object": "chat.completion",
                    "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
                }
            )
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        sent: list[float] = []
        self.sent_at.append(sent)
        if not await self._pause(self.first_token_s):
            return response
        for i, token in enumerate(tokens(text)):
            if self.mode in ("stall", "break") and i == self.stall_after:
                if self.mode == "break":
                    assert request.transport is not None
                    request.transport.abort()  # the connection drops mid-reply
                    return response
                while await self._pause(self.keepalive_s):  # alive, but no more text
                    await response.write(b": keep-alive\n\n")
                return response
            event = {
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {"content": token}}],
            }
            await response.write(f"data: {json.dumps(event)}\n\n".encode())
            sent.append(time.monotonic())
            if not await self._pause(1.0 / self.tokens_per_s):
                return response
        if self.mode != "no_done":
            done: dict[str, Any] = {
                "choices": [{"index": 0, "delta": {}, "finish_reason": self.finish_reason}]
            }
            await response.write(f"data: {json.dumps(done)}\n\ndata: [DONE]\n\n".encode())
        await response.write_eof()
        return response
