"""``POST /api/convert``: an office document, PDF, EPUB, HTML or CSV (upload or remote
address) to Markdown, HTML, JSON, DocTags or chunks, parsed in the process pool. Every field
is checked here, before any work (an unknown one is 40001); ``pages`` past the end of the PDF
is found in the pool (40001 too)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from render_pool.engine import jobs
from render_pool.engine.chunks.writer import check_options as check_chunk_options
from render_pool.engine.common.images import MODES as IMAGE_MODES
from render_pool.engine.formats import ReadRequest
from render_pool.engine.options import WriterOptions
from render_pool.engine.page_ranges import PageRanges, parse_pages
from render_pool.errors import InvalidOption
from tornado_app.documents.base import DocsError, UploadHandler, bool_field, choice_field
from tornado_app.documents.conversion import convert
from tornado_app.documents.fetch import fetch

if TYPE_CHECKING:
    from tornado_app.services import Services
    from tornado_app.settings import Settings

OCR_MODES = ("auto", "force", "off")  # scanned pages and images (render_pool.engine.pdf.ocr)
# every field /api/convert reads (form or query string): another name is 40001, so a typo
# (``page=`` for ``pages=``) is never silently ignored
CONVERT_FIELDS = frozenset({
    "file", "source_url", "export", "engine", "save", "filename", "async", "callback_url",
    "include_furniture", "track_changes", "images", "notes", "ocr", "pages", "page_markers",
    "chunk_tokens", "chunk_overlap", "chunk_merge", "chunk_tokenizer"})
CHUNK_FIELDS = ("chunk_tokens", "chunk_overlap", "chunk_merge", "chunk_tokenizer")
PAGE_MARKER_EXPORTS = ("markdown", "html")


def safe_basename(name: str, default: str) -> str:
    """A file base name safe in object keys and headers: no path, no control characters."""
    name = unicodedata.normalize("NFC", name or "").replace("\\", "/").rsplit("/", 1)[-1]
    name = re.sub(r"[\x00-\x1f\x7f\"<>|*?:]", "", name).strip(" .")
    return name[:120] or default


async def fetch_remote(svc: Services, url: str) -> bytes:
    """Bytes at ``url`` under the SSRF guard and the upload size limit."""
    st = svc.settings
    fetched = await fetch(url, allow_private=st.allow_private_urls,
                          max_bytes=st.max_upload_bytes, timeout=st.fetch_timeout_seconds)
    return fetched.data


def images_field(fields: dict[str, str]) -> str:
    """The ``images`` field (embed, placeholder, omit), or "" for the export's default;
    40002 for another value."""
    if not (fields.get("images") or "").strip():
        return ""
    return choice_field(fields, "images", IMAGE_MODES, "")


CheckedForm = tuple[str, str, jobs.ConvertOptions]  # (export, engine, options) of a form


def checked_form(fields: dict[str, str], files: dict[str, tuple[str, bytes]]) -> CheckedForm:
    """(export, engine, options) of a ``/api/convert`` form, every field checked once;
    40001/40002 when invalid. Why one call: the request checked its form, then converted it
    with :func:`convert_form`, which checked it again and built the options a third time."""
    upload = files.get("file")
    source_url = (fields.get("source_url") or "").strip()
    if bool(upload) == bool(source_url):
        raise DocsError(40001, "send exactly one of file or source_url")
    unknown = sorted((set(fields) | set(files)) - CONVERT_FIELDS)
    if unknown:
        raise DocsError(40001, f"unknown field(s) {', '.join(unknown)[:200]}; /api/convert "
                               f"reads {', '.join(sorted(CONVERT_FIELDS))}")
    export = choice_field(fields, "export", list(jobs.EXPORTS), "markdown")
    engine = choice_field(fields, "engine", list(jobs.ENGINES), "word2markdown")
    return export, engine, form_options(fields)


def check_convert_form(fields: dict[str, str], files: dict[str, tuple[str, bytes]]
                       ) -> tuple[str, str]:
    """(export, engine) of a ``/api/convert`` form; 40001/40002 when invalid."""
    export, engine, _ = checked_form(fields, files)
    return export, engine


def pages_field(fields: dict[str, str]) -> PageRanges | None:
    """The ``pages`` ranges (``1-3,7``), or None to read every page; 40001 for bad syntax,
    a page 0 or a reversed range (a page past the end is found when the PDF is read)."""
    spec = fields.get("pages")
    if spec is None or not spec.strip():
        return None
    try:
        return parse_pages(spec)
    except InvalidOption as exc:
        raise DocsError(40001, exc.message) from exc


def _int_field(fields: dict[str, str], name: str, default: int) -> int:
    raw = (fields.get(name) or "").strip()
    if not raw:
        return default
    if not raw.isdigit() or len(raw) > 9:
        raise DocsError(40001, f"{name} must be a whole number")
    return int(raw)


def writer_fields(fields: dict[str, str], export: str) -> dict[str, Any]:
    """The writer options of a form (``page_markers``, ``chunk_*``), checked against the
    export they apply to (40001 for one asked of another export, or out of range)."""
    out: dict[str, Any] = {}
    if fields.get("page_markers") is not None:
        if export not in PAGE_MARKER_EXPORTS:
            raise DocsError(40001, "page_markers applies to export=markdown and "
                                   "export=html only")
        out["page_markers"] = bool_field(fields, "page_markers")
    given = [name for name in CHUNK_FIELDS if fields.get(name) is not None]
    if given and export != "chunks":
        raise DocsError(40001, f"{', '.join(given)} applies to export=chunks only")
    if export == "chunks":
        out["chunk_tokens"] = _int_field(fields, "chunk_tokens", 512)
        out["chunk_overlap"] = _int_field(fields, "chunk_overlap", 0)
        out["chunk_merge"] = bool_field(fields, "chunk_merge", True)
        out["chunk_tokenizer"] = (fields.get("chunk_tokenizer") or "words").strip()
        try:
            check_chunk_options(WriterOptions(**out))
        except InvalidOption as exc:
            raise DocsError(40001, exc.message) from exc
    return out


def form_options(fields: dict[str, str]) -> jobs.ConvertOptions:
    """The reader and writer options a ``/api/convert`` form asks for, typed and checked in
    one place (40001 for a bad value or a writer option of another export, 40002 for a bad
    choice). ``pages`` given for an input whose reader does not take it is 40001 in the pool,
    once the input's kind is sniffed (``render_pool.engine.registry.read``)."""
    export = choice_field(fields, "export", list(jobs.EXPORTS), "markdown")
    # checked in this order (the first bad field answers)
    track_changes = choice_field(fields, "track_changes", ("accept", "all"), "accept")
    images = images_field(fields)
    ocr = choice_field(fields, "ocr", OCR_MODES, "auto")
    include_furniture = bool_field(fields, "include_furniture")
    notes = bool_field(fields, "notes", True)  # slide speaker notes
    writer = WriterOptions(**writer_fields(fields, export))
    read = ReadRequest(include_furniture=include_furniture, track_changes=track_changes,
                       notes=notes, ocr=ocr, pages=pages_field(fields))  # pages: PDF, images
    return jobs.ConvertOptions(read=read, write=writer, images=images)


def conversion_options(fields: dict[str, str], settings: Settings) -> jobs.ConvertOptions:
    """:func:`form_options` with the service's reader limits of ``settings``: one place, so
    the service and ``python -m tornado_app convert`` read documents alike."""
    return with_service_limits(form_options(fields), settings)


def with_service_limits(options: jobs.ConvertOptions, settings: Settings
                        ) -> jobs.ConvertOptions:
    """``options`` with the service's reader limits of ``settings``. They ask too for a
    scan's pages to be recognised in pool jobs of their own (``ocr_fanout``), as
    :func:`~tornado_app.documents.conversion.read_and_write`, where every conversion with
    these options goes, asks: so it need not copy them again (the reader's options were
    copied twice a request, each a ``dataclasses.replace`` of ten fields)."""
    read = replace(
        options.read, max_cells=settings.sheet_max_cells,
        # below the job's own limit, so LibreOffice is stopped before the worker is
        office_timeout=min(settings.office_timeout_seconds,
                           max(1.0, settings.job_timeout_seconds - 5)),
        ocr_languages=settings.ocr_languages, ocr_fanout=True)
    return replace(options, read=read)


async def convert_form(svc: Services, company_id: str, fields: dict[str, str],
                       files: dict[str, tuple[str, bytes]], *, save: bool,
                       result_token: str | None = None) -> dict[str, Any]:
    """Convert a ``/api/convert`` form (the remote file fetched first); the answer's data.
    Shared by the request and its async job."""
    return await convert_checked(svc, company_id, fields, files, checked_form(fields, files),
                                 save=save, result_token=result_token)


async def convert_checked(svc: Services, company_id: str, fields: dict[str, str],
                          files: dict[str, tuple[str, bytes]], checked: CheckedForm, *,
                          save: bool, result_token: str | None = None) -> dict[str, Any]:
    """:func:`convert_form` of a form :func:`checked_form` has checked already."""
    export, engine, form = checked
    options = with_service_limits(form, svc.settings)
    upload = files.get("file")
    if upload:
        original, data = upload
    else:
        source_url = (fields.get("source_url") or "").strip()
        data = await fetch_remote(svc, source_url)
        original = source_url.rsplit("/", 1)[-1].split("?", 1)[0]
    stem = safe_basename(fields.get("filename") or original.rsplit(".", 1)[0], "document")
    return await convert(svc, company_id, data, export=export, engine=engine, save=save,
                         filename=stem, options=options, result_token=result_token)


class ConvertHandler(UploadHandler):
    async def post(self) -> None:
        fields, files = await self.form()
        checked = checked_form(fields, files)
        save = bool_field(fields, "save")
        self.conversion = ("document", checked[0])
        if bool_field(fields, "async"):
            from tornado_app.documents.async_requests import enqueue_form

            await enqueue_form(self, "convert", fields, files)
            return
        self.success(await convert_checked(self.services, self.company_id, fields, files,
                                           checked, save=save))
