"""Stage 3, query: reading a question, before anything is searched.

Holds: ``question`` (cleaning what was typed), ``spelling``, ``conversation`` (follow-ups and a
switched course), ``intent`` (the shape of reply asked for), ``values`` (dates, times and names
asked for or printed), ``outlines`` (weeks, lectures and modules asked about), ``card`` (the course
card: a course's facts in typed slots, read at index time, and the slot a question asks) and
``reading`` (the one ``Question`` the later stages read).

May import: ``text`` and ``ingest``. Never answers, operations or the runtime, not even for types; a
type of ``indexes`` may be named under ``TYPE_CHECKING`` (the index a question is read against).
"""
