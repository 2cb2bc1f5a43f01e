"""Stage 7, runtime: the running worker process around the stages before it.

Holds: ``jobs`` (the arq jobs and the heartbeat: thin adapters over the engine and the answer path),
``cpu_pool`` (search and answering off the event loop) and ``hooks`` (what the running worker tells
its jobs). ``worker/main.py``, the process entry (``python -m syllabot.worker.main``), stays on top
and imports these.

May import every stage.
"""
