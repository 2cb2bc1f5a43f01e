"""Reading an OpenAI-compatible reply as a stream (``"stream": true``, server-sent events).

Why: a student waiting 10 s for a model to finish sees nothing; with the reply streamed, the answer
appears within about a second and grows. What is shown while it grows is decided elsewhere
(``llm.py::visible_text``); this module only reads the stream and says when it failed:

* **Stalled**: no new text for ``SYLLABOT_LLM_STALL_S`` once the reply has begun (keep-alive
  comments and empty deltas do not count), or the question's LLM budget (``shared/deadline.py``)
  ran out. The wait for the first text is bounded by the budget alone: a server on a CPU reads a
  long prompt before it writes (llama.cpp with a small model on two shared cores: 5-120 s for our
  prompt of up to ~3,200 tokens, ``bench/llm_server.py``), and the same server answers unstreamed.
* **Broken**: the connection dropped, an ``error`` event came, or the stream ended without
  ``data: [DONE]`` or a ``finish_reason`` (a truncated reply must not pass for a whole one).
* **Cut**: the finish reason is ``length``: the reply stopped at the request's ``max_tokens``
  (``SYLLABOT_LLM_MAX_TOKENS``), mid-sentence, and is not a whole reply either.

Each raises :class:`StreamFailed`; the LLM answerer then gives the extractive answer with a note.

Who wants partial text says so with :func:`streaming_to` (a context variable, like the LLM deadline,
so each job's task has its own): the worker sets it for a question whose asker shows partials.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

#: Receives the text of the reply so far, after every delta.
TextSink = Callable[[str], Awaitable[None]]

_SINK: contextvars.ContextVar[TextSink | None] = contextvars.ContextVar("partial_sink", default=None)


class StreamFailed(RuntimeError):
    """The stream stalled or broke; the message says which, in words fit for an operator note."""


#: The finish reason of a reply that stopped at the request's ``max_tokens``, streamed or not.
CUT_REASON = "length"
#: Why such a reply is not used (the LLM answerer's log line).
CUT_MESSAGE = "the reply was cut at its token limit (SYLLABOT_LLM_MAX_TOKENS)"


@contextlib.contextmanager
def streaming_to(sink: TextSink | None) -> Iterator[None]:
    """Within the block, an answerer that can stream passes the visible text so far to ``sink``."""
    token = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(token)


def partial_sink() -> TextSink | None:
    """The sink set by :func:`streaming_to` for the question being answered, if any."""
    return _SINK.get()


def parse_event(data: str) -> tuple[str, bool]:
    """One SSE ``data:`` payload → (text it adds, whether the reply is complete).

    ``[DONE]`` and a ``finish_reason`` complete the reply; an ``error`` object is a broken stream,
    and the ``length`` finish reason a cut one (:data:`CUT_REASON`).
    """
    if data.strip() == "[DONE]":
        return "", True
    try:
        event = json.loads(data)
    except ValueError as exc:
        raise StreamFailed("the stream sent an event that is not JSON") from exc
    if not isinstance(event, dict):
        raise StreamFailed("the stream sent an event that is not an object")
    if event.get("error"):
        raise StreamFailed("the stream reported an error")
    choices = event.get("choices") or []
    if not choices or not isinstance(choices[0], dict):
        return "", False  # e.g. a usage-only event
    choice = choices[0]
    if choice.get("finish_reason") == CUT_REASON:
        raise StreamFailed(CUT_MESSAGE)
    delta = choice.get("delta") or {}
    text = delta.get("content") if isinstance(delta, dict) else None
    return (text if isinstance(text, str) else ""), bool(choice.get("finish_reason"))


async def read_text(lines: AsyncIterator[str], stall_s: float, budget_s: float) -> AsyncIterator[str]:
    """Yield the reply so far each time a delta adds text; :class:`StreamFailed` on a stall or a
    break. ``lines``: the response's lines (``httpx.Response.aiter_lines()``). Until the first
    text only ``budget_s`` bounds the wait (the server may still be reading the prompt)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + budget_s
    stall_at = end
    text = ""
    complete = False
    while True:
        stalled = stall_at < end  # which limit comes first
        try:
            async with asyncio.timeout_at(min(stall_at, end)):
                line = await anext(lines)
        except StopAsyncIteration:
            break
        except TimeoutError as exc:
            if stalled:
                raise StreamFailed(f"the stream stalled: no text for {stall_s:.3g} s") from exc
            if not text:
                raise StreamFailed(f"no text within {budget_s:.3g} s") from exc
            raise StreamFailed(f"no complete reply within {budget_s:.3g} s") from exc
        if not line.startswith("data:"):
            continue  # blank separators, ": keep-alive" comments, event names
        delta, done = parse_event(line[len("data:") :].strip())
        complete = complete or done
        if delta:
            text += delta
            stall_at = loop.time() + stall_s
            yield text
        if complete:
            break
    if not complete:
        raise StreamFailed("the stream ended before the reply was complete")


async def lines_of(response: Any) -> AsyncIterator[str]:
    """The lines of an httpx streaming response, with a dropped connection as :class:`StreamFailed`."""
    import httpx

    try:
        async for line in response.aiter_lines():
            yield line
    except httpx.HTTPError as exc:
        raise StreamFailed(f"the stream broke ({type(exc).__name__})") from exc
