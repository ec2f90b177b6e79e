"""JSON: the writer (the document model as versioned JSON; schema beside it)."""
