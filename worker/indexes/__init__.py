"""Stage 4, indexes: building, holding and searching a collection's index.

Holds: ``embedders/`` (the shipped MiniLM graphs and the others), ``pipeline`` (embedding while
reading) and ``batching``, ``index`` (the snapshot: unit vectors, keyword index, outlines, and what
``conflicts`` and ``versions`` find the materials disagree on, at index time), ``building``,
``engine`` (index, re-index and search a collection), ``store``, ``buildlock``, ``cancel``,
``snapshot_cache`` and ``heap`` (holding snapshots in a worker), ``search`` (hybrid scores and the
guaranteed fallback), ``breakdown`` (a grading breakdown's weights) and ``retrieval`` (one search
result: hits de-duplicated, lists carried across passages, disagreements found).

May import: ``text``, ``ingest`` and ``query``. Types of ``answerers`` may be named under
``TYPE_CHECKING`` only.
"""
