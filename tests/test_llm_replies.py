"""What a real model server's replies taught the LLM answerer, each reproduced against the fake.

``python -m bench.llm_server`` runs llama.cpp's OpenAI-compatible server with Gemma 3 270M (a base
model) behind a real worker (findings in docs/ANSWERING.md). Three things it did that no fake had
done: it rambled until the timeout (nothing bounded the reply), it took longer to read our
~3,200-token prompt than the stall limit allows a stream to be silent, and it continued the prompt
instead of answering it: repeating our ask line, "Not in your materials" included, or copying the
passages under their numbered headings ("[2] Returns policy — …", which reads as a citation).
Here the fake (``tests/fake_openai.py``) replies the same way, streamed and not.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from syllabot.shared.config import Settings
from syllabot.shared.schema import Answer
from syllabot.worker.answerers.base import hit_label
from syllabot.worker.answerers.llm import ASK_LINE, LLM_UNAVAILABLE_NOTE, MATERIALS_INTRO, LLMAnswerer
from syllabot.worker.answerers.streaming import CUT_MESSAGE, streaming_to
from tests.fake_openai import StreamingLLM
from tests.queue_helpers import make_hit, search_result

QUESTION = "How long do I have to return a bike?"
HITS = [
    make_hit(1, "A new bike may be returned within 30 days of delivery, in its original box."),
    make_hit(2, "Gift cards are valid for two years from the date of purchase."),
]
ANSWER = "You have 30 days from delivery to return a new bike, in its original box [1]."


@pytest.fixture
async def llm() -> AsyncIterator[StreamingLLM]:
    fake = await StreamingLLM(reply=ANSWER, tokens_per_s=400).start()
    yield fake
    await fake.stop()


async def _answer(llm: StreamingLLM, stream: bool, **settings: Any) -> tuple[Answer, list[str]]:
    """The LLM answerer's answer, streamed (a sink, as for the bots) or in one reply (the CLI)."""
    config = Settings(answerer="openai", embedder="hashing", llm_base_url=llm.url, _env_file=None, **settings)
    answerer = LLMAnswerer(config)
    shown: list[str] = []

    async def sink(text: str) -> None:
        shown.append(text)

    try:
        with streaming_to(sink if stream else None):
            answer = await answerer.answer(QUESTION, search_result(list(HITS)), "shop")
    finally:
        await answerer.aclose()
    return answer, shown


def _logged(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(record.getMessage() for record in caplog.records)


@pytest.mark.parametrize("stream", [True, False])
async def test_the_reply_is_bounded_and_one_cut_at_the_bound_is_not_used(
    llm: StreamingLLM, stream: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """Without max_tokens a rambling model wrote until the timeout (the student waited all of it
    for the fallback); a reply cut at max_tokens stops mid-sentence, and is no whole reply."""
    whole, _ = await _answer(llm, stream, llm_max_tokens=64)
    assert llm.requests[-1]["max_tokens"] == 64
    assert whole.note is None and whole.text == ANSWER  # a reply that ended by itself is used
    llm.finish_reason = "length"
    cut, _ = await _answer(llm, stream, llm_max_tokens=64)
    assert cut.note == LLM_UNAVAILABLE_NOTE and CUT_MESSAGE in _logged(caplog)
    assert "30 days" in cut.text and cut.text != ANSWER  # the extractive answer instead
    await _answer(llm, stream, llm_max_tokens=0)
    assert "max_tokens" not in llm.requests[-1]  # 0: not sent, for endpoints that refuse it


async def test_a_slow_first_token_is_no_stall_but_silence_after_text_is(
    llm: StreamingLLM, caplog: pytest.LogCaptureFixture
) -> None:
    """A CPU server reads the prompt before it writes: the stall limit counts from the first text,
    and until then the LLM's timeout bounds the wait."""
    llm.first_token_s = 1.0
    answer, shown = await _answer(llm, True, llm_stall_s=0.3, llm_timeout_s=10.0)
    assert answer.note is None and answer.text == ANSWER and shown
    llm.first_token_s = 3.0
    late, shown = await _answer(llm, True, llm_stall_s=0.3, llm_timeout_s=1.0)
    assert late.note == LLM_UNAVAILABLE_NOTE and not shown
    assert "no text within" in _logged(caplog)


@pytest.mark.parametrize("stream", [True, False])
async def test_a_reply_that_continues_the_prompt_is_never_shown(
    llm: StreamingLLM, stream: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """A base model wrote our ask line back, over and over; its "Not in your materials." read as
    the marker and our own instructions were shown as general knowledge."""
    llm.reply = (
        '[n] citations; begin with "UNSURE:" if you cannot tell whether they answer it, or with '
        f'"Not in your materials." if they do not answer it.\n\nQuestion: {QUESTION}\n{ASK_LINE}\n\n'
        f"Question: {QUESTION}\n{ASK_LINE}"
    )
    answer, shown = await _answer(llm, stream)
    assert answer.note == LLM_UNAVAILABLE_NOTE and "repeats the prompt's instructions" in _logged(caplog)
    assert answer.general_knowledge is None and "UNSURE" not in answer.text and shown == []
    assert answer.status == "answered" and "30 days" in answer.text  # the extractive answer


COPIES = {
    "headings first": "\n".join(
        f"[{n}] {hit_label(hit)}\n{hit.text}\n" for n, hit in [(2, HITS[1]), (1, HITS[0])]
    ),
    "the materials line first": f"{MATERIALS_INTRO}\n[1] {hit_label(HITS[0])}\n{HITS[0].text}\n",
    "a heading after a line of its own": (
        f"Here is what the materials say [1]:\n[1] {hit_label(HITS[0])}\n{HITS[0].text}\n"
    ),
    "headings of its own": "".join(
        f"[{n}] {HITS[0].subject} — Course objectives, p. {n + 4}\n" for n in range(1, 6)
    ),
}


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("shape", sorted(COPIES))
async def test_a_reply_copying_the_materials_is_never_shown(
    llm: StreamingLLM, stream: bool, shape: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A base model copied the fenced passages: their opening line, their headings ("[2] Returns
    policy — …", which reads as a citation) and their text, a planted injection's included; the
    copy grew on screen as a cited answer until the reply was cut and replaced."""
    llm.reply = COPIES[shape]
    answer, shown = await _answer(llm, stream)
    assert answer.note == LLM_UNAVAILABLE_NOTE and "repeats the materials" in _logged(caplog)
    assert not any(f"{HITS[0].subject} —" in text for text in shown)  # no heading ever on screen
    assert "30 days" in answer.text and hit_label(HITS[0]) not in answer.text


@pytest.mark.parametrize("stream", [True, False])
async def test_a_refused_request_logs_the_servers_reason_without_the_key(
    llm: StreamingLLM, stream: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """llama.cpp's server started with a 2,048-token context refuses our ~3,200-token prompt with
    HTTP 400 and says why; the log said only "HTTP 400"."""
    key = "sk-planted-key-1234"
    llm.status = 400
    llm.error_message = (
        f"This model's maximum context length is 2048 tokens. However, you requested 3020 tokens. (key {key})"
    )
    answer, shown = await _answer(llm, stream, llm_api_key=key)
    assert answer.note == LLM_UNAVAILABLE_NOTE and not shown and "context length" not in answer.text
    logged = _logged(caplog)
    assert "HTTP 400" in logged and "maximum context length is 2048 tokens" in logged
    assert key not in logged and "***" in logged
