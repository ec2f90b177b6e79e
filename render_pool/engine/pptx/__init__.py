"""PPTX: the reader (slides, notes, tables and charts)."""
