"""Plan the processing of a folder or unpacked archive (pure: no file or network I/O).

The service lists the files (``render_pool.batch.archives.list_files``), reads the documents'
bytes and decodes them with :func:`decode_text`, then calls :func:`plan_batch`. The plan says,
for each document (``.md``, ``.markdown``, ``.html``, ``.htm``), which of its local references
resolve to a file inside the root (to upload, or another document to link to) and which fail
(missing, or resolving outside the root: ``..`` past the top, a drive letter). The service then
uploads the assets, builds ``mapping`` (raw target -> URL), rewrites with
``render_pool.batch.links`` and reports ``asset_ok``/``asset_fail`` and ``mappings`` entries
``{"from": target, "to": url}``.

Resolution: relative to the document's folder; ``\\`` read as ``/``; a leading ``/`` is
relative to the root (site-root links); an exact path match first, else a unique
case-insensitive match (documents written on Windows or macOS).

A reference may have several readings (:func:`readings`): percent-decoded or raw (a file
named ``100%.png``), split at ``?``/``#`` or whole (a file named ``a#1.png``), Markdown
backslash escapes undone or kept (``images\\_x.png`` written on Windows), and Typora's
destinations with raw spaces (``![](a b (1).png)``, an optional reading at the same
position as the CommonMark one). The first reading that names an existing file wins; when
none does, the reference is reported as written and left untouched.

Obsidian wiki-links and embeds (``[[note]]``, ``![[a.png|300]]``) resolve as Obsidian
does (:func:`resolve_wiki`): the path relative to the note, then to the vault root, then
the unique file whose path ends with it (by name anywhere in the vault), ``.md`` implied.
CSS files are planned like documents (``kind="css"``) so their ``url()`` assets can be
uploaded and the CSS rewritten before it is stored.
"""

from __future__ import annotations

import html as html_lib
import posixpath
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import PurePosixPath
from urllib.parse import unquote

from render_pool.batch.links import (
    Reference,
    css_references,
    html_reference_list,
    markdown_references,
    split_target,
)
from render_pool.engine.common.text_decode import BOMS

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
    suffix: str = ""

    def link(self, url: str) -> str:
        """``url`` with the reference's ``?query``/``#fragment`` kept (the query only when
        ``url`` has none: a presigned URL's signature covers its query)."""
        if not self.suffix:
            return url
        query, _, fragment = self.suffix.partition("#")
        if query and "?" not in url:
            url += query
        if fragment and "#" not in url:
            url += "#" + fragment
        return url


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


_SUFFIX_DEPTH = 8  # path components indexed from the end of each file (wiki lookups)


class _Index:
    """Exact and case-insensitive lookup of the batch's files."""

    def __init__(self, files: Collection[str]) -> None:
        self.files = {f.replace("\\", "/").lstrip("/") for f in files}
        self.lower: dict[str, list[str]] = {}
        self.names: dict[str, list[str]] = {}
        for f in sorted(self.files):
            self.lower.setdefault(f.lower(), []).append(f)
            self.names.setdefault(posixpath.basename(f).lower(), []).append(f)
        self._suffixes: dict[str, list[str]] | None = None
        self._ending: dict[str, str | None] = {}

    def _by_suffix(self, rel: str) -> list[str]:
        """Files whose path ends with ``rel`` at a ``/`` (any case). Why an index: a scan
        of every file of that name per wiki link made 2,000 links among 3,000 ``a.md``
        take 9 s; the last components of each path are indexed once instead."""
        low = rel.lower()
        if low.count("/") >= _SUFFIX_DEPTH:  # deeper than indexed: scan the name's files
            return [f for f in self.names.get(posixpath.basename(low), [])
                    if f.lower() == low or f.lower().endswith("/" + low)]
        if self._suffixes is None:
            self._suffixes = {}
            for f in sorted(self.files):
                parts = f.lower().split("/")
                for k in range(max(0, len(parts) - _SUFFIX_DEPTH), len(parts)):
                    self._suffixes.setdefault("/".join(parts[k:]), []).append(f)
        return self._suffixes.get(low, [])

    def ending_with(self, rel: str) -> str | None:
        """The unique file whose path ends with ``rel`` (exact case first, then any case)."""
        if rel not in self._ending:
            self._ending[rel] = self._ending_with(rel)
        return self._ending[rel]

    def _ending_with(self, rel: str) -> str | None:
        hits = self._by_suffix(rel)
        exact = [f for f in hits if f == rel or f.endswith("/" + rel)]
        for group in (exact, hits):
            if len(group) == 1:
                return group[0]
        return None

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


def resolve_wiki(source: str, path: str, files: Collection[str] | _Index
                 ) -> tuple[str | None, str]:
    """Resolve an Obsidian link target (``note``, ``folder/a.png``): relative to the note,
    then to the vault root, then the unique file whose path ends with it; each first as
    written, then with ``.md`` (notes)."""
    index = files if isinstance(files, _Index) else _Index(files)
    p = path.replace("\\", "/").strip()
    candidates = [p] if p.lower().endswith(".md") else [p, p + ".md"]
    status = MISSING
    for cand in candidates:
        for ref in (cand, "/" + cand.lstrip("/")):
            found, status = resolve(source, ref, index)
            if found:
                return found, OK
            if status == OUTSIDE:
                return None, OUTSIDE
    for cand in candidates:
        found = index.ending_with(posixpath.normpath(cand.lstrip("/")))
        if found and not cand.startswith("../"):
            return found, OK
    return None, status


def readings(ref: Reference) -> list[tuple[str, str]]:
    """The decoded paths a reference may mean, most likely first: ``(path, suffix)`` where
    ``suffix`` is the ``?query#fragment`` split off by that reading."""
    value = html_lib.unescape(ref.target) if ref.kind == "html" else ref.target
    out = [(ref.path, ref.query + ref.fragment)]
    unescaped = re.sub(r"\\([!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])", r"\1", value)
    for text in (unescaped, value) if ref.kind != "html" else (value,):
        raw_path, query, fragment = split_target(text)
        out += [(unquote(raw_path), query + fragment), (raw_path, query + fragment),
                (unquote(text), ""), (text, "")]
    return [r for r in dict.fromkeys(out) if r[0]]


def _resolve_ref(source: str, ref: Reference, index: _Index
                 ) -> tuple[str | None, str, str, str]:
    """``(file, status, path, suffix)`` of the first reading that names a file."""
    if ref.kind == "wiki":
        return (*resolve_wiki(source, ref.path, index), ref.path, "")
    first: tuple[str | None, str, str, str] | None = None
    for path, suffix in readings(ref):
        file, status = resolve(source, path, index)
        if file:
            return file, status, path, suffix
        first = first or (None, status, path, suffix)
    return first or (None, MISSING, ref.path, "")


def _references(kind: str, text: str) -> list[Reference]:
    if kind == "css":
        return css_references(text)
    if kind == "markdown":
        return markdown_references(text, include_optional=True)
    return html_reference_list(text)


def plan_document(source: str, text: str, files: Collection[str] | _Index,
                  kind: str | None = None) -> DocumentPlan:
    """Plan one document (or CSS file, ``kind="css"``): its distinct local references, each
    resolved (first one wins for a target written several times). Of the readings found at
    one position (Typora's and CommonMark's), the first that names a file is kept; when none
    does, the CommonMark one (else the shortest Typora one) is reported as failed."""
    kind = kind or document_kind(source) or ("css" if source.lower().endswith(".css")
                                             else "markdown")
    index = files if isinstance(files, _Index) else _Index(files)
    plan = DocumentPlan(source, kind)
    seen: set[str] = set()
    for _, group in groupby(_references(kind, text), key=lambda r: r.start):
        candidates = [r for r in group if r.path]
        chosen: tuple[Reference, str | None, str, str, str] | None = None
        for ref in candidates:
            file, status, path, suffix = _resolve_ref(source, ref, index)
            if file:
                chosen = ref, file, status, path, suffix
                break
        if chosen is None:
            # a front matter value that names no file is no reference (a title, a date)
            strict = [r for r in candidates if not r.optional] or [
                r for r in candidates[-1:] if r.kind != "frontmatter"]
            if not strict:
                continue
            chosen = (strict[0], *_resolve_ref(source, strict[0], index))
        ref, file, status, path, suffix = chosen
        if ref.target in seen:
            continue
        seen.add(ref.target)
        plan.refs.append(AssetRef(ref.target, path, file, status, ref.image,
                                  bool(file and document_kind(file)), suffix))
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
    for bom, codec in BOMS:
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
