"""Pool jobs of a folder or archive batch: every pass over uploaded content runs here.

Why: planning, rewriting, data-URI extraction and HTML to Markdown read whole documents;
on the service's event loop a hostile document stalled every other caller. The service
(``tornado_app.documents.batches``) only uploads files and keeps the books: it hands these jobs
paths under the unpacked root and a scratch folder, and gets back plans, small results and
paths of files to upload (inline images, rewritten stylesheets, final documents), so no
document or asset is held whole in the service's memory either.

The jobs read files under ``root`` only through :func:`render_pool.batch.archives.open_inside`
(never through a link, never outside the root) and write only into ``out_dir``.
"""

from __future__ import annotations

import json
import os
import posixpath
import tempfile
from dataclasses import dataclass, field
from typing import Any

from render_pool.batch import archives, links
from render_pool.batch import plan as batch
from render_pool.engine import registry
from render_pool.engine.options import WriterOptions
from render_pool.errors import ConversionError


@dataclass
class TreePlan:
    """What :func:`plan_tree` found: the files of the batch (documents that could not be
    read left out), the documents' plans in path order, and the assets to upload (not in
    the link map), stylesheets last."""

    files: list[str]
    documents: list[batch.DocumentPlan]
    assets: list[str]


@dataclass
class Lookups:
    """What the service knows so far, by file (or raw target, for the link map): the URL
    an uploaded asset or a document will have, why an asset failed, and the failures of
    uploaded stylesheets (reported with the documents that use them)."""

    linkmap: dict[str, str] = field(default_factory=dict)
    doc_links: dict[str, str] = field(default_factory=dict)
    asset_links: dict[str, str] = field(default_factory=dict)
    asset_errors: dict[str, str] = field(default_factory=dict)
    css_failed: dict[str, list[dict[str, str]]] = field(default_factory=dict)


@dataclass
class InlineImage:
    """A ``data:`` image of a document, decoded into ``path`` for the service to upload."""

    uri: str
    path: str
    name: str


@dataclass
class DocumentResult:
    """A processed document: the final Markdown/HTML in ``path`` and the entry's figures."""

    path: str
    asset_ok: int
    failed: list[dict[str, str]]
    mapping: dict[str, str]


def _text(root: str, rel: str) -> str:
    with archives.open_inside(root, rel) as fh:
        return batch.decode_text(fh.read())


def _scratch(out_dir: str, suffix: str) -> str:
    fd, path = tempfile.mkstemp(dir=out_dir, suffix=suffix)
    os.close(fd)
    return path


def plan_tree(root: str, linkmap: dict[str, str]) -> TreePlan:
    """List and plan the batch under ``root``; documents unreadable now are left out."""
    files = archives.list_files(root)
    texts: dict[str, str] = {}
    for source in batch.documents(files):
        try:
            texts[source] = _text(root, source)
        except OSError:
            continue
    files = [f for f in files if f in texts or not batch.document_kind(f)]
    plan = batch.plan_batch(root, files, texts)
    wanted = sorted({r.file for d in plan.documents for r in d.resolved
                     if r.file and not r.document and r.target not in linkmap
                     and r.file not in linkmap})
    wanted.sort(key=lambda f: f.lower().endswith(".css"))  # stable: stylesheets last
    return TreePlan(files, plan.documents, wanted)


def mapping_for(plan: batch.DocumentPlan, known: Lookups
                ) -> tuple[dict[str, str], int, list[dict[str, str]]]:
    """``(mapping, ok, failed)`` of a plan: raw target -> URL for each reference the link
    map, a document or an uploaded asset answers; the others as failures with a reason."""
    mapping: dict[str, str] = {}
    failed: list[dict[str, str]] = []
    ok = 0
    for ref in plan.refs:
        if ref.target in known.linkmap or (ref.file and ref.file in known.linkmap):
            mapping[ref.target] = known.linkmap.get(ref.target) or known.linkmap[ref.file or ""]
            ok += 1
        elif ref.status == batch.OK and ref.document and ref.file in known.doc_links:
            mapping[ref.target] = ref.link(known.doc_links[ref.file])
        elif ref.status == batch.OK and ref.file in known.asset_links:
            mapping[ref.target] = ref.link(known.asset_links[ref.file])
            ok += 1
            failed += [{"ref": f"{ref.target}: {x['ref']}", "reason": x["reason"]}
                       for x in known.css_failed.get(ref.file or "", [])]
        else:
            reason = known.asset_errors.get(ref.file or "", ref.status)
            failed.append({"ref": ref.target, "reason": reason})
    return mapping, ok, failed


def plan_stylesheet(root: str, rel: str, files: list[str]) -> batch.DocumentPlan:
    """The ``url()``/``@import`` references of a CSS file (raises OSError when unreadable)."""
    return batch.plan_document(rel, _text(root, rel), files, kind="css")


def rewrite_stylesheet(root: str, rel: str, plan: batch.DocumentPlan, known: Lookups,
                       out_dir: str) -> tuple[str, list[dict[str, str]]]:
    """The CSS file rewritten into a scratch file (its path) and its failed references."""
    mapping, _, failed = mapping_for(plan, known)
    path = _scratch(out_dir, ".css")
    with open(path, "w", encoding="utf-8") as out:
        out.write(links.rewrite_css(_text(root, rel), mapping))
    return path, failed


def inline_images(root: str, source: str, kind: str, out_dir: str) -> list[InlineImage]:
    """The document's ``data:image`` URIs (Markdown, or HTML), each decoded into a scratch
    file once."""
    found = links.data_uri_images(_text(root, source), markdown=kind == "markdown")
    out = []
    for uri, data, mime in found:
        path = _scratch(out_dir, "")
        with open(path, "wb") as fh:
            fh.write(data)
        out.append(InlineImage(uri, path, f"inline.{mime.split('/', 1)[-1].split('+', 1)[0]}"))
    return out


def html_to_markdown(html: str) -> str:
    """A batch's HTML page as the Markdown ``/convert`` answers for the same page uploaded:
    the reader of uploaded HTML (link allow-list, spanned cells, where each block was read,
    40003 past its depth limit), then the Markdown writer."""
    return registry.write_text("markdown", registry.read(html.encode("utf-8"), kind="html"))


def final_name(source: str) -> str:
    """Stored name of a processed document: HTML becomes Markdown."""
    stem, ext = posixpath.splitext(source)
    return f"{stem}.md" if ext.lower() in (".html", ".htm") else source


def chunks_name(source: str) -> str:
    """Stored name of a document's chunks, beside its Markdown: ``docs/guide.md`` (or
    ``docs/guide.html``) -> ``docs/guide.chunks.json``."""
    return f"{posixpath.splitext(final_name(source))[0]}.chunks.json"


@dataclass
class ChunksResult:
    """A document's chunks (``export=chunks``'s JSON array) in the scratch file ``path``,
    how many there are and the chunks writer's warnings; or ``error`` (``path`` empty) when
    the final Markdown could not be read back (40003 past the reader's nesting limit)."""

    path: str
    count: int
    warnings: list[str]
    error: str = ""


def chunk_final(path: str, options: dict[str, Any], out_dir: str) -> ChunksResult:
    """The chunks of a final Markdown document (a scratch file of :func:`finish_document`):
    the same path as ``/api/convert?export=chunks`` of that Markdown, the Markdown reader
    into the document model, then the chunks writer. ``options`` are the ``chunk_*`` writer
    options, already checked by the service."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    try:
        doc = registry.read(text.encode("utf-8"), kind="markdown")
        content = registry.write_text("chunks", doc, options=WriterOptions(**options))
    except ConversionError as exc:
        return ChunksResult("", 0, [], exc.message)
    out = _scratch(out_dir, ".json")
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(content)
    return ChunksResult(out, len(json.loads(content)), list(doc.warnings))


def finish_document(root: str, plan: batch.DocumentPlan, known: Lookups,
                    inline: dict[str, str], files: list[str], out_dir: str) -> DocumentResult:
    """Rewrite one document with what the service uploaded (``inline``: data URI -> URL):
    Markdown is rewritten in place; HTML is rewritten, turned into Markdown and the links
    left in that Markdown rewritten again. The result goes to a scratch file."""
    text = _text(root, plan.source)
    mapping, ok, failed = mapping_for(plan, known)
    mapping.update(inline)
    ok += len(inline)
    if plan.kind == "markdown":
        final = links.rewrite_markdown(text, mapping)
    else:
        markdown = html_to_markdown(links.rewrite_html(text, mapping))
        again = batch.plan_document(final_name(plan.source), markdown, files)
        second, ok2, failed2 = mapping_for(again, known)
        final = links.rewrite_markdown(markdown, second)
        mapping.update(second)
        ok += ok2
        seen = {x["ref"] for x in failed}
        failed += [f for f in failed2 if f["ref"] not in seen]
    path = _scratch(out_dir, ".md")
    with open(path, "w", encoding="utf-8") as out:
        out.write(final)
    shown = {k: v for k, v in mapping.items() if not k.startswith("data:")}
    return DocumentResult(path, ok, failed, shown)


def entry_fields(result: DocumentResult) -> dict[str, Any]:
    """The figures of a result entry (the service adds the source and the links)."""
    return {"asset_ok": result.asset_ok, "asset_fail": len(result.failed),
            "mappings": batch.mappings_entries(result.mapping), "failed": result.failed}
