"""CSV: the reader (a table from delimited text)."""
