"""Settings: every one documented in deploy/.env.example, parsed the way operators write them."""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from syllabot.shared.config import Settings
from tests.conftest import REPO


def _env_names() -> set[str]:
    names: set[str] = set()
    for field in Settings.model_fields.values():
        alias = field.validation_alias
        choices = getattr(alias, "choices", None)
        if choices:
            names.update(c for c in choices if isinstance(c, str))
    return names


def test_every_setting_is_documented_in_env_example() -> None:
    documented = set(
        re.findall(r"^#?\s*([A-Z][A-Z0-9_]+)=", (REPO / "deploy" / ".env.example").read_text(), re.M)
    )
    names = _env_names()
    assert len(names) == len(Settings.model_fields)
    assert names - documented == set(), "settings missing from deploy/.env.example"
    assert documented - names == set(), "deploy/.env.example documents settings the code does not read"


def test_lists_accept_commas_or_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCORD_GUILD_IDS", "1, 2,3")
    monkeypatch.setenv("SLACK_ADMIN_USER_IDS", '["U1", "U2"]')
    settings = Settings(_env_file=None)
    assert settings.discord_guild_ids == [1, 2, 3]
    assert settings.slack_admin_user_ids == ["U1", "U2"]


def test_bad_values_are_refused_with_the_setting_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYLLABOT_HYBRID_ALPHA", "1.5")
    with pytest.raises(ValidationError, match="SYLLABOT_HYBRID_ALPHA"):
        Settings(_env_file=None)


def test_dotenv_file_is_read_and_environment_wins(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = tmp_path / ".env"
    env.write_text("SYLLABOT_TOP_K=7\nSYLLABOT_EMBEDDER=hashing\n")
    monkeypatch.setenv("SYLLABOT_TOP_K", "9")
    settings = Settings(_env_file=env)
    assert settings.embedder == "hashing" and settings.top_k == 9
