"""Benchmarks: retrieval quality against published figures, and speed against the numpy/faiss floor.

Run one with ``python -m bench.<name> [--quick]``, or all with ``bench/run_all``. Each writes its
markdown table into ``docs/benchmarks/results.md`` between ``<!-- bench:NAME -->`` markers; the
one page a reader starts from, ``docs/BENCHMARKS.md``, quotes today's figures from there.
"""
