"""The retrieval worker, by stage; each stage imports only the stages before it.

``text`` → ``ingest`` → ``query`` → ``indexes`` → ``answerers`` → ``ops`` → ``runtime``, and
``main`` (the process entry) on top. Each stage's ``__init__`` says what it holds and what it may
import; ``tests/test_layout.py`` holds the direction, and ``docs/ARCHITECTURE.md`` maps the tree.
"""
