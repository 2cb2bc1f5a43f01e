"""`syllabot` user errors: one line naming the argument or setting and what it accepts, exit 2;
an unknown collection is an error for every command; `remove`; plain progress lines off a terminal.

Runs ``cli.main`` in this process on the real Redis (private key prefix) with the hashing embedder.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from syllabot import cli, cli_queue
from syllabot.shared import source_names
from syllabot.shared.config import Settings, get_settings
from syllabot.worker.indexes.engine import Engine
from syllabot.worker.ops.sample import sample_files


@pytest.fixture
def shop(env: Settings) -> Settings:
    assert Engine(env).ingest("shop", sample_files(), who="test").changed
    return env


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse's own exit
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


# --- arguments and settings ---------------------------------------------------------------------


@pytest.mark.parametrize("k", ["-3", "0", "101", "abc"])
def test_k_out_of_range_names_the_argument_and_range(
    shop: Settings, capsys: pytest.CaptureFixture[str], k: str
) -> None:
    code, out, err = run(["search", "returns", "-c", "shop", "-k", k], capsys)
    assert code == 2 and out == ""
    assert "-k must be between 1 and 100" in one_line(err)


def test_a_too_long_question_is_one_line(env: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["ask", "x" * 10_000], capsys)
    assert code == 2
    line = one_line(err)
    assert "10000 characters" in line and "between 1 and" in line


def test_a_bad_setting_names_the_variable_and_what_it_accepts(
    env: Settings, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SYLLABOT_TOP_K", "abc")
    code, _, err = run(["sources", "-c", "shop"], capsys)
    assert code == 2
    line = one_line(err)
    assert "SYLLABOT_TOP_K" in line and "whole number" in line and "at least 1" in line
    assert "pydantic" not in line and "http" not in line

    monkeypatch.setenv("SYLLABOT_TOP_K", "5")
    monkeypatch.setenv("SYLLABOT_EMBEDDER", "nope")
    get_settings.cache_clear()
    code, _, err = run(["sources"], capsys)
    assert code == 2 and "SYLLABOT_EMBEDDER" in one_line(err) and "'hashing'" in err


def test_a_secret_setting_is_never_echoed(
    env: Settings, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as caught:
        Settings(_env_file=None, SYLLABOT_RATE_LIMIT_PER_MINUTE="x", DISCORD_TOKEN=["not", "a", "str"])
    lines = cli.settings_error_lines(caught.value)
    assert any(line.startswith("DISCORD_TOKEN is not valid") for line in lines), lines
    assert not any("not" in line.split("is not valid")[0] for line in lines)


@pytest.mark.parametrize("url", ["notaurl", "localhost:6379", "http://host/0", "redis://"])
def test_a_bad_redis_url_exits_2_naming_the_setting(
    env: Settings, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.setenv("REDIS_URL", url)
    get_settings.cache_clear()
    code, _, err = run(["sources", "-c", "shop"], capsys)
    assert code == 2
    assert one_line(err).startswith(f"syllabot: REDIS_URL='{url}' is not valid: expected a URL starting with")


def test_a_bad_redis_url_never_shows_its_password(
    env: Settings, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDIS_URL", "http://admin:hunter2@cache:6379/0")
    get_settings.cache_clear()
    code, _, err = run(["sources"], capsys)
    assert code == 2 and "REDIS_URL" in one_line(err) and "hunter2" not in err


def test_an_unknown_setting_is_warned_about_naming_the_closest_one(
    shop: Settings, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SYLLABOT_TOPK", "3")
    (tmp_path / ".env").write_text("SLACK_BOT_TOKN=xoxb-1\n")  # the working directory's .env counts too
    code, out, err = run(["sources", "-c", "shop"], capsys)
    assert code == 0 and "returns" in out.lower()
    assert (
        "syllabot: warning: SYLLABOT_TOPK is not a setting Syllabot reads, so it has no effect; "
        "did you mean SYLLABOT_TOP_K?"
    ) in err.splitlines()
    assert any("SLACK_BOT_TOKN" in line and "SLACK_BOT_TOKEN?" in line for line in err.splitlines()), err
    assert "xoxb-1" not in err


def test_a_batch_with_a_refused_file_exits_3_and_indexes_the_rest(
    env: Settings, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    good = tmp_path / "plan.md"
    good.write_text("# Course plan\n\n## Module 1\n\nDeadlocks and their four conditions.\n")
    broken = tmp_path / "syllabus.pdf"
    broken.write_bytes(b"not a pdf at all")
    code, out, err = run(["index", str(good), str(broken), str(tmp_path / "missing.pdf"), "-c", "os"], capsys)
    assert code == cli.EXIT_PARTLY_INDEXED == 3
    assert "ERROR syllabus.pdf" in out
    assert err.strip().splitlines()[-1] == (
        "syllabot: indexed 1 of 3 files into 'os'; 2 refused (see the lines above); exit 3"
    )
    assert [s.file for s in Engine(env).sources("os")] == ["plan.md"]
    code, _, _ = run(["index", str(good), "-c", "os"], capsys)
    assert code == 0


def test_a_missing_or_malformed_eval_file(
    shop: Settings, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(["eval", str(tmp_path / "missing.jsonl"), "-c", "shop"], capsys)
    assert code == 2 and "missing.jsonl does not exist" in one_line(err)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "ok?", "file": null, "page": null, "answerable": false}\n{oops\n')
    code, _, err = run(["eval", str(bad), "-c", "shop"], capsys)
    assert code == 2 and "2" in one_line(err)


def test_argparse_errors_are_one_line(env: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["search"], capsys)
    assert code == 2 and "question" in one_line(err)


# --- unknown collections -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "returns", "-c", "nope", "--json"],
        ["sources", "-c", "nope", "--json"],
        ["remove", "returns-policy.md", "-c", "nope"],
        ["ask", "how long to return a bike?", "-c", "nope"],
        ["index", "--reindex", "-c", "nope"],
    ],
)
def test_an_unknown_collection_is_an_error_naming_the_known_ones(
    shop: Settings, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run(argv, capsys)
    assert (code, out) == (2, "")
    assert one_line(err) == "syllabot: collection 'nope' does not exist; known: shop"


def test_eval_on_an_unknown_collection(
    shop: Settings, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "ok?", "file": null, "page": null, "answerable": false}\n')
    code, out, err = run(["eval", str(questions), "-c", "nope", "--json"], capsys)
    assert (code, out) == (2, "") and "collection 'nope' does not exist; known: shop" in err


def test_no_collections_yet_says_how_to_add_one(env: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["search", "returns", "-c", "os-2026"], capsys)
    assert code == 2
    assert "no collections yet; add documents with `syllabot index PATH -c os-2026`" in one_line(err)


def test_a_bad_collection_name_is_a_usage_error(env: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["sources", "-c", "bad name!"], capsys)
    assert code == 2 and one_line(err).startswith("syllabot: --collection:")


def test_ask_with_nothing_indexed_answers_from_the_sample_collection_and_says_so(
    env: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["ask", "How many days do I have to return a new bike?", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["collection"] == "sample"
    assert "comes from the 'sample' collection" in err and "-c my-course" in err
    assert "sample corpus" in err
    assert Engine(env).store.documents("default") == {}


def test_the_samples_never_mix_into_your_own_materials(
    env: Settings, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Following the first-run advice (`syllabot index FILE`, no -c) leaves the samples out."""
    run(["ask", "what's the warranty on the battery?"], capsys)  # seeds 'sample'
    syllabus = tmp_path / "21CS44.md"
    syllabus.write_text(
        "# Operating Systems\n\n## Module 3\n\nDeadlocks: prevention, avoidance, detection.\n"
    )
    assert run(["index", str(syllabus)], capsys)[0] == 0  # into 'default'
    assert [s.file for s in Engine(env).sources("default")] == ["21CS44.md"]
    code, out, err = run(["ask", "what's the warranty on the battery?", "--json"], capsys)
    assert code == 0 and json.loads(out)["collection"] == "default"
    assert json.loads(out)["status"] != "answered" and "warranty" not in json.loads(out)["body"].lower()
    assert "sample" not in err


# --- collections -------------------------------------------------------------------------------


def test_collections_lists_each_with_documents_chunks_size_embedder_and_date(
    shop: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["collections", "--json"], capsys)
    assert code == 0
    [info] = json.loads(out)
    assert info["name"] == "shop" and info["documents"] == len(sample_files()) and info["chunks"] > 50
    assert info["embedder"].startswith("hashing") and info["bytes"] > 10_000 and info["indexed_at"]
    code, out, _ = run(["collections"], capsys)
    assert code == 0 and out.splitlines()[1].split()[:3] == [
        "shop",
        str(len(sample_files())),
        str(info["chunks"]),
    ]


def test_drop_asks_for_confirmation_then_removes_everything(
    shop: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    from syllabot.shared.redis_conn import sync_client

    client = sync_client(shop)
    client.set(f"{shop.key_prefix}bind:discord:channel:42", "shop")
    client.set(f"{shop.key_prefix}bind:slack:channel:C1", "other")
    code, _, err = run(["drop", "-c", "shop"], capsys)
    assert code == 2 and "run it again with --yes" in one_line(err) and "15 documents" in err
    assert Engine(shop).sources("shop")  # nothing deleted without --yes
    code, out, err = run(["drop", "-c", "shop", "--yes"], capsys)
    assert code == 0, err
    assert out.startswith("dropped collection 'shop': 15 documents") and "1 channel or server binding" in out
    assert list(client.scan_iter(match=f"{shop.key_prefix}c:shop:*")) == []
    assert client.get(f"{shop.key_prefix}bind:discord:channel:42") is None
    assert client.get(f"{shop.key_prefix}bind:slack:channel:C1") == b"other"  # another collection's
    client.close()
    code, _, err = run(["sources", "-c", "shop"], capsys)
    assert code == 2 and ("does not exist" in err or "no collections yet" in err)
    code, _, err = run(["drop", "-c", "shop", "--yes"], capsys)
    assert code == 2


# --- remove ------------------------------------------------------------------------------------


def test_remove_by_file_name_then_by_doc_id(shop: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    before = {s.doc_id: s for s in Engine(shop).sources("shop")}
    target = next(s for s in before.values() if s.file == "returns-policy.md")
    code, out, err = run(["remove", "returns-policy.md", "-c", "shop"], capsys)
    assert code == 0, err
    assert out.startswith(f"removed returns-policy.md (doc_id {target.doc_id}) from collection 'shop':")
    assert "removing in this process" in err
    assert target.doc_id not in {s.doc_id for s in Engine(shop).sources("shop")}

    other = next(s for s in before.values() if s.doc_id != target.doc_id)
    code, out, _ = run(["remove", other.doc_id, "-c", "shop"], capsys)
    assert code == 0 and f"doc_id {other.doc_id}" in out
    assert len(Engine(shop).sources("shop")) == len(before) - 2

    code, out, err = run(["remove", "returns-policy.md", "-c", "shop"], capsys)  # gone already
    assert (code, out) == (2, "")
    assert "no document 'returns-policy.md' in collection 'shop'" in one_line(err)


def test_a_path_or_other_case_names_the_file(shop: Settings) -> None:
    sources = Engine(shop).sources("shop")
    assert (
        source_names.find_document(sources, "some/dir/RETURNS-POLICY.md", "shop").file == "returns-policy.md"
    )
    with pytest.raises(source_names.UnknownDocument, match="syllabot sources -c shop"):
        source_names.find_document(sources, "nothing.pdf", "shop")


@pytest.mark.slow
def test_remove_goes_through_a_running_worker(
    shop: Settings, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import asyncio

    from tests.queue_helpers import wait_for_workers, worker_processes

    with worker_processes(shop, tmp_path, ["w"]):
        asyncio.run(wait_for_workers(shop, 1))
        code, out, err = run(["remove", "returns-policy.md", "-c", "shop"], capsys)
        assert code == 0, err
        assert "removing through the running worker" in err and out.startswith("removed returns-policy.md")
        assert "returns-policy.md" not in {s.file for s in Engine(shop).sources("shop")}


# --- progress off a terminal -------------------------------------------------------------------


def test_plain_progress_lines_when_stderr_is_not_a_terminal() -> None:
    now = [0.0]
    stream = io.StringIO()
    line = cli_queue._ProgressLine(stream, every_s=5.0, clock=lambda: now[0])
    line.update("reading", 0, 2)
    line.update("reading", 1, 2)  # same stage, too soon: nothing
    for done in range(64, 876, 64):
        now[0] += 1.0
        line.update("embedding", min(done, 875), 875)
    line.update("storing", 0, 1)
    line.update("done", 1, 1)
    line.close()
    assert stream.getvalue().splitlines() == [
        "reading 0/2 files",
        "embedding 64/875 chunks",
        "embedding 384/875 chunks",
        "embedding 704/875 chunks",
        "storing",
    ]
    assert "\r" not in stream.getvalue() and "\033" not in stream.getvalue()


# --- the collection used without -c (issue 49) ---------------------------------------------------


def test_without_c_the_only_collection_is_used_and_several_are_named_with_the_setting(
    shop: Settings, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A class that indexed into its own collection: `ask` without -c used `default`, which does
    not exist, and failed with no hint. One collection of theirs: it is used, and said; several:
    one line naming them and SYLLABOT_DEFAULT_COLLECTION; the setting then picks one."""
    code, out, err = run(["ask", "How many days do I have to return a bike?", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["collection"] == "shop"
    assert one_line(err) == "syllabot: using 'shop', the only collection (-c picks another)"
    code, out, err = run(["sources"], capsys)
    assert code == 0 and "returns-policy.md" in out

    Engine(shop).ingest("os-2026", [("os.md", b"# OS\n\n## Module 3\n\nDeadlocks.\n")], who="test")
    code, out, err = run(["ask", "How many days do I have to return a bike?"], capsys)
    assert code == 2 and out == ""
    assert one_line(err) == (
        "syllabot: no collection 'default'; name one with -c (os-2026, shop), or set "
        "SYLLABOT_DEFAULT_COLLECTION to the one to use without -c"
    )
    monkeypatch.setenv("SYLLABOT_DEFAULT_COLLECTION", "shop")
    get_settings.cache_clear()
    code, out, err = run(["ask", "How many days do I have to return a bike?", "--json"], capsys)
    assert code == 0 and err == "" and json.loads(out)["collection"] == "shop"
