"""The real courses as the benches read them: one collection per course, parsed once per process.

Why a module of its own: the answer bench (``bench.answers``), the embedder training
(``bench.train_embedder``) and the benches built on them all load the same courses the same way;
with the loading in ``bench.answers`` the training imported the answer bench, which imported
``bench.common``, which imports the training for a tuned graph: a loop. Here it has one home that
imports only ``bench.common`` and ``bench.corpus_labels`` (folder and fixed split of each course).
"""

from __future__ import annotations

import functools

from bench.common import parse_files, snapshot_of

#: The real courses from elsewhere (``bench.corpus_labels.COURSE_FOLDERS``: folder and fixed split),
#: each its own collection. ``dev`` runs the tuning courses, ``test`` the held-out ones.
COURSE_SPLIT_OF = {"dev": "tune", "test": "heldout"}


@functools.cache
def course_chunks(slug: str) -> tuple:
    """A real course's chunks, all its documents parsed once per process."""
    from bench.corpus_labels import COURSE_FOLDERS, course_files

    chunks, _ = parse_files(course_files(COURSE_FOLDERS[slug][0]))
    return tuple(chunks)


def course_snapshot(slug: str, embedder):
    """A real course as one collection, as the answer bench and the embedder training read it."""
    from bench.corpus_labels import COURSE_FOLDERS

    folder = COURSE_FOLDERS[slug][0]
    return snapshot_of(list(course_chunks(slug)), embedder, f"course-{folder}", collection=folder)


def courses_of(split: str) -> list[str]:
    """The courses of a split (``dev``: tuning, ``test``: held out) whose data is here."""
    from bench.corpus_labels import COURSE_FOLDERS, available

    return [s for s in available() if COURSE_FOLDERS[s][1] == COURSE_SPLIT_OF[split]]
