"""How many texts each of the search and answer path's per-text caches keeps.

Why one number: the same chunks come back question after question, so their word sets, blocks,
sentences and values are cached by text (``search._tokens``, ``terms.term_set``,
the passages' bodies and blocks, the extractive answerer's units and word sets, ``sentences``' split,
``values.values_in``, the flattened texts ``versions.printed_in`` compares).
Each entry keeps its text alive beside what was computed from it, so the caches are part of a
worker's memory however few collections its snapshot cache holds. 1,024 texts hold a large
course's whole hot set (a real course of 977 chunks answered at the same CPU per question as with 4,096),
and at 4,096 a worker that had answered 1,000 collections held 16 MB more RSS
(``python -m bench.load_collections``, docs/BENCHMARKS.md).
"""

from __future__ import annotations

PER_TEXT = 1024
