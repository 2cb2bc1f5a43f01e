"""Redis Sentinel with real servers: one primary, one replica and three Sentinels on loopback ports
(``redis-server`` and ``redis-server --sentinel``), started by each test.

What is checked: every client (the CLI's and the worker's blocking clients, the queue client, the
bots' asyncio clients) finds the primary through the Sentinels; acknowledged writes (an index
published, a binding, a vote) return only once the replica holds them, and fail with a clear error
when it does not; and the failover drill: two `syllabot worker` processes, five clients asking
steadily and an admin writing, the primary SIGKILLed mid-burst, then nothing acknowledged is lost,
every question gets one answer of its own or a clear error, the service answers again within
:data:`RECOVERY_TARGET_S`, and the old primary comes back as a replica. docs/RELIABILITY.md lists it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis

from syllabot.shared.bindings import Bindings
from syllabot.shared.config import Settings
from syllabot.shared.keys import Keys
from syllabot.shared.queue import QueueClient, QueueError
from syllabot.shared.redis_conn import (
    Durability,
    NotReplicated,
    async_client_at,
    describe,
    parse_sentinel_url,
    resolve_redis_url,
    sync_client,
)
from syllabot.shared.schema import Answer, AskRequest
from syllabot.worker.indexes.engine import Engine
from syllabot.worker.ops.doctor import connect_and_check_redis
from syllabot.worker.ops.sample import sample_files
from tests.queue_helpers import free_port, redis7_binary, wait_for_workers, worker_processes

pytestmark = pytest.mark.slow

SERVICE = "syllabot-drill"
RETURNS_QUESTION = "How many days do I have to return a new bike?"
#: The issue's target: the service answers again at most this long after the primary is killed,
#: Sentinel's detection included (``down-after-milliseconds`` 1000 here; see docs/RELIABILITY.md).
RECOVERY_TARGET_S = 10.0
#: How long an acknowledged write waits for the replica in these tests.
WAIT_MS = 1000


@dataclass
class Node:
    """One ``redis-server`` (or Sentinel) on its own port and directory, to SIGKILL and restart."""

    binary: str
    dir: Path
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen | None = None

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_connect_timeout=1, socket_timeout=5)

    def start(self, *args: str) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        command = [self.binary, *args, "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--dir", str(self.dir), "--logfile", str(self.dir / "redis.log")]
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _until(lambda: self._answers(), 15, f"redis on {self.port} did not come up: {self.log_tail()}")

    def _answers(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise AssertionError(f"redis on {self.port} exited: {self.log_tail()}")
        client = self.client()
        try:
            return bool(client.ping())
        except (redis.ConnectionError, redis.BusyLoadingError):
            return False
        finally:
            client.close()

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
        self.proc = None

    def info(self, section: str) -> dict:
        client = self.client()
        try:
            return dict(client.info(section))
        finally:
            client.close()

    def log_tail(self, lines: int = 12) -> str:
        path = self.dir / "redis.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""


def _holds(condition) -> bool:
    """``condition()``, read as False while the node it asks closes the connection: a restarted
    primary that Sentinel turns into a replica drops its clients as its role changes."""
    try:
        return bool(condition())
    except redis.ConnectionError:
        return False


def _until(condition, timeout: float, message: str, every: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while not _holds(condition):
        if time.monotonic() > deadline:
            raise AssertionError(message() if callable(message) else message)
        time.sleep(every)


class SentinelGroup:
    """A primary, a replica and three Sentinels monitoring :data:`SERVICE` (quorum 2), detection
    set low (1 s) so a failover takes seconds, as the drill's target assumes."""

    def __init__(self, root: Path) -> None:
        binary = redis7_binary()
        self.a = Node(binary, root / "a")
        self.b = Node(binary, root / "b")
        self.sentinels = [Node(binary, root / f"s{i}") for i in range(3)]

    def start(self) -> None:
        persistence = ("--appendonly", "yes", "--appendfsync", "everysec", "--save", "")
        self.a.start(*persistence)
        self.b.start(*persistence, "--replicaof", "127.0.0.1", str(self.a.port))
        _until(
            lambda: self.b.info("replication").get("master_link_status") == "up",
            15,
            lambda: f"the replica never synced: {self.b.log_tail()}",
        )
        for sentinel in self.sentinels:
            sentinel.dir.mkdir(parents=True, exist_ok=True)
            conf = sentinel.dir / "sentinel.conf"
            conf.write_text(
                f"sentinel monitor {SERVICE} 127.0.0.1 {self.a.port} 2\n"
                f"sentinel down-after-milliseconds {SERVICE} 1000\n"
                f"sentinel failover-timeout {SERVICE} 5000\n"
                f"sentinel parallel-syncs {SERVICE} 1\n"
            )
            sentinel.start(str(conf), "--sentinel")
        # Sentinels find each other by hello messages every 2 s and the replica by INFO every 10 s;
        # on a loaded 2-core CI machine that once took over 30 s
        _until(
            self._settled, 90, lambda: f"the Sentinels never saw each other and the replica: {self._views()}"
        )

    def _settled(self) -> bool:
        for sentinel in self.sentinels:
            client = sentinel.client()
            try:
                state = client.sentinel_master(SERVICE)
            except redis.RedisError:
                return False
            finally:
                client.close()
            if int(state.get("num-other-sentinels", 0)) < 2 or int(state.get("num-slaves", 0)) < 1:
                return False
        return True

    def _views(self) -> list[str]:
        """What each Sentinel sees of the service, for a failure message."""
        views = []
        for sentinel in self.sentinels:
            client = sentinel.client()
            try:
                state = client.sentinel_master(SERVICE)
                views.append(
                    f"other sentinels {state.get('num-other-sentinels')}, replicas {state.get('num-slaves')}"
                )
            except redis.RedisError as exc:
                views.append(f"error {exc}")
            finally:
                client.close()
        return views

    def primary_port(self) -> int:
        client = self.sentinels[0].client()
        try:
            _host, port = client.sentinel_get_master_addr_by_name(SERVICE)
            return int(port)
        finally:
            client.close()

    def node(self, port: int) -> Node:
        return self.a if self.a.port == port else self.b

    def settings(self, base: Settings) -> Settings:
        return base.model_copy(
            update={
                "redis_url": None,
                "redis_sentinels": ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels),
                "redis_service": SERVICE,
                "redis_wait_ms": WAIT_MS,
            }
        )

    def env(self) -> dict[str, str]:
        return {
            "REDIS_URL": "",
            "REDIS_SENTINELS": ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels),
            "SYLLABOT_REDIS_SERVICE": SERVICE,
            "SYLLABOT_REDIS_WAIT_MS": str(WAIT_MS),
        }

    def stop(self) -> None:
        for node in (*self.sentinels, self.a, self.b):
            node.kill()


@pytest.fixture
def group(tmp_path: Path) -> Iterator[SentinelGroup]:
    servers = SentinelGroup(tmp_path / "sentinel")
    servers.start()
    try:
        yield servers
    finally:
        servers.stop()


def _bind_acknowledged(settings: Settings, scope: str) -> None:
    """Bind ``scope`` to "drill" with the CLI's blocking client, as an acknowledged write."""
    client = sync_client(settings)
    try:
        client.set(Keys(settings.key_prefix).binding("test", scope), "drill")
        Durability.of(settings).confirm(client, "The channel's collection")
    finally:
        client.close()


def _ask_request(question: str) -> AskRequest:
    return AskRequest(question=question, collection="drill", platform="test")


# --- settings and URLs ---------------------------------------------------------------------------


def test_sentinel_settings_become_one_url_whose_passwords_never_print() -> None:
    settings = Settings(
        REDIS_SENTINELS=" 10.0.0.1:26379, [::1]:26380 ",
        SYLLABOT_REDIS_SERVICE="class-redis",
        SYLLABOT_REDIS_PASSWORD="hunter2@/x",
        SYLLABOT_REDIS_SENTINEL_PASSWORD="s3cret",
        _env_file=None,
    )
    url = resolve_redis_url(settings)
    target = parse_sentinel_url(url)
    assert target.sentinels == (("10.0.0.1", 26379), ("::1", 26380))
    assert (target.service, target.password, target.sentinel_password) == (
        "class-redis",
        "hunter2@/x",
        "s3cret",
    )
    shown = describe(url)
    assert "s3cret" not in shown and "hunter2" not in shown, shown
    assert "10.0.0.1:26379,[::1]:26380/class-redis" in shown
    assert settings.replicas_to_wait == 1  # Sentinel: acknowledged writes wait for a replica
    assert Settings(REDIS_URL="redis://x:6379/0", _env_file=None).replicas_to_wait == 0


def test_redis_url_and_sentinels_together_are_refused_naming_both(tmp_path: Path) -> None:
    env = {**os.environ, "REDIS_URL": "redis://127.0.0.1:6379/0", "REDIS_SENTINELS": "127.0.0.1:26379"}
    env["SYLLABOT_DATA_DIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "syllabot", "collections"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "REDIS_SENTINELS" in done.stderr and "REDIS_URL" in done.stderr, done.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "syllabot", "collections"],
        cwd=tmp_path,
        env={**env, "REDIS_URL": "", "REDIS_SENTINELS": "127.0.0.1"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "'127.0.0.1' is not one" in bad.stderr, bad.stderr


# --- clients through the Sentinels; writes that wait for the replica -------------------------------


async def test_every_client_finds_the_primary_and_acknowledged_writes_reach_the_replica(
    group: SentinelGroup, settings: Settings
) -> None:
    private = group.settings(settings)
    keys = Keys(private.key_prefix)
    report = Engine(private).ingest("drill", sample_files())  # the CLI's blocking client
    replica = group.b.client()
    try:
        # Published means on the replica too: WAIT returned before ingest did.
        assert replica.get(keys.current("drill")) == report.index_version.encode()  # type: ignore[union-attr]
        client = async_client_at(resolve_redis_url(private))
        try:
            bindings = Bindings(client, keys, "test", durability=Durability.of(private))
            await bindings.bind("channel-1", "drill")
            assert replica.get(keys.binding("test", "channel-1")) == b"drill"
        finally:
            await client.aclose()
    finally:
        replica.close()
    doctor_client, checks = connect_and_check_redis(private)
    assert doctor_client is not None
    doctor_client.close()
    replicas = next(c for c in checks if c.name == "redis replicas")
    assert replicas.status == "ok", replicas
    assert f"primary 127.0.0.1:{group.a.port} (from the Sentinels)" in replicas.detail
    assert f"127.0.0.1:{group.b.port} online" in replicas.detail and "1 replica(s) online" in replicas.detail


async def test_with_the_replica_dead_acknowledged_writes_fail_clearly_and_questions_still_work(
    group: SentinelGroup, settings: Settings, tmp_path: Path
) -> None:
    private = group.settings(settings)
    Engine(private).ingest("drill", sample_files())
    group.b.kill()
    started = time.monotonic()
    with pytest.raises(NotReplicated) as caught:
        _bind_acknowledged(private, "x")
    waited = time.monotonic() - started
    assert "0 of the 1 replica(s) required confirmed it within 1000 ms" in str(caught.value)
    assert "could be lost if the primary failed now" in str(caught.value)
    assert waited < 5  # WAIT's own timeout bounds it; never a hang
    # The CLI: the upload is on the primary, the admin is told it is not copied, exit 1.
    doc = tmp_path / "extra.md"
    doc.write_text("# Extra\n\nThe workshop opens at nine on Saturdays.\n")
    env = {**os.environ, **group.env(), "SYLLABOT_KEY_PREFIX": private.key_prefix}
    env.update({"SYLLABOT_EMBEDDER": "hashing", "SYLLABOT_DATA_DIR": str(tmp_path / "data")})
    done = subprocess.run(
        [sys.executable, "-m", "syllabot", "index", str(doc), "-c", "drill"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "The new index of 'drill' was saved on Syllabot's primary database" in done.stderr, done.stderr
    # Reads need no replica: questions are still answered.
    result = Engine(private).search("drill", RETURNS_QUESTION)
    assert result.hits and "returns-policy.md" in {h.file for h in result.hits}
    doctor_client, checks = connect_and_check_redis(private)
    assert doctor_client is not None
    doctor_client.close()
    replicas = next(c for c in checks if c.name == "redis replicas")
    assert replicas.status == "fail" and "0 replica(s) online" in replicas.detail, replicas


# --- the failover drill ----------------------------------------------------------------------------


@dataclass
class Outcome:
    question: str
    started: float
    ended: float
    answer: Answer | None = None
    error: BaseException | None = None


async def test_primary_sigkilled_mid_burst_loses_nothing_acknowledged_and_answers_again(
    group: SentinelGroup, settings: Settings, tmp_path: Path
) -> None:
    """Two workers, five clients asking steadily, an admin binding channels and re-indexing; the
    primary is SIGKILLed mid-burst. Then: every acknowledged write is on the new primary, every
    question got one answer of its own or a clear error, questions asked after the kill are answered
    within the target, and the old primary, started again, rejoins as a replica of the new one."""
    private = group.settings(settings)
    keys = Keys(private.key_prefix)
    Engine(private).ingest("drill", sample_files())
    outcomes: list[Outcome] = []
    acknowledged: list[str] = []
    admin_errors: list[BaseException] = []
    reindexed: list[str] = []
    stop = asyncio.Event()
    killed_at: list[float] = []
    names = ["w1", "w2"]
    with worker_processes(private, tmp_path, names, **group.env()):
        await wait_for_workers(private, 2, timeout=60)
        async with QueueClient(private) as client:

            async def asker(n: int) -> None:
                i = 0
                while not stop.is_set():
                    question = f"{RETURNS_QUESTION} (#{n}.{i})"
                    outcome = Outcome(question, time.monotonic(), 0.0)
                    try:
                        outcome.answer = await client.ask(_ask_request(question), timeout=20)
                    except QueueError as exc:  # a clear error for the asker, counted below
                        outcome.error = exc
                        await asyncio.sleep(0.1)
                    outcome.ended = time.monotonic()
                    outcomes.append(outcome)
                    i += 1

            admin_redis = async_client_at(resolve_redis_url(private))
            bindings = Bindings(admin_redis, keys, "test", durability=Durability.of(private))

            async def admin() -> None:
                i = 0
                while not stop.is_set():
                    scope = f"channel-{i}"
                    try:
                        await bindings.bind(scope, "drill")
                        acknowledged.append(scope)
                    except (redis.RedisError, OSError) as exc:  # NotReplicated is one
                        admin_errors.append(exc)
                        await asyncio.sleep(0.1)
                    if i == 10:
                        try:
                            report = await client.reindex("drill", who="admin", timeout=30)
                            reindexed.append(report.index_version or "")
                        except QueueError as exc:
                            admin_errors.append(exc)
                    i += 1
                    await asyncio.sleep(0.02)

            tasks = [asyncio.create_task(asker(n)) for n in range(5)] + [asyncio.create_task(admin())]
            deadline = time.monotonic() + 30
            while sum(1 for o in outcomes if o.answer) < 20 or len(acknowledged) < 15:
                assert time.monotonic() < deadline, f"the burst never got going: {outcomes[-3:]}"
                await asyncio.sleep(0.05)
            old_port = group.primary_port()
            group.node(old_port).kill()
            killed_at.append(time.monotonic())
            # Keep asking until questions asked after the kill are answered again, then a little more.
            deadline = killed_at[0] + 40
            while not any(o.answer and o.started > killed_at[0] for o in outcomes):
                assert time.monotonic() < deadline, f"no answer after the kill: {outcomes[-5:]}"
                await asyncio.sleep(0.05)
            await asyncio.sleep(2)
            stop.set()
            await asyncio.gather(*tasks)
            await admin_redis.aclose()
    new_port = group.primary_port()
    assert new_port != old_port, "the Sentinels never promoted the replica"
    new_primary = group.node(new_port).client()
    try:
        lost = [s for s in acknowledged if new_primary.get(keys.binding("test", s)) != b"drill"]
        assert not lost, f"{len(lost)} of {len(acknowledged)} acknowledged writes lost: {lost[:5]}"
        if reindexed:
            current = new_primary.get(keys.current("drill"))
            assert current == reindexed[-1].encode(), (current, reindexed)
    finally:
        new_primary.close()
    answered = [o for o in outcomes if o.answer]
    errors = [o for o in outcomes if o.error]
    # One answer per question, its own, and right; every failure a clear error of the queue's.
    assert all(o.answer.question == o.question for o in answered)  # type: ignore[union-attr]
    assert all(o.answer.citations and o.answer.text for o in answered)  # type: ignore[union-attr]
    assert len({o.question for o in outcomes}) == len(outcomes)
    first_after = min(o.ended for o in answered if o.started > killed_at[0])
    recovery = first_after - killed_at[0]
    print(
        f"failover drill: {len(answered)} answered, {len(errors)} errors, {len(acknowledged)} acknowledged "
        f"writes (0 lost), {len(admin_errors)} admin writes refused "
        f"({sum(isinstance(e, NotReplicated) for e in admin_errors)} as not copied to a replica), "
        f"answering again {recovery:.2f} s after the kill"
    )
    # A failure is a clear error of the queue's, and only for a question caught in the failover.
    assert all(str(o.error) and killed_at[0] - 1 <= o.started <= first_after for o in errors), [
        (o.started - killed_at[0], str(o.error)) for o in errors
    ]
    assert recovery <= RECOVERY_TARGET_S, f"answering again took {recovery:.1f} s"
    # The old primary comes back as a replica of the new one and catches up.
    old = group.node(old_port)
    old.start("--appendonly", "yes", "--save", "")
    _until(
        lambda: (
            old.info("replication").get("role") == "slave"
            and old.info("replication").get("master_port") == new_port
            and old.info("replication").get("master_link_status") == "up"
        ),
        30,
        lambda: f"the old primary never rejoined as a replica: {old.log_tail()}",
    )
    rejoined = old.client()
    try:
        _until(
            lambda: all(rejoined.get(keys.binding("test", s)) == b"drill" for s in acknowledged[-3:]),
            10,
            "the rejoined replica does not hold the acknowledged writes",
        )
        # With a replica again, acknowledged writes succeed, and reach it before they return.
        _bind_acknowledged(private, "after-rejoin")
        assert rejoined.get(keys.binding("test", "after-rejoin")) == b"drill"
    finally:
        rejoined.close()
