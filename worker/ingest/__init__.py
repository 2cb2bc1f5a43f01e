"""Stage 2, ingest: from an uploaded file to the chunks the index holds, and back to their text.

Holds: ``loaders`` (one entry per format; archives bounded by ``zip_bounds``, errors in
``ingest_errors``), ``pdf_text``, ``pdf_repair`` and ``pdf_figures`` (PDFium text, its repairs, plots
and slide furniture), ``web_text`` and ``markdown_text`` (HTML, reStructuredText, Markdown),
``headings``, ``families/`` (document families such as VTU syllabi), ``doc_titles``, ``chunking``,
``courses`` (the names students use for a collection's courses) and ``passages`` (a chunk's text
read back: its body, blocks and list items, the same for search and answers).

May import: ``text``. Never the question's reading, the index, answers, operations or the runtime.
"""
