"""Markdown: the reader (for ``/md/convert``) and the writer (the default export)."""
