"""XLSX: the reader (sheets, shared strings, cached values and formulas)."""
