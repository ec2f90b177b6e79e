"""The format engine: the document model, sniffing, the registry of readers and writers, and
one package per format holding its reader and writer (``docx``, ``pdf``, ``pptx``...), with
builders shared between formats in ``common``.

Readers build a :class:`render_pool.engine.model.Document`; writers serialise one; no writer
knows which reader ran. The engine may use the runtime (``render_pool.runtime``: the browser
the PDF writer prints with) and never imports the batch work (``render_pool.batch``).
"""
