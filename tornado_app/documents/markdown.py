"""``POST /md/convert``: Markdown (file, text or remote address) to PDF or DOCX, and
``GET /md/themes``. Remote images, cover and logo are fetched here, under the SSRF guard,
so the printing browser never touches the network. They are streamed into files of a
temporary folder of this request (removed when it ends) and handed to the pool by path:
this process never holds a whole image, and the images of one document together are
bounded by ``MARKDOWN_IMAGES_MAX_MB`` (the rest are left out with a warning)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import tempfile
import urllib.parse
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, cast

from render_pool.engine import jobs
from render_pool.engine.asset_files import AssetFile, render_markdown_files
from render_pool.engine.common.cover import CoverPage
from render_pool.engine.markdown.limits import MarkdownLimits
from render_pool.engine.pdf.themes import list_themes
from store.stored_content import attachment
from tornado_app.documents.base import (
    DocsError,
    DocsHandler,
    UploadHandler,
    bool_field,
    choice_field,
)
from tornado_app.documents.conversion import pool_of, save_rendered
from tornado_app.documents.convert import safe_basename
from tornado_app.documents.fetch import FetchFailed, FetchRefused, fetch, fetch_to_file
from tornado_app.services import Services
from tornado_app.settings import Settings

if TYPE_CHECKING:
    from render_pool.engine.model import Resource


def sniff_image(data: bytes) -> str | None:
    """The MIME type of an image from its first bytes, or None when it is not one."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:2] == b"BM":
        return "image/bmp"
    head = data[:512].lstrip().lower()
    if head.startswith(b"<svg") or (head.startswith(b"<?xml") and b"<svg" in head):
        return "image/svg+xml"
    return None


def _make_asset_folder(base: Path) -> Path:
    with contextlib.suppress(OSError):
        base.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="md-assets-", dir=base if base.is_dir() else None))


@contextlib.asynccontextmanager
async def asset_folder(svc: Services) -> AsyncIterator[Path]:
    """A temporary folder for one request's fetched assets under ``DATA_DIR/tmp`` (on disk,
    where /tmp may be memory), removed with everything in it when the block ends; made and
    removed in a worker thread (up to ``MARKDOWN_IMAGES_MAX_MB`` of files), never on the
    event loop (a docs-only service may have no storage threads)."""
    folder = await asyncio.to_thread(_make_asset_folder, svc.settings.data_dir / "tmp")
    try:
        yield folder
    finally:
        await asyncio.to_thread(shutil.rmtree, folder, True)


def _new_file(folder: Path) -> str:
    fd, path = tempfile.mkstemp(dir=folder)
    os.close(fd)
    return path


def _write_new_file(folder: Path, data: bytes) -> str:
    """A new file of ``folder`` holding ``data`` (run in a worker thread)."""
    path = _new_file(folder)
    Path(path).write_bytes(data)
    return path


async def fetch_image(svc: Services, url: str, folder: Path, max_bytes: int | None = None
                      ) -> AssetFile:
    """The image at ``url`` streamed into a file of ``folder`` (guarded, capped at
    ``max_bytes`` and ``MARKDOWN_IMAGE_MAX_BYTES``); raises FetchRefused/FetchFailed.
    The 15 s cap keeps one slow image host from holding the whole document."""
    st = svc.settings
    image_max = st.markdown_image_max_bytes
    path = _new_file(folder)
    got = await fetch_to_file(url, path, allow_private=st.allow_private_urls,
                              max_bytes=min(st.fetch_max_bytes, image_max, max_bytes or image_max),
                              timeout=min(st.fetch_timeout_seconds, 15))
    mime = sniff_image(got.head)
    if mime is None:
        os.unlink(path)
        raise FetchFailed("the address did not return an image")
    return AssetFile(path, mime, got.size)


async def gather_images(svc: Services, sources: list[str], folder: Path
                        ) -> tuple[dict[str, AssetFile], dict[str, str]]:
    """Fetch the remote images of a document into ``folder``, at most
    ``MARKDOWN_IMAGES_MAX_MB`` together; everything else is refused with a reason."""
    fetched: dict[str, AssetFile] = {}
    refused: dict[str, str] = {}
    slots = asyncio.Semaphore(svc.settings.markdown_image_fetches)
    max_images = svc.settings.markdown_images_max_count
    image_max = svc.settings.markdown_image_max_bytes
    limit_mb = svc.settings.markdown_images_max_mb
    total_left = limit_mb * 1024 * 1024
    past_total = f"left out: the images of one document may take {limit_mb} MB together"

    async def one(src: str) -> None:
        scheme = urllib.parse.urlsplit(src).scheme.lower()
        if scheme not in ("http", "https"):
            refused[src] = ("only http(s) images are fetched" if scheme
                            else "relative image paths have no base to resolve against")
            return
        nonlocal total_left
        async with slots:
            if total_left <= 0:
                refused[src] = past_total
                return
            try:
                got = await fetch_image(svc, src, folder, total_left)
            except FetchRefused as exc:
                refused[src] = f"address refused ({exc})"
                return
            except FetchFailed as exc:
                refused[src] = past_total if exc.too_large and total_left < image_max \
                    else str(exc)
                return
            if got.size > total_left:  # others finished first: it no longer fits
                os.unlink(got.path)
                refused[src] = past_total
                return
            total_left -= got.size
            fetched[src] = got

    await asyncio.gather(*(one(s) for s in sources[:max_images]))
    for src in sources[max_images:]:
        refused[src] = f"more than {max_images} images"
    return fetched, refused


async def _image_field(svc: Services, fields: dict[str, str],
                       files: dict[str, tuple[str, bytes]], name: str, folder: Path
                       ) -> AssetFile | None:
    """The cover or logo image, uploaded or fetched, as a file of ``folder``."""
    upload = files.get(f"{name}_file")
    url = (fields.get(f"{name}_url") or "").strip()
    if upload and url:
        raise DocsError(40001, f"send one of {name}_file or {name}_url, not both")
    if upload:
        mime = sniff_image(upload[1])
        if mime is None:
            raise DocsError(40002, f"{name}_file is not an image (PNG, JPEG, GIF, WebP, SVG)")
        path = await asyncio.to_thread(_write_new_file, folder, upload[1])
        return AssetFile(path, mime, len(upload[1]))
    if url:
        try:
            return await fetch_image(svc, url, folder)
        except FetchFailed as exc:
            raise DocsError(40003, f"{name}_url: {exc}") from exc
    return None


async def _markdown(svc: Services, fields: dict[str, str], files: dict[str, tuple[str, bytes]]
                    ) -> tuple[str, str]:
    """The Markdown text and a default file stem, from exactly one of the three inputs."""
    upload = files.get("md_file")
    text = fields.get("markdown_text")
    url = (fields.get("markdown_url") or "").strip()
    given = [x for x in (upload, text if text else None, url or None) if x]
    if len(given) != 1:
        raise DocsError(40001, "send exactly one of md_file, markdown_text or markdown_url")
    limit = svc.settings.max_markdown_bytes
    stem = "document"
    if upload:
        raw, stem = upload[1], upload[0].rsplit(".", 1)[0]
    elif url:
        st = svc.settings
        got = await fetch(url, allow_private=st.allow_private_urls, max_bytes=limit,
                          timeout=st.fetch_timeout_seconds)
        raw = got.data
        stem = urllib.parse.urlsplit(got.url).path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    else:
        raw = (text or "").encode("utf-8")
    if len(raw) > limit:
        raise DocsError(41301, f"Markdown is larger than {limit} bytes")
    try:
        return raw.decode("utf-8-sig"), stem or "document"
    except UnicodeDecodeError as exc:
        raise DocsError(40003, "the Markdown is not UTF-8 text") from exc


def markdown_limits(settings: Settings) -> MarkdownLimits:
    """The parsing-cost limits of the settings (``MARKDOWN_MAX_*``)."""
    return MarkdownLimits(**{name: getattr(settings, f"markdown_max_{name}")
                             for name in MarkdownLimits.__dataclass_fields__})


# every field /md/convert reads: another name is 40001, so a typo (``tocs=true`` for
# ``toc=true``) is never silently ignored
MARKDOWN_FIELDS = frozenset({
    "md_file", "markdown_text", "markdown_url", "target", "css_name", "css_text", "toc",
    "header_text", "footer_text", "cover_url", "cover_file", "logo_url", "logo_file",
    "product_name", "product_version", "document_name", "document_version", "copyright_text",
    "save", "filename", "async", "callback_url"})


def check_markdown_form(fields: dict[str, str], files: dict[str, tuple[str, bytes]]
                        ) -> tuple[str, str]:
    """(target, css_name) of a ``/md/convert`` form; 40001/40002 when invalid."""
    unknown = sorted((set(fields) | set(files)) - MARKDOWN_FIELDS)
    if unknown:
        raise DocsError(40001, f"unknown field(s) {', '.join(unknown)[:200]}; /md/convert "
                               f"reads {', '.join(sorted(MARKDOWN_FIELDS))}")
    if not (fields.get("target") or "").strip():
        raise DocsError(40001, "target is required (pdf or docx)")
    target = choice_field(fields, "target", list(jobs.TARGETS), "pdf")
    css_name = (fields.get("css_name") or "default").strip()
    if target == "pdf" and css_name not in list_themes():
        raise DocsError(40002, f"unknown css_name {css_name!r}; use one of "
                               f"{', '.join(list_themes())}")
    return target, css_name


async def render_markdown_form(svc: Services, company_id: str, fields: dict[str, str],
                               files: dict[str, tuple[str, bytes]]
                               ) -> tuple[jobs.Rendered, str]:
    """Render a ``/md/convert`` form (inputs fetched, images gathered, one pool render) for
    ``company_id`` (whose turn its pool jobs take); returns the rendered file and its name.
    Shared by the request and its async job."""
    async with asset_folder(svc) as folder:
        return await _render_form(svc, company_id, fields, files, folder)


async def _render_form(svc: Services, company_id: str, fields: dict[str, str],
                       files: dict[str, tuple[str, bytes]], folder: Path
                       ) -> tuple[jobs.Rendered, str]:
    target, css_name = check_markdown_form(fields, files)
    text, stem = await _markdown(svc, fields, files)
    # the cover and logo travel as files (AssetFile) in place of their Resource: the worker
    # reads them (render_pool.engine.asset_files.render_markdown_files), never this process
    cover = CoverPage(
        cover_image=cast("Resource | None", await _image_field(svc, fields, files, "cover",
                                                               folder)),
        logo=cast("Resource | None", await _image_field(svc, fields, files, "logo", folder)),
        product_name=fields.get("product_name", ""),
        product_version=fields.get("product_version", ""),
        document_name=fields.get("document_name", ""),
        document_version=fields.get("document_version", ""),
        copyright_text=fields.get("copyright_text", ""),
    )
    request = jobs.RenderRequest(
        target=target, css_name=css_name, css_text=fields.get("css_text", ""),
        toc=bool_field(fields, "toc"), header_text=fields.get("header_text", ""),
        footer_text=fields.get("footer_text", ""),
        title=fields.get("document_name", "") or stem,
        cover=None if cover.is_empty() else cover,
    )
    pool = pool_of(svc)
    # parsing cost and nesting checked in the pool before any parse (40003 at once)
    sources = await pool.run(jobs.markdown_images, text, markdown_limits(svc.settings),
                             tenant=company_id)
    fetched, refused = await gather_images(svc, sources, folder)
    rendered: jobs.Rendered = await pool.run(render_markdown_files, text, request, fetched,
                                             refused, tenant=company_id)
    svc.metrics.observe_browser(rendered.worker_pid, rendered.browser_launches)
    name = f"{safe_basename(fields.get('filename') or stem, 'document')}.{rendered.extension}"
    return rendered, name


class MarkdownConvertHandler(UploadHandler):
    def field_limit(self) -> int:
        """``markdown_text`` may be as large as a Markdown input may be (41301 past it,
        while the body streams)."""
        return max(super().field_limit(), self.services.settings.max_markdown_bytes)

    async def post(self) -> None:
        fields, files = await self.form()
        target, _ = check_markdown_form(fields, files)
        save = bool_field(fields, "save")
        self.conversion = ("markdown", target)
        if bool_field(fields, "async"):
            from tornado_app.documents.async_requests import enqueue_form

            await enqueue_form(self, "markdown", fields, files)
            return
        rendered, name = await render_markdown_form(self.services, self.company_id, fields,
                                                    files)
        if save:
            self.success(await save_rendered(self.services, self.company_id, rendered, name))
            return
        self.set_header("Content-Type", rendered.media_type)
        self.set_header("Content-Disposition", attachment(name))
        if rendered.warnings:
            self.set_header("X-Conversion-Warnings",
                            urllib.parse.quote(json.dumps(rendered.warnings[:50])))
        self.finish(rendered.data)


class ThemesHandler(DocsHandler):
    """Names accepted as ``css_name`` (plain JSON, no envelope)."""

    def get(self) -> None:
        self.write_json(200, {"themes": list_themes()})

