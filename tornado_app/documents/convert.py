"""``POST /api/convert``: an office document, PDF, EPUB, HTML or CSV (upload or remote
address) to Markdown, HTML, JSON or DocTags, parsed in the process pool."""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING, Any

from render_pool import jobs
from render_pool.writers.images import MODES as IMAGE_MODES
from tornado_app.documents.base import DocsError, UploadHandler, bool_field, choice_field
from tornado_app.documents.conversion import convert
from tornado_app.documents.fetch import fetch

if TYPE_CHECKING:
    from tornado_app.services import Services
    from tornado_app.settings import Settings

OCR_MODES = ("auto", "force", "off")  # scanned pages and images (render_pool.readers.pdf.ocr)


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


def check_convert_form(fields: dict[str, str], files: dict[str, tuple[str, bytes]]
                       ) -> tuple[str, str]:
    """(export, engine) of a ``/api/convert`` form; 40001/40002 when invalid."""
    upload = files.get("file")
    source_url = (fields.get("source_url") or "").strip()
    if bool(upload) == bool(source_url):
        raise DocsError(40001, "send exactly one of file or source_url")
    export = choice_field(fields, "export", list(jobs.EXPORTS), "markdown")
    engine = choice_field(fields, "engine", list(jobs.ENGINES), "word2markdown")
    choice_field(fields, "track_changes", ("accept", "all"), "accept")
    images_field(fields)
    choice_field(fields, "ocr", OCR_MODES, "auto")
    bool_field(fields, "include_furniture")
    bool_field(fields, "notes", True)
    return export, engine


def conversion_options(fields: dict[str, str], settings: Settings) -> dict[str, Any]:
    """The reader and writer options of a ``/api/convert`` form under ``settings``: one
    place, so the service and ``python -m tornado_app convert`` read documents alike."""
    options = {
        "include_furniture": bool_field(fields, "include_furniture"),
        "track_changes": choice_field(fields, "track_changes", ("accept", "all"), "accept"),
        "notes": bool_field(fields, "notes", True),  # slide speaker notes
        "max_cells": settings.sheet_max_cells,
        # below the job's own limit, so LibreOffice is stopped before the worker is
        "office_timeout": min(settings.office_timeout_seconds,
                              max(1.0, settings.job_timeout_seconds - 5)),
        "ocr": choice_field(fields, "ocr", OCR_MODES, "auto"),
        "ocr_languages": settings.ocr_languages,
    }
    if images_field(fields):
        options["images"] = images_field(fields)
    return options


async def convert_form(svc: Services, company_id: str, fields: dict[str, str],
                       files: dict[str, tuple[str, bytes]], *, save: bool,
                       result_token: str | None = None) -> dict[str, Any]:
    """Convert a ``/api/convert`` form (the remote file fetched first); the answer's data.
    Shared by the request and its async job."""
    export, engine = check_convert_form(fields, files)
    options = conversion_options(fields, svc.settings)
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
        export, _ = check_convert_form(fields, files)
        save = bool_field(fields, "save")
        self.conversion = ("document", export)
        if bool_field(fields, "async"):
            from tornado_app.documents.async_requests import enqueue_form

            await enqueue_form(self, "convert", fields, files)
            return
        self.success(await convert_form(self.services, self.company_id, fields, files,
                                        save=save))
