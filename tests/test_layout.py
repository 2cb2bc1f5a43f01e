"""The installed namespace and the rooms' import rules.

Everything installs under ``syllabot.``; the repository keeps ``bots/``, ``worker/``, ``shared/`` and
``corpus/`` at its top level and ``pyproject.toml`` maps them into the namespace. ``bots`` imports only
``shared``, ``worker`` only ``shared``, ``shared`` nothing of ours; ``syllabot.cli`` (``src/syllabot/``)
is the composition root and may import both sides. Imports are read with ``ast``, so function-level
and ``TYPE_CHECKING`` imports count too.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# room (a folder of the repository) -> the syllabot sub-packages it may import
ROOMS: dict[str, set[str]] = {
    "shared": {"shared"},
    "worker": {"shared", "worker"},
    "bots": {"shared", "bots"},
    "src/syllabot": {"shared", "worker", "bots", "cli", "cli_queue", "corpus"},
}
OLD_TOP_LEVEL = {"shared", "worker", "bots", "syllabot_corpus"}


def _python_files(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (REPO / folder).rglob("*.py"))


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in ``path``; relative imports are refused."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path.relative_to(REPO)}:{node.lineno}: use absolute syllabot.… imports"
            assert node.module is not None
            if node.module == "syllabot":  # from syllabot import cli
                found.extend((node.lineno, f"syllabot.{alias.name}") for alias in node.names)
            else:
                found.append((node.lineno, node.module))
    return found


@pytest.mark.parametrize("room", sorted(ROOMS))
def test_each_room_imports_only_what_it_may(room: str) -> None:
    allowed = ROOMS[room]
    wrong = []
    for path in _python_files(room):
        for line, module in _imports(path):
            parts = module.split(".")
            if parts[0] != "syllabot" or len(parts) < 2:
                continue
            if parts[1] not in allowed:
                wrong.append(f"{path.relative_to(REPO)}:{line} imports {module}")
    rule = f"{room}/ may import only syllabot.{{{', '.join(sorted(allowed))}}}"
    assert not wrong, rule + ":\n" + "\n".join(wrong)


def test_everything_imports_the_namespaced_names() -> None:
    """``import worker`` would work from the repository root (the folder is there) and nowhere else."""
    wrong = [
        f"{path.relative_to(REPO)}:{line} imports {module}"
        for path in _python_files("shared", "worker", "bots", "src", "tests", "bench")
        for line, module in _imports(path)
        if module.split(".")[0] in OLD_TOP_LEVEL
    ]
    assert not wrong, "import syllabot.… names, not the repository's folders:\n" + "\n".join(wrong)


def test_the_installed_package_is_imported_not_a_local_folder() -> None:
    """``python -m pytest`` from the root puts the root on sys.path: no folder there may shadow ``syllabot``."""
    assert not (REPO / "syllabot").exists(), "a ./syllabot folder would shadow the installed package"
    import syllabot
    import syllabot.bots
    import syllabot.shared
    import syllabot.worker

    assert Path(syllabot.__file__).resolve().parent.name == "syllabot"
    for package in (syllabot.shared, syllabot.worker, syllabot.bots):
        assert package.__name__.startswith("syllabot."), package


def _wheel(tmp_path: Path) -> Path:
    """Build from a clean copy: a stale ``build/`` in the checkout would leak old modules into the wheel."""
    source = tmp_path / "source"
    shutil.copytree(
        REPO,
        source,
        ignore=shutil.ignore_patterns(
            ".git", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".venv", "results"
        ),
    )
    out = tmp_path / "wheel"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--disable-pip-version-check",
         "-w", str(out), str(source)],
        check=True,
        cwd=tmp_path,
    )  # fmt: skip
    (wheel,) = out.glob("syllabot-*.whl")
    return wheel


@pytest.mark.slow
def test_the_wheel_installs_one_namespace_and_works(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path)
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert tops == {"syllabot"}, tops
    assert "syllabot/corpus/returns-policy.md" in names
    assert "syllabot/worker/indexes/embedders/data/tokenizer.json" in names
    assert not [n for n in names if "make_syllabi" in n], "the dev-only generator ships in the wheel"

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel)],
        check=True,
        cwd=tmp_path,
    )
    # Run from an empty folder with a clean environment: nothing of the repository on sys.path.
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME"}}
    run = tmp_path / "run"
    run.mkdir()
    check = (
        "import importlib.util, syllabot.worker.indexes.engine, syllabot.bots.discord_render\n"
        "from syllabot.worker.ops.sample import sample_files\n"
        "from syllabot.worker.ingest.loaders import load_document\n"
        "files = sample_files()\n"
        "assert len(files) >= 10, files\n"
        "assert all(load_document(data, name, 10_000_000).pages for name, data in files)\n"
        "for name in ('shared', 'worker', 'bots', 'syllabot_corpus'):\n"
        "    assert importlib.util.find_spec(name) is None, name\n"
        "assert 'site-packages' in syllabot.worker.indexes.engine.__file__\n"
        "print('ok')\n"
    )
    done = subprocess.run([str(python), "-c", check], cwd=run, env=env, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
    helped = subprocess.run(
        [str(venv / "bin" / "syllabot"), "--help"], cwd=run, env=env, capture_output=True, text=True
    )
    assert helped.returncode == 0, helped.stderr
    assert "ask" in helped.stdout and "worker" in helped.stdout

    # The README's main job, exactly as written there, on a fresh data directory and the embedded
    # Redis: a cited answer from the shipped sample syllabi.
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    command = re.search(r'pip install \. && syllabot ask "([^"]+)"', readme)
    assert command, "the README's one-command try-it line changed shape"
    fresh = {**{k: v for k, v in env.items() if k not in {"REDIS_URL", "SYLLABOT_KEY_PREFIX"}}}
    fresh["SYLLABOT_DATA_DIR"] = str(tmp_path / "data")
    asked = subprocess.run(
        [str(venv / "bin" / "syllabot"), "ask", command.group(1)],
        cwd=run,
        env=fresh,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.startswith("Module 2 of 21CS47 Cloud Computing"), asked.stdout
    assert "[1] 21CS47 Cloud Computing — Module 2" in asked.stdout


def test_the_editable_install_maps_the_repository_folders() -> None:
    """In this checkout (editable install) the mapped packages are the repository's folders."""
    spec = importlib.util.find_spec("syllabot.worker")
    assert spec is not None and spec.origin is not None
    origin = Path(spec.origin).resolve()
    if "site-packages" in origin.parts:
        pytest.skip("syllabot is installed from a wheel here, not editable")
    assert origin == REPO / "worker" / "__init__.py"
    corpus = importlib.util.find_spec("syllabot.corpus")
    assert corpus is not None and corpus.origin is not None
    assert Path(corpus.origin).resolve() == REPO / "corpus" / "__init__.py"


#: The worker's stages in the order imports run: a module imports its own stage and the stages
#: before it, never a later one. ``worker/main.py``, the process entry, sits on top of them all.
STAGES = ("text", "ingest", "query", "indexes", "answerers", "ops", "runtime")
WORKER = REPO / "worker"
#: Stages that may not name a later stage even for a type: a question is read, and a file ingested,
#: without knowing how it will be answered or run ("ingest and reading never import answers or the
#: runtime"). The other stages may name a later stage's types under ``TYPE_CHECKING`` (a type-only
#: import never runs).
NO_LATER_TYPES = {"text": "text", "ingest": "text ingest", "query": "text ingest query indexes"}


def _stage_of(module: str) -> str | None:
    """The stage of ``syllabot.worker.<stage>…``; ``"main"`` for the entry, None outside the worker."""
    parts = module.split(".")
    if parts[:2] != ["syllabot", "worker"] or len(parts) < 3:
        return None
    return parts[2]


def _worker_imports(path: Path) -> list[tuple[int, str, bool]]:
    """(line, module, type_only) of every import of ``path``; ``type_only``: under ``if TYPE_CHECKING``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    type_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            type_only.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module]
            if node.module in ("syllabot.worker", *(f"syllabot.worker.{s}" for s in STAGES)):
                modules = [f"{node.module}.{alias.name}" for alias in node.names]
            found += [(node.lineno, m, id(node) in type_only) for m in modules]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, id(node) in type_only) for alias in node.names]
    return found


def test_every_worker_module_sits_in_a_stage_that_says_what_it_holds() -> None:
    """A newcomer sees the worker's shape from its tree: every module is in one stage's folder,
    and each stage's ``__init__`` says what it holds and what it may import."""
    loose = sorted(p.name for p in WORKER.glob("*.py") if p.name not in {"__init__.py", "main.py"}) + sorted(
        # a folder left by an older checkout holds only caches; one with a module is outside the stages
        p.name
        for p in WORKER.iterdir()
        if p.is_dir() and p.name not in STAGES and any(p.rglob("*.py"))
    )
    assert loose == [], f"worker/ modules outside the stages {STAGES}: {loose}"
    for stage in STAGES:
        doc = ast.get_docstring(ast.parse((WORKER / stage / "__init__.py").read_text(encoding="utf-8")))
        assert doc and "Holds:" in doc and "May import" in doc, f"worker/{stage}/__init__.py"
        for module in sorted((WORKER / stage).glob("*.py")):
            if module.name != "__init__.py":
                assert f"``{module.stem}``" in doc, f"worker/{stage}/__init__.py does not name {module.stem}"


def test_imports_run_one_way_through_the_stages() -> None:
    """An import that runs goes to the module's own stage or an earlier one; a type-only import may
    name a later stage's type, except from the stages that may not know about later ones at all."""
    order = {stage: n for n, stage in enumerate(STAGES)}
    wrong = []
    for path in _python_files("worker"):
        rel = path.relative_to(WORKER)
        here = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        for line, module, type_only in _worker_imports(path):
            there = _stage_of(module)
            if there is None or (here in ("__init__", "main") and there != "main"):
                continue
            where = f"worker/{rel}:{line} ({here}) imports {module} ({there})"
            if there == "main" or there not in order:
                wrong.append(where + ": not a stage")
            elif order[there] <= order[here]:
                continue
            elif not type_only:
                wrong.append(where + ": a later stage, at run time")
            elif here in NO_LATER_TYPES and there not in NO_LATER_TYPES[here].split():
                wrong.append(where + ": a later stage, even for a type")
    assert not wrong, (
        "imports run text → ingest → query → indexes → answerers → ops → runtime:\n" + "\n".join(wrong)
    )


def test_the_architecture_map_follows_the_tree() -> None:
    """``docs/ARCHITECTURE.md`` names every worker module where it is, and no module that is not there."""
    text = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    modules = {
        str(p.relative_to(REPO))
        for p in WORKER.rglob("*.py")
        if p.name != "__init__.py" and "data" not in p.parts
    }
    # a module is named by its path, or in its package's row (``worker/indexes/embedders/`` … ``minilm.py``)
    unnamed = sorted(
        m
        for m in modules
        if m not in text and not (m.rsplit("/", 1)[0] + "/" in text and m.rsplit("/", 1)[1] in text)
    )
    named = set(re.findall(r"worker/[\w/]+\.py", text))
    missing = sorted(n for n in named if not (REPO / n).exists())
    assert unnamed == [] and missing == [], (
        f"not in the map: {unnamed}; in the map, not in the tree: {missing}"
    )


STATUSES = frozenset({"answered", "uncertain", "not_in_materials"})
#: The one module that sets an answer's outcome (``decision.decide``); everything else reads it.
DECIDES = REPO / "worker" / "answerers" / "decision.py"


def _status_settings(path: Path) -> list[str]:
    """Where ``path`` writes an outcome itself: ``status=`` or ``"status":`` given a literal outcome,
    a literal outcome assigned to a name or attribute called ``status``, or a call given one first
    (``Reply("answered", …)``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    where = str(path.relative_to(REPO))

    def literal(node: ast.AST | None) -> bool:
        return isinstance(node, ast.Constant) and node.value in STATUSES

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and literal(node.args[0]):
            found.append(f"{where}:{node.lineno}: a call given {node.args[0].value!r}")  # type: ignore[attr-defined]
        elif isinstance(node, ast.keyword) and node.arg == "status" and literal(node.value):
            found.append(f"{where}:{node.value.lineno}: status={node.value.value!r}")  # type: ignore[attr-defined]
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == "status" and literal(value):
                    found.append(f"{where}:{key.lineno}: 'status': {value.value!r}")  # type: ignore[attr-defined]
        elif isinstance(node, ast.Assign) and literal(node.value):
            for target in node.targets:
                name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")
                if name == "status":
                    found.append(f"{where}:{node.lineno}: status = {node.value.value!r}")  # type: ignore[attr-defined]
    return found


def test_only_the_decision_sets_an_answers_status() -> None:
    """One verdict: ``answered`` / ``uncertain`` / ``not_in_materials`` are set only by
    ``worker/answerers/decision.py``; answerers, the conflict check and the pipeline compose text
    from its verdict and never overwrite it."""
    wrong = [
        w for p in _python_files("worker", "shared", "bots") if p != DECIDES for w in _status_settings(p)
    ]
    assert wrong == []
    assert _status_settings(DECIDES), "the decision module is where statuses are set"


def test_the_chunker_keeps_only_general_headings_and_asks_the_families_for_theirs() -> None:
    """VTU's CIE/SEE marks split and lab components are the VTU family's headings
    (``worker/ingest/families/vtu.py``), not the chunker's; the chunker still finds them through the
    families, so a VTU booklet is read as before and a new family adds a module, not chunker edits."""
    from syllabot.worker.ingest import headings
    from syllabot.worker.ingest.families import preceding_course, vtu

    family_only = ("Continuous Internal Evaluation", "Laboratory Component:", "Semester End Examination")
    for line in family_only:
        assert not any(rule.pattern.match(line) for rule in headings.HEADINGS), line
        assert any(rule.pattern.match(line) for rule in vtu.HEADINGS), line
    heading = headings.match_heading("Continuous Internal Evaluation")
    assert heading is not None and heading.section == "Continuous Internal Evaluation"
    assert headings.match_heading("Textbooks") is not None  # a general heading stays the chunker's
    # the booklet order (the course printed before another) is the family's guess, asked through FAMILIES
    assert preceding_course("21CS53") == vtu.preceding_code("21CS53") == "21CS52"
    from syllabot.worker.ingest import chunking

    assert not hasattr(chunking, "_preceding_code")


def _bench_imports(path: Path) -> set[str]:
    """The bench modules ``path`` imports (``from bench import answers`` included), at any level."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names if a.name.startswith("bench."))
        elif isinstance(node, ast.ImportFrom) and node.module == "bench":
            names.update(f"bench.{a.name}" for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("bench."):
            names.add(node.module)
    return names


def test_the_benches_import_one_another_without_a_loop() -> None:
    """A loop (the answer bench, ``bench.common`` and the embedder training once imported each other)
    works only in the order Python happens to meet it: shared loading has one home the others import
    (the courses in ``bench.courses``). Function-level imports count: they close a loop just the same."""
    graph = {
        f"bench.{p.stem}": _bench_imports(p) for p in _python_files("bench") if p.parent == REPO / "bench"
    }
    loops: list[str] = []
    done: set[str] = set()

    def visit(name: str, trail: list[str]) -> None:
        if name in trail:
            loops.append(" -> ".join([*trail[trail.index(name) :], name]))
            return
        if name in done:
            return
        for other in sorted(graph.get(name, ())):
            visit(other, [*trail, name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])
    assert not loops, "bench modules import one another in a loop:\n" + "\n".join(loops)
