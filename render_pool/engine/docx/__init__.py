"""DOCX: the reader (WordprocessingML parts to the document model; ``reader.read_docx``,
the lenient ``alt.read_docx_alt``) and the writer (``writer.write_docx``, the ``/md/convert``
DOCX target; its parts in the ``writer_*`` modules).
"""
