"""The ``chunks`` option of a batch (``/api/upload-archive``, ``/api/archive/process``,
``/md/convert-folder``): a ``<name>.chunks.json`` beside each Markdown document it stores.

Fields: ``chunks`` (true/false, default false) and, with it, ``chunk_tokens``,
``chunk_overlap``, ``chunk_merge`` and ``chunk_tokenizer``, read and checked exactly as
``/api/convert?export=chunks`` reads them (:func:`tornado_app.documents.convert.writer_fields`).
Why strict: a misspelled option (``chunk_token=256``, ``chunk=true``) silently ignored would
store chunks of the wrong size, or none, for a whole folder; so any field whose name starts
with ``chunk`` and is not one of these, and a ``chunk_*`` field without ``chunks=true``, is
40001 before any work.
"""

from __future__ import annotations

from typing import Any

from tornado_app.documents.base import DocsError, bool_field
from tornado_app.documents.convert import CHUNK_FIELDS, writer_fields

__all__ = ["BATCH_CHUNK_FIELDS", "chunk_options"]

BATCH_CHUNK_FIELDS = ("chunks", *CHUNK_FIELDS)


def chunk_options(fields: dict[str, str]) -> dict[str, Any] | None:
    """The chunks writer's options a batch form asks for (JSON-ready: they travel in a
    job's input), or None when it asks for no chunks; 40001 for an unknown ``chunk*`` field,
    a ``chunk_*`` field without ``chunks=true``, or a value ``/api/convert`` refuses."""
    unknown = sorted(name for name in fields
                     if name.lower().startswith("chunk") and name not in BATCH_CHUNK_FIELDS)
    if unknown:
        raise DocsError(40001, f"unknown field(s) {', '.join(unknown)[:200]}; the chunks of a "
                               f"batch read {', '.join(BATCH_CHUNK_FIELDS)}")
    if not bool_field(fields, "chunks"):
        given = [name for name in CHUNK_FIELDS if fields.get(name) is not None]
        if given:
            raise DocsError(40001, f"{', '.join(given)} applies to chunks=true only")
        return None
    return writer_fields(fields, "chunks")
