"""Chunks for retrieval (``export=chunks``): the writer, its units, tables and token counting."""
