"""The docs stand alone and say what the code does.

* README.md, docs/*.md and every module docstring name nothing outside this repository (no
  design notes, incidents or issue numbers a reader cannot open); ``../shared/data`` is allowed
  only where it names the optional evaluation data folder that tests and benchmarks read.
* The ``--json`` field lists in docs/ARCHITECTURE.md's Contracts section are what ``search``,
  ``ask``, ``eval``, ``sources``, ``report`` and ``doctor`` print: each command runs on a tiny collection with
  the hashing embedder and the key sets are compared.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from syllabot import cli
from syllabot.shared.config import Settings, get_settings
from syllabot.worker.indexes.engine import Engine
from syllabot.worker.ops.sample import sample_files
from tests.conftest import REPO

OUTSIDE = re.compile(r"DESIGN\.md|the incident|\bissue \d+|\.\./shared(?!/data)", re.IGNORECASE)


def _docs() -> Iterator[tuple[str, str]]:
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        yield str(path.relative_to(REPO)), path.read_text(encoding="utf-8")


def _module_docstrings() -> Iterator[tuple[str, str]]:
    for folder in ("shared", "worker", "bots", "src/syllabot", "corpus"):
        for path in sorted((REPO / folder).rglob("*.py")):
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
            if doc:
                yield str(path.relative_to(REPO)), doc


def test_docs_and_module_docstrings_name_nothing_outside_the_repository() -> None:
    found = []
    for name, text in [*_docs(), *_module_docstrings()]:
        found += [f"{name}: …{text[max(0, m.start() - 30) : m.end() + 30]}…" for m in OUTSIDE.finditer(text)]
    assert not found, "\n".join(found)


# --- the --json contracts ----------------------------------------------------------------------


def documented_fields() -> dict[tuple[str, str], list[str]]:
    """{(command, object): fields} from the Contracts section's `--json` table."""
    text = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text[text.index("## Contracts") :]
    table: dict[tuple[str, str], list[str]] = {}
    for row in re.findall(r"^\| `(\w+) --json` \| (.+?) \| (.+?) \|$", section, re.MULTILINE):
        command, obj, fields = row
        path = re.match(r"`([^`]*)`", obj)
        table[(command, path.group(1) if path else "")] = re.findall(r"`([^`]+)`", fields)
    return table


def resolve(data: Any, path: str) -> list[dict[str, Any]]:
    """The objects at ``path`` ("" the top, "[]" list items, "results[].hits[]" nested)."""
    objects = [data]
    for part in filter(None, re.split(r"\.", path)):
        name, items = part.removesuffix("[]"), part.endswith("[]")
        objects = [o[name] if name else o for o in objects]
        if items:
            objects = [item for o in objects for item in o]
    assert objects, f"nothing at {path!r}"
    return objects


@pytest.fixture
def outputs(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> Iterator[dict[str, Any]]:
    """Each command's --json output on a small collection ('shop': the sample corpus)."""
    for name, value in {
        "REDIS_URL": settings.redis_url or "",
        "SYLLABOT_KEY_PREFIX": settings.key_prefix,
        "SYLLABOT_DATA_DIR": str(settings.data_dir),
        "SYLLABOT_EMBEDDER": "hashing",
        "SYLLABOT_ANSWERER": "extractive",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    get_settings.cache_clear()
    assert Engine(settings).ingest("shop", sample_files(), who="test").changed
    clash = [
        ("a.md", b"# Weekly quiz\n\nThe weekly quiz is due on Monday.\n\nIt covers the week's readings.\n"),
        ("b.md", b"# Weekly quiz\n\nThe weekly quiz is due on Friday.\n\nIt covers the week's readings.\n"),
    ]
    assert Engine(settings).ingest("clash", clash, who="test").changed
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        '{"question": "How long do I have to return a bike?", "file": "returns-policy.md", "page": 1, '
        '"answerable": true, "expect": ["30 days"]}\n'
        '{"question": "Who won the 1998 world cup?", "file": null, "page": null, "answerable": false}\n'
    )
    runs = {
        "search": ["search", "return a bike", "-c", "shop", "--json"],
        "ask": ["ask", "How long do I have to return a bike?", "-c", "shop", "--json"],
        "eval": ["eval", str(questions), "-c", "shop", "--json"],
        "sources": ["sources", "-c", "shop", "--json"],
        "collections": ["collections", "--json"],
        "conflicts": ["conflicts", "-c", "clash", "--json"],
        "report": ["report", "-c", "shop", "--json"],
        "doctor": ["doctor", "--json"],
    }
    printed = {}
    for command, argv in runs.items():
        code = cli.main(argv)
        out, err = capsys.readouterr()
        assert code in ((0, 1) if command == "doctor" else (0,)), err  # doctor: no worker is a failure
        printed[command] = json.loads(out)
    yield printed
    get_settings.cache_clear()


def test_the_documented_json_fields_are_what_each_command_prints(outputs: dict[str, Any]) -> None:
    documented = documented_fields()
    assert {command for command, _ in documented} == {
        "search",
        "ask",
        "eval",
        "sources",
        "collections",
        "conflicts",
        "report",
        "doctor",
    }
    for (command, path), fields in documented.items():
        for obj in resolve(outputs[command], path):
            assert list(obj) == fields, f"{command} --json, {path or 'top level'}"


# --- the platform guides (issue 49) --------------------------------------------------------------


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else len(text)]


def test_each_guide_lists_every_command_its_bot_has_and_a_troubleshooting_table() -> None:
    import yaml

    from syllabot.bots.discord_bot import COMMANDS

    discord_md = (REPO / "docs" / "DISCORD.md").read_text(encoding="utf-8")
    slack_md = (REPO / "docs" / "SLACK.md").read_text(encoding="utf-8")
    missing = [f"/{c.name}" for c in COMMANDS if f"/{c.name}" not in discord_md]
    manifest = yaml.safe_load((REPO / "deploy" / "slack-manifest.yml").read_text(encoding="utf-8"))
    commands = [c["command"] for c in manifest["features"]["slash_commands"]]
    missing += [c for c in commands if f"`{c}" not in slack_md]
    assert missing == []
    for text in (discord_md, slack_md):
        table = _section(text, "## Troubleshooting")
        assert table.count("\n| ") >= 6, table


def test_the_guides_install_run_as_services_and_bind_and_fill_the_channel_before_the_first_ask() -> None:
    discord_md = (REPO / "docs" / "DISCORD.md").read_text(encoding="utf-8")
    assert "sudo bash deploy/install-systemd.sh" in _section(discord_md, "## 0. Install")
    run = _section(discord_md, "## 4. Run")
    assert "systemctl enable --now syllabot-worker syllabot-discord" in run
    first = _section(discord_md, "## 5. First steps")
    assert first.index("/collection set") < first.index("/upload") < first.index("/ask")
    slack_md = (REPO / "docs" / "SLACK.md").read_text(encoding="utf-8")
    run = _section(slack_md, "## 3. Configure and run")
    assert "systemctl enable --now syllabot-worker syllabot-slack" in run
    assert run.index("/syllabot-collection os-2026") < run.index("mentions `@Syllabot`") < run.index("/ask")
