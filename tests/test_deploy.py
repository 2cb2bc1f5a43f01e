"""The deploy files name only commands, settings and files that exist (no docker needed)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from syllabot.shared.config import Settings

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "deploy" / "docker-compose.yml"
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
