"""Plan the processing of a folder or unpacked archive (pure: no file or network I/O).

The service lists the files (``render_pool.archives.list_files``), reads the documents' bytes and
decodes them with :func:`decode_text`, then calls :func:`plan_batch`. The plan says, for each
document (``.md``, ``.markdown``, ``.html``, ``.htm``), which of its local references resolve
to a file inside the root (to upload, or another document to link to) and which fail (missing,
or resolving outside the root: ``..`` past the top, a drive letter). The service then uploads
the assets, builds ``mapping`` (raw target -> URL), rewrites with ``render_pool.links`` and
reports ``asset_ok``/``asset_fail`` and ``mappings`` entries ``{"from": target, "to": url}``.

Resolution: relative to the document's folder; ``\\`` read as ``/``; a leading ``/`` is
relative to the root (site-root links); an exact path match first, else a unique
case-insensitive match (documents written on Windows or macOS).
"""

from __future__ import annotations

import codecs
import posixpath
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from render_pool.links import Reference, html_reference_list, markdown_references

DOCUMENT_KINDS = {".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html"}
OK, MISSING, OUTSIDE = "ok", "missing", "outside"


def document_kind(path: str) -> str | None:
    """``"markdown"`` or ``"html"`` for document files, else None. macOS junk
    (``__MACOSX/``, ``._name``) is never a document."""
    p = PurePosixPath(path)
    if "__MACOSX" in p.parts or p.name.startswith("._"):
        return None
    return DOCUMENT_KINDS.get(p.suffix.lower())


@dataclass(frozen=True)
class AssetRef:
    """One distinct local reference of a document.

    ``target``: raw text as written (the mapping key); ``file``: the file it resolves to,
    relative POSIX path inside the root (None when it failed); ``status``: ``ok``, ``missing``
    or ``outside``; ``document``: the file is itself a document of the batch.
    """

    target: str
    path: str
    file: str | None
    status: str
    image: bool = False
    document: bool = False


@dataclass
class DocumentPlan:
    """What to do with one document."""

    source: str
    kind: str
    refs: list[AssetRef] = field(default_factory=list)

    @property
    def resolved(self) -> list[AssetRef]:
        """References that resolve to a file inside the root."""
        return [r for r in self.refs if r.status == OK]

    @property
    def failed(self) -> list[AssetRef]:
        """References that are missing or leave the root (count them in ``asset_fail``)."""
        return [r for r in self.refs if r.status != OK]

    @property
    def asset_files(self) -> list[str]:
        """Distinct non-document files to upload for this document."""
        return list(dict.fromkeys(r.file for r in self.resolved if r.file and not r.document))


@dataclass
class BatchPlan:
    """The whole batch: documents in path order and the distinct assets they need."""

    root: str
    documents: list[DocumentPlan]
    assets: list[str]
    other_files: list[str]

    @property
    def count(self) -> int:
        """Number of documents (the ``count`` of the response)."""
        return len(self.documents)


class _Index:
    """Exact and case-insensitive lookup of the batch's files."""

    def __init__(self, files: Collection[str]) -> None:
        self.files = {f.replace("\\", "/").lstrip("/") for f in files}
        self.lower: dict[str, list[str]] = {}
        for f in self.files:
            self.lower.setdefault(f.lower(), []).append(f)

    def find(self, rel: str) -> str | None:
        if rel in self.files:
            return rel
        hits = self.lower.get(rel.lower(), [])
        return hits[0] if len(hits) == 1 else None


def resolve(source: str, path: str, files: Collection[str] | _Index) -> tuple[str | None, str]:
    """Resolve a decoded local ``path`` referenced from document ``source``.

    Returns ``(file, status)``: the relative POSIX path inside the root and ``ok``, or
    ``(None, "missing")`` / ``(None, "outside")`` (``..`` past the root, a drive letter,
    a NUL byte).
    """
    index = files if isinstance(files, _Index) else _Index(files)
    p = path.replace("\\", "/")
    if "\x00" in p or (len(p) >= 2 and p[1] == ":" and p[0].isalpha()):
        return None, OUTSIDE
    if p.startswith("/"):
        joined = p.lstrip("/")
    else:
        joined = posixpath.join(posixpath.dirname(source.replace("\\", "/")), p)
    rel = posixpath.normpath(joined) if joined else "."
    if rel == ".." or rel.startswith("../") or rel.startswith("/"):
        return None, OUTSIDE
    if rel == "." or p.endswith("/"):
        return None, MISSING
    found = index.find(rel)
    return (found, OK) if found else (None, MISSING)


def _references(kind: str, text: str) -> list[Reference]:
    return markdown_references(text) if kind == "markdown" else html_reference_list(text)


def plan_document(source: str, text: str, files: Collection[str] | _Index) -> DocumentPlan:
    """Plan one document: its distinct local references, each resolved (first one wins for
    a target written several times)."""
    kind = document_kind(source) or "markdown"
    index = files if isinstance(files, _Index) else _Index(files)
    plan = DocumentPlan(source, kind)
    seen: set[str] = set()
    for ref in _references(kind, text):
        if ref.target in seen or not ref.path:
            continue
        seen.add(ref.target)
        file, status = resolve(source, ref.path, index)
        plan.refs.append(AssetRef(ref.target, ref.path, file, status, ref.image,
                                  bool(file and document_kind(file))))
    return plan


def plan_batch(root: str, files: Collection[str], texts: Mapping[str, str]) -> BatchPlan:
    """Plan a batch: ``files`` are all relative POSIX paths under ``root``; ``texts`` holds the
    decoded text of each document (see :func:`documents`). No I/O happens here."""
    index = _Index(files)
    docs = [plan_document(src, texts.get(src, ""), index) for src in documents(files)]
    assets = sorted({f for d in docs for f in d.asset_files})
    doc_set = {d.source for d in docs}
    others = sorted(f for f in index.files if f not in doc_set)
    return BatchPlan(root, docs, assets, others)


def documents(files: Collection[str]) -> list[str]:
    """The document files among ``files``, sorted."""
    return sorted(f for f in files if document_kind(f))


def decode_text(data: bytes) -> str:
    """Decode a document's bytes: BOM first (UTF-8/16/32), then UTF-8, then GB18030 (common for
    Chinese Markdown saved on Windows), finally Latin-1 (never fails)."""
    for bom, codec in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                       (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
                       (codecs.BOM_UTF16_BE, "utf-16")):
        if data.startswith(bom):
            return data.decode(codec, "replace")
    for codec in ("utf-8", "gb18030"):
        try:
            return data.decode(codec)
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")


def mappings_entries(mapping: Mapping[str, str]) -> list[dict[str, str]]:
    """``mappings`` of a result entry: ``[{"from": original, "to": url}, ...]``."""
    return [{"from": k, "to": v} for k, v in mapping.items()]
