"""PDF: the reader (text layer, layout, tables, tagged structure and OCR to the model;
``reader.read_pdf``) and the writer (HTML printed by headless Chromium; ``writer.write_pdf_file``,
its parts in the ``writer_*`` modules and the print ``themes``).
"""
