"""Stage 5, answerers: from a question and its search result to the reply a student reads.

Holds: ``decision`` (the verdict: answered, uncertain or not in the materials), ``extractive``
(the default, offline answerer quoting the materials) with ``focus`` and ``base`` (citations
checked and renumbered), ``notes`` (the words of a note that the materials disagree), ``llm`` and ``streaming`` (any OpenAI-compatible server, falling back to the
extractive answer), ``answer_cache`` and ``pipeline`` (the answer path's one door). :func:`get_answerer`
gives the answerer the settings name (``SYLLABOT_ANSWERER``).

May import: ``text``, ``ingest``, ``query`` and ``indexes``. Types of ``ops`` and ``runtime`` may be
named under ``TYPE_CHECKING`` only.
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
