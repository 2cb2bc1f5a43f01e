"""Benchmarks: retrieval quality against published figures, and speed against the numpy/faiss floor.

Run one with ``python -m bench.<name> [--quick]``, or all with ``bench/run_all``. Each writes its
markdown table into ``docs/BENCHMARKS.md`` between ``<!-- bench:NAME -->`` markers.
"""
