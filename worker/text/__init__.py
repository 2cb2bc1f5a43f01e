"""Stage 1, text: the words, sentences and chunk types that every later stage reads with.

Holds: ``documents`` (a loaded Document and its Chunks), ``keyword`` (the one stemmer and the BM25
keyword index), ``terms`` (a text's content words as every comparison weighs them), ``sentences``
(sentence and item splitting), ``vocabulary`` (the English word list spelling and compounds use),
``value_shapes`` (the patterns of days, dates, times, terms, course codes, rooms and page labels that
the value recogniser and ingest's titles both read), ``currency`` (the one rule for which document
is current), ``display`` (text as a student reads it: symbol-font bullets shown) and ``text_caches``
(how many texts the per-text caches keep).

May import: ``syllabot.shared`` only; nothing else of the worker. Every other stage may import it.
"""
