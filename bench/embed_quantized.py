"""MiniLM with real int8 arithmetic: what it would save, and how far its vectors move. Not shipped.

Why: the shipped model stores its weights as int8 but computes in fp32 (onnxruntime folds the
``Cast``/``Mul`` storage into ~90 MB of fp32 weights at load), and embedding is about half a
question's CPU. Dynamic quantisation (``MatMulInteger``, int8 weights, activations quantised per
call) computes in int8. This builds such a model from the shipped one in a temporary folder and
compares it with the shipped embedder on the sample questions and the sample corpus's passages:
CPU per text, the session's memory, the cosine between the two vectors of each text, and how
often a question's best passage stays the same. Shipping it would change every vector (a new
embedder id, every collection re-indexed) and needs the answer benchmarks re-run first.

Needs the ``onnx`` package (``pip install onnx``), which the product does not; without it this
says so and exits 0.

    python -m bench.embed_quantized [--no-write]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import machine_stamp, markdown_table, write_section
from bench.embed_speed import sample_passages
from bench.queue_latency import sample_questions


def _rss_mb() -> float:
    match = re.search(r"VmRSS:\s+(\d+)", Path("/proc/self/status").read_text())
    return int(match.group(1)) / 1024 if match else float("nan")


def build(folder: Path, per_channel: bool) -> Path:
    """The shipped model, folded to fp32 by onnxruntime, then dynamically quantised to int8."""
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from syllabot.worker.embedders.minilm import default_model_path

    folded = folder / "folded.onnx"
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    ort.InferenceSession(str(default_model_path()), options, providers=["CPUExecutionProvider"])
    out = folder / f"int8-{'channel' if per_channel else 'tensor'}.onnx"
    quantize_dynamic(str(folded), str(out), weight_type=QuantType.QInt8, per_channel=per_channel)
    return out


def measure(model: Path | None) -> tuple[dict[str, float], np.ndarray, np.ndarray]:
    """CPU ms per question and per passage, the session's memory; the vectors."""
    from syllabot.worker.embedders.minilm import MiniLMEmbedder

    before = _rss_mb()
    embedder = MiniLMEmbedder()  # the shipped files, checked; a built model then replaces its session
    loaded = _rss_mb() - before
    if model is not None:
        before = _rss_mb()
        session = MiniLMEmbedder._load_session(model, embedder.threads)
        loaded = _rss_mb() - before
        embedder._session = session
        embedder._output_name = session.get_outputs()[0].name
    questions, passages = sample_questions(200), sample_passages()
    embedder.embed_queries(questions[:8])
    t0 = time.process_time()
    q = embedder.embed_queries(questions)
    q_ms = (time.process_time() - t0) * 1000 / len(questions)
    t0 = time.process_time()
    p = embedder.embed_documents(passages)
    p_ms = (time.process_time() - t0) * 1000 / len(passages)
    return {"q_ms": q_ms, "p_ms": p_ms, "load_mb": loaded}, q, p


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help="print the table, leave docs/ alone")
    args = parser.parse_args(argv)
    try:
        import onnx  # noqa: F401  (quantize_dynamic needs it)
    except ImportError:
        print("bench.embed_quantized needs the onnx package (pip install onnx); skipped", file=sys.stderr)
        return 0
    shipped, base_q, base_p = measure(None)
    rows = [["as shipped (fp32 arithmetic)", f"{shipped['q_ms']:.2f}", f"{shipped['p_ms']:.1f}",
             f"{shipped['load_mb']:.0f}", "1.000 / 1.000", "1.000 / 1.000", "100%"]]  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        for per_channel in (True, False):
            figures, q, p = measure(build(Path(folder), per_channel))
            q_cos, p_cos = (q * base_q).sum(1), (p * base_p).sum(1)
            same = float(((q @ p.T).argmax(1) == (base_q @ base_p.T).argmax(1)).mean())
            rows.append(
                [
                    f"int8, per {'channel' if per_channel else 'tensor'}",
                    f"{figures['q_ms']:.2f}",
                    f"{figures['p_ms']:.1f}",
                    f"{figures['load_mb']:.0f}",
                    f"{q_cos.mean():.3f} / {q_cos.min():.3f}",
                    f"{p_cos.mean():.3f} / {p_cos.min():.3f}",
                    f"{100 * same:.1f}%",
                ]
            )
            print(" | ".join(rows[-1]), file=sys.stderr)
    body = "\n".join(
        [
            "## Embedder: int8 arithmetic (measured, not shipped)",
            "",
            f"`python -m bench.embed_quantized` (needs `onnx`) — {machine_stamp()} The shipped MiniLM "
            "against the same model dynamically quantised by onnxruntime (`quantize_dynamic`, int8 "
            "weights); 200 sample questions and the sample corpus's passages; CPU per text with the "
            "default threads; *session MB*: the process's RSS growth when the model loads (the first row's "
            "includes loading onnxruntime and the tokenizer); cosines "
            "against the shipped vectors of the same texts (mean / min); *same best passage*: "
            "questions whose best passage (by cosine) is the one the shipped model picks.",
            "",
            markdown_table(
                [
                    "model",
                    "CPU ms / question",
                    "CPU ms / passage",
                    "session MB",
                    "cos, questions",
                    "cos, passages",
                    "same best passage",
                ],
                rows,
            ),
            "",
            "Not shipped: every vector would change (a new embedder id, every collection re-indexed), "
            "and the answer benchmarks must hold first.",
        ]
    )
    print(body)
    if not args.no_write:
        write_section("embed_quantized", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
