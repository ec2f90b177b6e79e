"""EPUB: the reader (spine items through the HTML builder)."""
