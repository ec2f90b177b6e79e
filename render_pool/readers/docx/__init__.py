"""The DOCX reader: WordprocessingML parts to the document model.

Entry point: ``reader.read_docx``.
"""
