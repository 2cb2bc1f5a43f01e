"""The benchmarks' own code paths on tiny inputs: metrics, doc sections, scale and SciFact plumbing.

Why: benchmarks run rarely and by hand, so a refactor of the retrieval code can break them
silently; these checks take a second and need no data set, no model and no Redis.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("bench.common")

from bench import scifact, search_scale
from bench.common import markdown_table, percentiles, write_section
from bench.syllabusqa import decision_stats
from bench.vtu import same_module


def test_ndcg_matches_trec_eval_definition() -> None:
    grades = {"a": 1, "b": 2}
    # b at rank 1, a at rank 3: dcg = 2/log2(2) + 1/log2(4); ideal = 2/log2(2) + 1/log2(3)
    expected = (2 + 1 / 2) / (2 + 1 / math.log2(3))
    assert scifact.ndcg_at_k(["b", "x", "a"], grades, 10) == pytest.approx(expected)
    assert scifact.ndcg_at_k(["x", "y"], grades, 10) == 0.0
    assert scifact.ndcg_at_k(["b", "a"], grades, 10) == pytest.approx(1.0)
    assert scifact.recall_at_k(["a", "x"], grades, 100) == 0.5


def test_rrf_and_max_normalised_fusion() -> None:
    cosine = np.array([0.9, 0.1, 0.5], dtype=np.float32)
    keyword = np.array([0.0, 0.4, 0.2], dtype=np.float32)
    fused = scifact.rrf(cosine, keyword)
    assert fused[0] == pytest.approx(1 / 61)  # no keyword match: cosine rank only
    assert fused[1] == pytest.approx(1 / 63 + 1 / 61)  # last by cosine, first by keyword
    assert fused[2] == pytest.approx(2 / 62)
    maxnorm = scifact.max_normalised(0.5)(cosine, keyword)
    assert maxnorm[1] == pytest.approx(0.5 * 0.1 + 0.5 * 1.0)


def test_write_section_replaces_only_its_own_block(tmp_path) -> None:
    doc = tmp_path / "B.md"
    write_section("queue", "queue table v1", doc)
    write_section("scifact", "scifact v1", doc)
    write_section("scifact", "scifact v2", doc)
    text = doc.read_text()
    assert "queue table v1" in text and "scifact v2" in text and "scifact v1" not in text
    assert text.count("<!-- bench:scifact -->") == 1
    assert text.index("bench:scifact") < text.index("bench:queue")  # quality first, in reading order


def test_write_section_inserts_before_later_sections_of_an_existing_file(tmp_path) -> None:
    doc = tmp_path / "B.md"
    doc.write_text("# B\n\n<!-- bench:queue -->\nq\n<!-- /bench:queue -->\n")
    write_section("vtu", "vtu table", doc)
    text = doc.read_text()
    assert text.index("vtu table") < text.index("bench:queue")
    assert "<!-- bench:queue -->\nq\n<!-- /bench:queue -->" in text


def test_small_helpers() -> None:
    assert percentiles([1.0, 2.0, 3.0, 4.0]) == (2.5, 4.0)
    assert "| a | b |" in markdown_table(["a", "b"], [(1, 0.5)])
    assert same_module("Module – 3", "module 3") and not same_module(None, "Module 1")
    stats = decision_stats([(False, False), (False, True), (True, False), (True, True)])
    assert stats["precision"] == 0.5 and stats["recall"] == 0.5 and stats["false_alarm"] == 0.5


def test_search_scale_measures_every_row_on_a_tiny_index() -> None:
    result = search_scale.measure(300, repeats=3)
    assert result.n == 300
    assert result.floor[0] > 0 and result.dense[0] > 0 and result.total[0] > 0 and result.keyword[0] >= 0
    assert result.bytes_vectors == 384 * 4
    index = search_scale.synthetic_keyword_index(50)
    assert index.n_docs == 50 and len(index.rows) > 0 and index.df("t0") >= 0


def test_scifact_rankers_run_through_the_product_path() -> None:
    from syllabot.worker.indexes.embedders.hashing import HashingEmbedder

    embedder = HashingEmbedder(64)
    data = scifact.SciFact(
        doc_ids=["d1", "d2", "d3"],
        titles=["Aspirin", "Statins", "Vitamin D"],
        texts=["Aspirin reduces fever", "Statins lower cholesterol", "Vitamin D and bone density"],
        query_ids=["q1"],
        queries=["does aspirin reduce fever"],
        qrels={"q1": {"d1": 1}},
    )
    matrix = embedder.embed_documents(data.texts)
    qvecs = np.vstack([embedder.embed_query(q) for q in data.queries])
    snapshot = scifact.build_index(data, matrix, embedder.id)
    for rank in (
        scifact.product_ranker(snapshot, qvecs, data.queries, 0.7, "bm25"),
        scifact.product_ranker(snapshot, qvecs, data.queries, 0.0, "overlap"),
        scifact.variant_ranker(snapshot, qvecs, data.queries, scifact.rrf),
    ):
        ndcg, recall = scifact.evaluate(data, rank)
        assert ndcg == pytest.approx(1.0) and recall == 1.0


def test_answerability_auc_and_the_least_uncertain_bound() -> None:
    """The figures behind issue 9's "no threshold can do it" claim: check them on cases with known
    answers, so a wrong formula cannot make a weak signal look hopeless (or a hopeless one fine)."""
    from bench.answers import auc, least_uncertain

    # perfectly separated: AUC 1, and two cut-offs leave nothing uncertain
    scores = [0.9, 0.8, 0.7, 0.6, 0.1, 0.2, 0.3]
    labels = [True, True, True, True, False, False, False]
    assert auc(scores, labels) == 1.0
    assert least_uncertain(scores, labels) == 0.0
    # no signal at all (every score equal): AUC one half, everything uncertain
    assert auc([0.5] * 4, [True, False, True, False]) == 0.5
    assert least_uncertain([0.5] * 4, [True, False, True, False]) == 1.0
    # reversed: AUC 0
    assert auc([0.1, 0.9], [True, False]) == 0.0


def test_load_bench_finds_its_sections_and_reports_a_burst(tmp_path) -> None:
    import os

    from bench import load, load_bursts

    assert "bursts" in load.sections()
    assert load.main(["--list"]) == 0
    burst = load_bursts.Burst(
        setup="default-on-w1",
        label="default model, batching on",
        workers=1,
        size=100,
        wall_s=0.8,
        round_trips_s=[0.1 * i for i in range(1, 11)],
        embed_ms=[5.0, 7.0, 9.0],
        from_llm=0,
        per_worker=[100],
        load=1.0,
        worker_cpu_s=1.2,
    )
    off = load_bursts.Burst(**{**burst.__dict__, "setup": "default-off-w1", "wall_s": 2.0})
    assert burst.throughput == 125.0
    text = load_bursts.table([burst, off])
    assert "| default model, batching on | 1 | 100 | 125.0 |" in text and "| 12.0 |" in text
    (target,) = load_bursts.targets([burst, off])
    assert "**2.50×**" in target and "p95 **1.00 s**" in target
    assert load_bursts.cpu_seconds([os.getpid()]) > 0


def test_gap_bench_scores_purity_and_recall() -> None:
    from collections import Counter

    from bench.gaps import NOISE, score

    groups = [["trip", "trip", "trip", NOISE], ["park", "park"], ["trip"], [NOISE]]
    rows, purity, recall = score(groups, Counter({"trip": 4, "park": 2}))
    assert [r[:3] for r in rows] == [[1, 4, "trip"], [2, 2, "park"], [3, 1, "trip"], [4, 1, NOISE]]
    assert purity == pytest.approx((0.75 + 1 + 1 + 1) / 4)
    assert recall == pytest.approx((3 / 4 + 2 / 2) / 2)


def test_every_bench_module_imports() -> None:
    """Benches are not run in CI, so a rename in a shared bench helper breaks them silently (it
    happened: bench.cache imported a helper another bench had renamed). Importing each catches it."""
    import importlib

    from tests.conftest import REPO

    names = sorted(p.stem for p in (REPO / "bench").glob("*.py") if p.stem != "__init__")
    assert "cache" in names and "answers" in names
    for name in names:
        importlib.import_module(f"bench.{name}")


def test_bench_workers_compute_every_answer(settings) -> None:
    """The load and latency benches repeat their questions; with the answer cache on they would time
    Redis lookups (a 1 s LLM burst of 200 'answered' in 0.59 s did), so their workers run without it."""
    from bench.queue_latency import worker_env

    assert worker_env(settings)["SYLLABOT_ANSWER_CACHE_TTL_S"] == "0"
    assert worker_env(settings, SYLLABOT_ANSWER_CACHE_TTL_S="60")["SYLLABOT_ANSWER_CACHE_TTL_S"] == "60"


def test_an_uncertain_reply_is_judged_by_its_expect_or_by_an_annotated_span(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from bench import answers
    from syllabot.worker.ops.evaluation import LabelledQuestion, expect_met

    def row(text: str, expect: list[str], qid: str = "") -> answers.Row:
        q = LabelledQuestion("q?", "a.pdf", expect=expect, extra={"id": qid} if qid else {})
        met = expect_met(text, expect) if expect else None
        return answers.Row(q, "uncertain", text, False, met, 0.1)

    monkeypatch.setattr(answers, "_sqa_spans", lambda: {"s1": ("late work loses ten percent per day",)})
    assert answers.quotes_answer(row("Your materials say: Late work loses ten percent per day.", [], "s1"))
    assert answers.quotes_answer(row("Your materials say: Office hours are Monday.", [], "s1")) is False
    assert answers.quotes_answer(row("Your materials say: 30 days.", ["30 days"])) is True
    assert answers.quotes_answer(row("Your materials say: Office hours.", [])) is None


def test_what_the_student_reads_is_read_off_the_reply_of_the_status_decided() -> None:
    """``train_decision --facts`` scores each case by the reply its status gives: a confident reply
    lacking the facts is the harm, an uncertain one holding them is no failure, a "not in" reply
    holds nothing, and a question nothing can judge counts nowhere."""
    from bench.train_decision import student_reads

    decided = {
        "course": [
            (True, "answered"),  # answered reply holds the facts
            (True, "answered"),  # answered reply lacks them, though the pieces hold them
            (True, "uncertain"),  # the pieces hold them
            (True, "not_in_materials"),
            (True, "answered"),  # nothing can judge it
            (False, "answered"),
        ],
    }
    reads = {
        "course": [(True, False), (False, True), (False, True), (True, True), (None, None), (None, None)]
    }
    got = student_reads(decided, reads)["course"]
    assert got["judged"] == 4
    assert (got["held"], got["right"], got["wrong"]) == (0.5, 0.25, 0.25)
    assert got["unans"] == 1.0


def test_a_sections_plot_links_resolve_from_the_page_it_lands_on(tmp_path) -> None:
    """Sections name their plots ``plots/NAME.png`` (files in ``bench.common.PLOTS``); the results
    page lives one folder below the plots' parent, so the link is rewritten for where it lands."""
    from bench.common import DOCS, PLOTS

    page = tmp_path / "deeper" / "R.md"
    write_section("search_scale", "table\n\n![latency](plots/search_scale.png)", page)
    (link,) = [line for line in page.read_text().splitlines() if line.startswith("![")]
    target = (page.parent / link[link.index("(") + 1 : -1]).resolve()
    assert target == (PLOTS / "search_scale.png").resolve()
    assert DOCS.name == "results.md" and (DOCS.parent / "../plots/search_scale.png").resolve() == target


def test_the_llm_bench_says_how_its_model_server_died(tmp_path) -> None:
    """A model server that crashes (a native llama.cpp build segfaulted on one CPU) stops the run
    with the signal and the fix, instead of thirty rows of "could not reach"; a running server and
    one that exits with a code read as such."""
    import subprocess
    import sys

    from bench.llm_server import server_death

    log = tmp_path / "server.log"
    crashed = subprocess.Popen(
        [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"]
    )
    crashed.wait(30)
    said = server_death(crashed, log)
    assert said is not None and "signal SIGSEGV" in said and str(log) in said
    assert "-DGGML_NATIVE=OFF" in said
    exited = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    exited.wait(30)
    assert server_death(exited, log) == f"the model server exited by itself (exit code 3); its log: {log}"
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert server_death(running, log) is None
    finally:
        running.kill()
        running.wait(30)
