"""Stage 6, ops: what operators and teachers ask of the worker, beside answering.

Holds: ``doctor`` (checks of a deployment), ``metrics`` (Prometheus), ``question_log``, ``gaps`` and
``report`` (what students asked and what the materials lacked), ``evaluation`` (labelled questions
scored) and ``sample`` (the shipped sample corpus).

May import: ``text``, ``ingest``, ``query``, ``indexes`` and ``answerers``; never the runtime.
"""
