"""What every benchmark shares: machine stamp, result sections in docs/benchmarks/results.md, the
embedding cache, in-memory snapshots and the product's search path.

Why a results page of its own: docs/BENCHMARKS.md is the one page a newcomer reads (today's
figures, targets, the command for each, written by hand); the tables the benches write, whole and
regenerated at will, go to docs/benchmarks/results.md, each between its ``<!-- bench:NAME -->``
markers, and the page's figures are read from there.

Why a cache: embedding SciFact's 5,183 abstracts with MiniLM takes minutes on two cores, and the
vectors only change when the embedder or the corpus does, so they are stored under
``bench/results/raw/`` (gitignored) keyed by embedder id, max tokens and a sha256 of the texts.
"""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import os
import platform
import re
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RAW = ROOT / "bench" / "results" / "raw"
DOCS = ROOT / "docs" / "benchmarks" / "results.md"
PLOTS = ROOT / "docs" / "plots"
DATA = Path(os.environ.get("SYLLABOT_BENCH_DATA", ROOT.parent / "shared" / "data"))

DOC_HEADER = """# Benchmarks: the tables the benches write

Every section below is written by a script in `bench/` between its `<!-- bench:NAME -->` markers
(regenerate all with `bench/run_all`, or one with the command shown above its table); edit the
script, not the section. Each table carries the machine and date it was measured on, on a
**shared 2-core machine** while other jobs ran: latencies are noisy and throughputs are lower
bounds. Today's headline figures, with their targets, are on [../BENCHMARKS.md](../BENCHMARKS.md);
what was tried before is in [history.md](history.md).
"""

#: Sections of docs/benchmarks/results.md in reading order (quality, then speed, load and the
#: rest), with the command that writes each.
SECTION_ORDER = [
    ("answers", "python -m bench.answers"),
    ("scifact", "python -m bench.scifact"),
    ("syllabusqa", "python -m bench.syllabusqa"),
    ("vtu", "python -m bench.vtu"),
    ("followups", "python -m bench.followups"),
    ("conflicts", "python -m bench.conflicts"),
    ("search_scale", "python -m bench.search_scale"),
    ("indexing", "python -m bench.indexing"),
    ("queue", "python bench/queue_latency.py"),
    ("streaming", "python -m bench.streaming"),
    ("cache", "python -m bench.cache"),
    ("job_finish", "python -m bench.job_finish"),
    ("cpu_stages", "python -m bench.cpu_stages"),
    ("embed_batches", "python -m bench.embed_speed --batches"),
    ("embed_quantized", "python -m bench.embed_quantized"),
    ("load_bursts", "python -m bench.load --section bursts"),
    ("load_collections", "python -m bench.load --section collections"),
    ("load_ingest", "python -m bench.load --section ingest"),
    ("gaps", "python -m bench.gaps"),
    ("upload_bombs", "python -m bench.upload_bombs"),
]


# --- machine and timing --------------------------------------------------------------------------
def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_stamp() -> str:
    """One line naming the machine and the date, for the top of every table."""
    cores = os.cpu_count() or 1
    today = _dt.date.today().isoformat()
    return (
        f"Measured {today} on {cores} cores ({cpu_model()}), shared with other jobs; "
        f"Python {platform.python_version()}, numpy {np.__version__}."
    )


def percentiles(samples_ms: Sequence[float]) -> tuple[float, float]:
    """(p50, p95) of a list of milliseconds."""
    ordered = sorted(samples_ms)
    if not ordered:
        return 0.0, 0.0
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def time_ms(call: Callable[[], object], repeats: int, warmup: int = 2) -> list[float]:
    """Wall-clock milliseconds of ``repeats`` calls after ``warmup`` untimed ones."""
    for _ in range(warmup):
        call()
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        call()
        out.append((time.perf_counter() - t0) * 1000)
    return out


# --- docs/benchmarks/results.md ---------------------------------------------------------------------
def pyplot() -> Any:
    """matplotlib's pyplot drawing to files (the Agg backend), or None when matplotlib is not
    installed (it comes with the ``bench`` extra): a bench then writes its table without the plot."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: Path) -> None:
    """Write a matplotlib figure as the PNG the docs link to, and free it."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def publish(name: str, lines: list[str], write: bool) -> None:
    """Print a benchmark's markdown section and, unless told not to, write it into the docs."""
    body = "\n".join(lines)
    print()
    print(body)
    if write:
        write_section(name, body)


def write_section(name: str, body: str, path: Path = DOCS) -> None:
    """Replace the text between ``<!-- bench:name -->`` and ``<!-- /bench:name -->``, or append it.

    Only that span is touched, so sections written by other scripts (the queue benchmark's) survive.
    A section names its plots ``plots/NAME.png`` (files under :data:`PLOTS`); the link is made
    relative to the page it lands on.
    """
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    plots = Path(os.path.relpath(PLOTS, path.parent)).as_posix()
    body = body.replace("](plots/", f"]({plots}/")
    block = f"{start}\n{body.strip()}\n{end}"
    text = path.read_text(encoding="utf-8") if path.exists() else _new_document()
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text, count=1)
    else:
        text = _insert_in_order(text, name, block)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _insert_in_order(text: str, name: str, block: str) -> str:
    """Put a new section before the first existing section that comes after it in SECTION_ORDER."""
    order = [n for n, _ in SECTION_ORDER]
    if name in order:
        for later in order[order.index(name) + 1 :]:
            at = text.find(f"<!-- bench:{later} -->")
            if at >= 0:
                return text[:at] + block + "\n\n" + text[at:]
    return text.rstrip() + "\n\n" + block + "\n"


def _new_document() -> str:
    """The header plus an empty, ordered slot per section, so the file reads quality first, then speed."""
    slots = [
        f"<!-- bench:{name} -->\n_Not measured yet: run `{command}`._\n<!-- /bench:{name} -->"
        for name, command in SECTION_ORDER
    ]
    return DOC_HEADER + "\n" + "\n\n".join(slots) + "\n"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    def cell(value: object) -> str:
        if isinstance(value, float):
            return f"{value:.3f}"
        return str(value)

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def mark(value: float, target: float, higher_is_better: bool = True) -> str:
    """'✓' when a figure meets its target, else '✗' and the gap."""
    ok = value >= target if higher_is_better else value <= target
    if ok:
        return "✓"
    return f"✗ ({value - target:+.3f})"


# --- embeddings ------------------------------------------------------------------------------------
def texts_sha(texts: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()[:16]


def _cached_matrix(embedder, texts: Sequence[str], tag: str, compute) -> np.ndarray:
    """``compute()`` once per (tag, embedder, token limit, texts); later runs read the .npy."""
    safe_id = re.sub(r"[^\w.-]", "_", embedder.id)
    max_tokens = getattr(embedder, "max_tokens", "na")
    path = RAW / f"{tag}-{safe_id}-t{max_tokens}-{texts_sha(texts)}.npy"
    if path.exists():
        matrix = np.load(path)
        if matrix.shape == (len(texts), embedder.dim):
            return matrix
    matrix = compute() if texts else np.zeros((0, embedder.dim), dtype=np.float32)
    RAW.mkdir(parents=True, exist_ok=True)
    np.save(path, matrix)
    return matrix


def embed_cached(embedder, texts: Sequence[str], tag: str, progress: bool = True) -> np.ndarray:
    """Unit vectors for ``texts`` from ``embedder``, read from / written to the raw cache."""

    def compute() -> np.ndarray:
        parts = []
        step = 256
        t0 = time.perf_counter()
        for start in range(0, len(texts), step):
            parts.append(embedder.embed_documents(list(texts[start : start + step])))
            if progress and len(texts) > step:
                done = min(start + step, len(texts))
                rate = done / (time.perf_counter() - t0)
                print(f"  embedding {tag}: {done}/{len(texts)} ({rate:.0f}/s)", flush=True)
        return np.vstack(parts)

    return _cached_matrix(embedder, texts, tag, compute)


def embed_queries_cached(embedder, queries: Sequence[str], tag: str) -> np.ndarray:
    """Query vectors through ``embed_query`` (models with query prefixes differ from passages)."""
    return _cached_matrix(
        embedder, queries, f"{tag}-q", lambda: np.vstack([embedder.embed_query(q) for q in queries])
    )


def default_embedder():
    """The product's default embedder (MiniLM), exactly as the worker would build it.

    ``SYLLABOT_BENCH_EMBEDDER_ONNX=PATH`` (experiments only): the same MiniLM embedder on another
    int8 graph, under its own id (``tuned_embedder``)."""
    from syllabot.worker.indexes.embedders import get_embedder

    swapped = os.environ.get("SYLLABOT_BENCH_EMBEDDER_ONNX")
    if swapped:
        return tuned_embedder(Path(swapped), bench_settings().embed_max_tokens)
    return get_embedder(bench_settings())


def tuned_embedder(model_path: Path, max_tokens: int | None = None):
    """The product's MiniLM embedder (its tokenizer, pooling, checks, one text per call) on another
    int8 graph, with an id of its own (the file's digest), so no cache mixes its vectors with the shipped."""
    from syllabot.worker.indexes.embedders.build_int8 import sha256_of
    from syllabot.worker.indexes.embedders.minilm import Graph, MiniLMEmbedder

    digest = sha256_of(model_path)
    return MiniLMEmbedder(
        graph=Graph(f"minilm-tuned-{digest[:12]}-int8-dynamic", digest, model_path), max_tokens=max_tokens
    )


def bench_settings(**update):
    """Settings with the product defaults, ignoring any ``.env``/environment retrieval overrides."""
    from syllabot.shared.config import Settings

    base = Settings(_env_file=None)
    defaults = {
        name: Settings.model_fields[name].default
        for name in (
            "embedder",
            "hybrid_alpha",
            "keyword_method",
            "score_threshold",
            "top_k",
            "dedup_similarity",
            "embed_max_tokens",
            "embed_batch_size",
        )
    }
    return base.model_copy(update={**defaults, **update})


# --- in-memory collections from files --------------------------------------------------------------
def parse_files(paths: Sequence[Path], max_bytes: int = 50 * 1024 * 1024) -> tuple[list, list[str]]:
    """Chunks of every file that loads (loader + chunker exactly as ingest runs them), and errors."""
    from syllabot.worker.ingest.chunking import chunk_document
    from syllabot.worker.ingest.families import relink
    from syllabot.worker.ingest.loaders import load_document

    chunks, errors = [], []
    for path in paths:
        try:
            document = load_document(path.read_bytes(), path.name, max_bytes)
        except Exception as exc:  # the product reports and skips such a file; so do we
            errors.append(f"{path.name}: {exc}")
            continue
        chunks.extend(chunk_document(document))
    return relink(chunks), errors


def snapshot_of(chunks: list, embedder, tag: str, collection: str = "bench"):
    """An in-memory ``IndexSnapshot`` of ``chunks``, built by the product's ``build_snapshot``."""
    from syllabot.worker.indexes.index import build_snapshot

    matrix = embed_cached(embedder, [c.text for c in chunks], tag, progress=False)
    return build_snapshot("bench", collection, embedder.id, embedder.dim, chunks, matrix, "bench")


def search_rows(snapshot, question: str, query_vector: np.ndarray, settings, k: int):
    """``search_snapshot`` plus the ``SearchResult`` an answerer would receive."""
    from syllabot.worker.query.reading import read_question

    return result_for(snapshot, question, read_question(question, snapshot), query_vector, settings, k)


def result_for(
    snapshot, question: str, prepared, query_vector: np.ndarray, settings, k: int, related: bool = True
):
    """The worker's own search of a prepared query (``worker.query.reading.read_question``), as a
    ``SearchResult``: what the answerer receives (``related``: with the passages the conflict check
    reads besides the hits, as ``Engine.finish_search`` adds them; a bench timing them passes False)."""
    from syllabot.worker.indexes.retrieval import related_hits, result_of, search_snapshot

    selection, hits = search_snapshot(snapshot, query_vector, prepared, settings, k)
    others = related_hits(snapshot, prepared, hits) if related else []
    return result_of(
        snapshot,
        hits,
        others,
        selection.fallback,
        snapshot.collection,
        question,
        prepared,
        vector=query_vector,
        meanings=meanings_for(snapshot.embedder_id),
    )


@functools.cache
def meanings_for(embedder_id: str):
    """The course card's slot examples embedded as the worker embeds them (``Engine.slot_meanings``),
    for an index of the default embedder; None for any other (its questions read slots by words only)."""
    from syllabot.worker.query.card import slot_meanings

    embedder = default_embedder()
    return slot_meanings(embedder.id, embedder.embed_queries) if embedder.id == embedder_id else None


#: (label, hybrid_alpha, keyword_method, score_threshold or None for the shipped one)
CONFIGS: list[tuple[str, float, str, float | None]] = [
    ("cosine only", 1.0, "bm25", 0.0),
    ("keyword only: BM25", 0.0, "bm25", 0.0),
    ("keyword only: overlap", 0.0, "overlap", 0.0),
    ("hybrid 0.7 cos + 0.3 BM25", 0.7, "bm25", 0.0),
    ("hybrid 0.7 cos + 0.3 overlap", 0.7, "overlap", 0.0),
    ("hybrid 0.5 cos + 0.5 BM25", 0.5, "bm25", 0.0),
    ("**hybrid as shipped** (BM25, threshold 0.15 + fallback)", 0.7, "bm25", None),
    ("hybrid 0.5 cos + 0.5 BM25, threshold 0.15 + fallback", 0.5, "bm25", None),
]
