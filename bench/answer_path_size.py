"""How big the answer path is, and how much of it is rules: lines, and lines of regexes and word lists.

    python -m bench.answer_path_size [--against REV]

The answer path is every module a question goes through from its text to the verdict and the
reply: reading the question, search and the evidence, the decision, the answerers, conflicts,
outlines, the chunker and its document families, the job adapters. A *rule line* is a line of an
assignment whose value compiles a regex or holds three or more string literals (a word list, an
alias table, a tuple of heading patterns), or of a ``re.search``/``re.sub``/… call written in place.
Comments and docstrings count as lines (they are part of what a reader reads), not as rules.

``--against REV`` prints the same counts for a git revision beside today's (modules missing at that
revision count as empty; ``worker/drift.py`` and ``worker/intent.py`` are read there when present).
"""

from __future__ import annotations

import argparse
import ast
import subprocess

from bench.common import ROOT

#: The answer path's modules, today's and those it had (a module gone counts as 0 lines).
MODULES = (
    "worker/reading.py",
    "worker/question.py",
    "worker/intent.py",
    "worker/courses.py",
    "worker/engine.py",
    "worker/retrieval.py",
    "worker/building.py",
    "worker/conflicts.py",
    "worker/values.py",
    "worker/outlines.py",
    "worker/drift.py",
    "worker/chunking.py",
    "worker/headings.py",
    "worker/jobs.py",
)
PACKAGES = ("worker/answerers", "worker/families")

_REGEX_CALLS = frozenset({"search", "match", "sub", "findall", "fullmatch", "split", "finditer", "compile"})


def rule_lines(source: str) -> int:
    """The lines of ``source`` that are rules (see the module docstring)."""
    tree = ast.parse(source)
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            inner = list(ast.walk(node.value))
            strings = sum(1 for x in inner if isinstance(x, ast.Constant) and isinstance(x.value, str))
            compiles = any(
                isinstance(x, ast.Call) and isinstance(x.func, ast.Attribute) and x.func.attr == "compile"
                for x in inner
            )
            if compiles or strings >= 3:
                lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
            and node.func.attr in _REGEX_CALLS
        ):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return len(lines)


def _files(rev: str | None) -> dict[str, str]:
    """Path → source of the answer path's modules at ``rev`` (None: the working tree)."""
    if rev is None:
        paths = [p for p in MODULES if (ROOT / p).exists()]
        for package in PACKAGES:
            paths += sorted(str(p.relative_to(ROOT)) for p in (ROOT / package).glob("*.py"))
        return {p: (ROOT / p).read_text(encoding="utf-8") for p in paths}
    listed = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", rev, "--", *MODULES, *PACKAGES],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return {
        p: subprocess.run(
            ["git", "show", f"{rev}:{p}"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        for p in listed
        if p.endswith(".py")
    }


def size(rev: str | None) -> tuple[int, int, dict[str, tuple[int, int]]]:
    """(lines, rule lines, per module) of the answer path at ``rev``."""
    per = {p: (len(src.splitlines()), rule_lines(src)) for p, src in _files(rev).items()}
    return sum(n for n, _ in per.values()), sum(r for _, r in per.values()), per


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", help="a git revision to compare with")
    args = parser.parse_args(argv)
    lines, rules, per = size(None)
    if args.against:
        old_lines, old_rules, old_per = size(args.against)
        print(f"{'module':34} {args.against[:10]:>10} {'now':>7}   rules then → now")
        for p in sorted(set(per) | set(old_per)):
            a, ar = old_per.get(p, (0, 0))
            b, br = per.get(p, (0, 0))
            print(f"{p:34} {a:>10} {b:>7}   {ar:>5} → {br}")
        change = (lines - old_lines) / old_lines if old_lines else 0.0
        print(f"{'total':34} {old_lines:>10} {lines:>7}   {old_rules:>5} → {rules}   ({change:+.1%} lines)")
    else:
        for p, (n, r) in sorted(per.items()):
            print(f"{p:34} {n:>7} {r:>6}")
        print(f"{'total':34} {lines:>7} {rules:>6}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
