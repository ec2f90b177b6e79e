"""LangChain's splitters on our own Markdown: the baseline of ``just bench chunks``.

Run with the peer venv's Python (``bench/.peers/langchain``, installed by
:func:`bench.chunks.ensure_langchain`)::

    bench/.peers/langchain/bin/python -I bench/chunk_peer.py MANIFEST.json OUT.json

The manifest holds Markdown texts, the budget and the path of our token counter
(``render_pool/engine/chunks/tokens.py``, loaded alone: it needs only the standard library), so both
splitters count tokens alike. ``MarkdownHeaderTextSplitter`` (headings kept in the text) cuts
at headings, then ``RecursiveCharacterTextSplitter`` cuts each piece to the budget, as
LangChain's documentation pairs them. Each document is timed inside this process.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time


def main(manifest_path: str, out_path: str) -> int:
    from langchain_text_splitters import (
        MarkdownHeaderTextSplitter,
        RecursiveCharacterTextSplitter,
    )

    manifest = json.loads(open(manifest_path, encoding="utf-8").read())
    spec = importlib.util.spec_from_file_location("tokens", manifest["tokens_module"])
    assert spec is not None and spec.loader is not None
    tokens = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tokens)
    count = tokens.count_words
    headers = [("#" * n, f"h{n}") for n in range(1, 7)]
    out = {}
    for name, markdown in manifest["docs"].items():
        start = time.perf_counter()
        by_heading = MarkdownHeaderTextSplitter(headers, strip_headers=False)
        pieces = RecursiveCharacterTextSplitter(
            chunk_size=manifest["budget"], chunk_overlap=0, length_function=count)
        chunks = [d.page_content for d in pieces.split_documents(
            by_heading.split_text(markdown))]
        out[name] = {"chunks": chunks, "seconds": time.perf_counter() - start}
    with open(out_path, "w", encoding="utf-8") as fh:
        json.dump(out, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
