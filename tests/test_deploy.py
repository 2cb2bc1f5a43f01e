"""The deploy files name only commands, settings and files that exist (no docker needed)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from syllabot.shared.config import Settings

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "docker-compose.yml"
CLI_COMMANDS = {"index", "search", "ask", "eval", "sources", "worker", "discord", "slack"}


def _compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))


def test_bots_run_only_under_their_profiles_and_core_services_always() -> None:
    services = _compose()["services"]
    assert services["discord"]["profiles"] == ["discord"]
    assert services["slack"]["profiles"] == ["slack"]
    assert services["index"]["profiles"] == ["tools"]
    assert "profiles" not in services["redis"] and "profiles" not in services["worker"]


def test_redis_persists_and_everything_waits_for_it_healthy() -> None:
    services = _compose()["services"]
    redis = services["redis"]
    assert "--appendonly" in redis["command"] and "yes" in redis["command"]
    assert redis["healthcheck"]["test"][-1] == "ping"
    for name in ("worker", "discord", "slack", "index"):
        assert services[name]["depends_on"]["redis"] == {"condition": "service_healthy"}, name
        assert services[name]["environment"]["REDIS_URL"].startswith("redis://redis:6379")


def test_every_command_is_a_syllabot_subcommand() -> None:
    services = _compose()["services"]
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8")
    assert 'ENTRYPOINT ["syllabot"]' in dockerfile
    for name, service in services.items():
        if name == "redis":
            continue
        entry = service.get("entrypoint", ["syllabot"])
        words = [*entry[1:], *service["command"]]
        assert entry[0] == "syllabot" and words[0] in CLI_COMMANDS, (name, words)
        assert service["build"]["dockerfile"] == "deploy/Dockerfile"
        assert (ROOT / "deploy" / service["build"]["context"]).resolve() == ROOT


def test_systemd_units_start_existing_subcommands() -> None:
    for unit in (ROOT / "deploy").glob("syllabot-*.service"):
        start = re.search(r"^ExecStart=(\S+) (\w+)", unit.read_text(encoding="utf-8"), re.M)
        assert start and start.group(1).endswith("/syllabot") and start.group(2) in CLI_COMMANDS, unit.name


def test_every_variable_the_deploy_files_set_is_a_setting() -> None:
    known = {
        (field.validation_alias.choices[0] if field.validation_alias else name.upper())  # type: ignore[union-attr]
        for name, field in Settings.model_fields.items()
    }
    for service in _compose()["services"].values():
        for variable in service.get("environment", {}):
            assert variable in known, variable


#: The PATH of a regular user's login shell (no /usr/sbin, no /sbin), with this interpreter's bin
#: folder first, as a virtual environment's activation puts it: what the README's test command sees.
REGULAR_PATH = os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"])


def test_the_systemd_install_runs_every_step_into_a_folder(tmp_path: Path) -> None:
    """The README's systemd steps, run by deploy/install-systemd.sh into a folder instead of /: the
    system user (no login), the virtual environment, a private settings file, the units, each
    checked by ``systemd-analyze verify`` with its paths under the folder. Run with a regular
    user's PATH: the script finds useradd in /usr/sbin itself (issue 49: "useradd: command not
    found"). Adding the user and chown need root -- useradd cannot write a user database as
    anyone else, even under the folder -- so a regular user's run says it skipped those two."""
    root = tmp_path / "root"
    env = {
        **os.environ,
        "PATH": REGULAR_PATH,
        "SYLLABOT_ROOT": str(root),
        "SYLLABOT_VENV_ARGS": "--system-site-packages",
    }
    done = subprocess.run(
        ["bash", str(DEPLOY / "install-systemd.sh"), str(DEPLOY.parent)],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "trial: nothing started" in done.stdout
    if os.geteuid() == 0:
        user = next(
            line
            for line in (root / "etc" / "passwd").read_text().splitlines()
            if line.startswith("syllabot:")
        )
        assert user.endswith(":/opt/syllabot:/usr/sbin/nologin")
    else:  # the two steps that need root, said and skipped
        assert "skipped (needs root): adding the system user syllabot (useradd)" in done.stdout
        assert "skipped (needs root): handing" in done.stdout
    home = root / "opt" / "syllabot"
    assert (home / ".env").stat().st_mode & 0o777 == 0o600
    units = sorted(p.name for p in (root / "etc" / "systemd" / "system").glob("*.service"))
    assert units == ["syllabot-discord.service", "syllabot-slack.service", "syllabot-worker.service"]
    helped = subprocess.run(
        [str(home / "venv" / "bin" / "syllabot"), "--help"], capture_output=True, text=True
    )
    assert helped.returncode == 0 and "collections" in helped.stdout
    readme = (DEPLOY.parent / "README.md").read_text()
    assert "deploy/install-systemd.sh" in readme and "daemon-reload" in readme


def test_a_real_install_by_a_regular_user_is_refused_in_one_line_naming_root(tmp_path: Path) -> None:
    """Without SYLLABOT_ROOT the script writes /opt and /etc: a regular user gets one line saying
    it needs root (and how to make a trial instead), before anything is written. Run as the
    unprivileged ``nobody`` when the tests run as root (setpriv, util-linux), as the tester otherwise.

    ``nobody`` cannot read a checkout under a private folder (a clone in /root or a mkdtemp), nor
    pytest's tmp_path (0700 under /tmp/pytest-of-root): it runs a copy of the script from a folder
    every user can read, so the refusal is tested wherever the clone lies."""
    env = {k: v for k, v in os.environ.items() if k != "SYLLABOT_ROOT"}
    env["PATH"] = REGULAR_PATH
    if os.geteuid() != 0:
        command = ["bash", str(DEPLOY / "install-systemd.sh"), str(DEPLOY.parent)]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    else:
        readable = Path(tempfile.mkdtemp(prefix="syllabot-deploy-", dir="/tmp"))
        try:
            readable.chmod(0o755)
            script = readable / "install-systemd.sh"
            shutil.copyfile(DEPLOY / "install-systemd.sh", script)
            script.chmod(0o644)
            command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
            command += ["bash", str(script), str(DEPLOY.parent)]
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, cwd=readable)
        finally:
            shutil.rmtree(readable)
    assert done.returncode == 1
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("install-systemd.sh: needs root (sudo bash deploy/install-systemd.sh)"), line
    assert "SYLLABOT_ROOT=" in line
