"""Answerers: turn a question and its retrieved hits into an :class:`~shared.schema.Answer`.

``extractive`` (default, offline) quotes the materials; ``openai`` asks any OpenAI-compatible
chat-completions endpoint and falls back to the extractive answer when that fails.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from syllabot.shared.config import Settings
    from syllabot.worker.answerers.base import Answerer


def get_answerer(settings: Settings) -> Answerer:
    """The answerer the settings name (``SYLLABOT_ANSWERER``)."""
    from syllabot.worker.answerers.extractive import ExtractiveAnswerer

    if settings.answerer == "openai":
        from syllabot.worker.answerers.llm import LLMAnswerer

        return LLMAnswerer(settings, fallback=ExtractiveAnswerer(settings))
    return ExtractiveAnswerer(settings)
