"""Builders shared by more than one format: inline trees, OOXML charts, safe zip and XML
access, text decoding, image links and the helpers every writer uses.

A format package may import this one; nothing here imports a format package."""
