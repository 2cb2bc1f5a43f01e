"""MiniLM with int8 arithmetic (the default) against the fp32-arithmetic model it replaced.

Why: the earlier default stored its weights as int8 but computed in fp32 (onnxruntime folds the
``Cast``/``Mul`` storage into ~90 MB of fp32 weights at load), and embedding is about half a
question's CPU. Dynamic quantisation (``MatMulInteger``, int8 weights, activations quantised per
call) computes in int8: the shipped ``data/minilm-int8-dynamic.onnx`` is built so, per output
channel, by ``python -m syllabot.worker.indexes.embedders.build_int8``. This compares the fp32 model, the
shipped int8 one and a per-tensor build (made here in a temporary folder) on the sample questions
and the sample corpus's passages: CPU per text, the session's memory, the cosine between the two
vectors of each text, and how often a question's best passage stays the same. Each int8 model
embeds one text per call, as shipped (a batch would change each text's vector).

Needs the ``onnx`` package (``pip install onnx``) for the per-tensor build; without it that row is
left out.

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


def measure(int8: bool, model: Path | None = None) -> tuple[dict[str, float], np.ndarray, np.ndarray]:
    """CPU ms per question and per passage, the session's memory; the vectors. ``model``: an int8
    build that is not the shipped file (its session replaces the shipped one's)."""
    from syllabot.worker.indexes.embedders.minilm import GRAPHS, MiniLMEmbedder

    before = _rss_mb()
    embedder = MiniLMEmbedder(
        graph=GRAPHS["minilm-base" if int8 else "minilm-fp32"]
    )  # the shipped files, checked
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
    fp32, base_q, base_p = measure(False)
    rows = [["fp32 arithmetic (the earlier default)", f"{fp32['q_ms']:.2f}", f"{fp32['p_ms']:.1f}",
             f"{fp32['load_mb']:.0f}", "1.000 / 1.000", "1.000 / 1.000", "100%"]]  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        builds: list[tuple[str, Path | None]] = [("int8, per channel (shipped)", None)]
        try:
            from syllabot.worker.indexes.embedders.build_int8 import build

            builds.append(("int8, per tensor", build(Path(folder) / "tensor.onnx", per_channel=False)))
        except ImportError as exc:  # no onnx: the shipped row still says what matters
            print(f"per-tensor row left out: {exc}", file=sys.stderr)
        for label, model in builds:
            figures, q, p = measure(True, model)
            q_cos, p_cos = (q * base_q).sum(1), (p * base_p).sum(1)
            same = float(((q @ p.T).argmax(1) == (base_q @ base_p.T).argmax(1)).mean())
            rows.append(
                [
                    label,
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
            "## Embedder: int8 arithmetic (the default)",
            "",
            f"`python -m bench.embed_quantized` — {machine_stamp()} The fp32-arithmetic MiniLM (the "
            "earlier default, 4 texts per call) against the same weights dynamically quantised by "
            "onnxruntime (`quantize_dynamic`; one text per call, as shipped); 200 sample questions and "
            "the sample corpus's passages; CPU per text with the default threads; *session MB*: the "
            "process's RSS growth when the model loads (the first row's includes loading onnxruntime "
            "and the tokenizer); cosines against the fp32 vectors of the same texts (mean / min); "
            "*same best passage*: questions whose best passage (by cosine) is the one the fp32 model picks.",
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
            "Shipped per channel as the default (`all-MiniLM-L6-v2-int8-dynamic`): the answer "
            "benchmarks before and after are in *Embedder upgrade: answers before and after*.",
        ]
    )
    print(body)
    if not args.no_write:
        write_section("embed_quantized", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
