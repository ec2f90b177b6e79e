"""DocTags: the writer (docling's tagged text with location tokens)."""
