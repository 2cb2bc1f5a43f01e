"""Load benchmarks: a term's load on the worker(s), one section at a time.

    python -m bench.load --section bursts [its options]   # writes the "load_bursts" section
    python -m bench.load --list                           # the sections there are

Each section is a module ``bench/load_<section>.py`` exposing ``main(argv) -> int`` (its own
argument parser, its own ``<!-- bench:load_<section> -->`` block of docs/benchmarks/results.md). The
sections are found by file name, so adding one needs no change here.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def sections() -> list[str]:
    """The sections there are: one per ``bench/load_<name>.py``."""
    return sorted(path.stem.removeprefix("load_") for path in HERE.glob("load_*.py"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Options after the section's name go to the section (--section bursts --help).",
    )
    parser.add_argument("--section", choices=sections(), help="the section to run")
    parser.add_argument("--list", action="store_true", help="list the sections and exit")
    args, rest = parser.parse_known_args(argv)
    if args.list or args.section is None:
        print("\n".join(sections()))
        return 0 if args.list else 2
    module = importlib.import_module(f"bench.load_{args.section}")
    return int(module.main(rest))


if __name__ == "__main__":
    sys.exit(main())
