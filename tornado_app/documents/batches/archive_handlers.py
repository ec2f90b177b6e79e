"""Archives of Markdown/HTML (zip, tar.gz, tgz): ``/api/upload-archive`` (v2 envelope),
``/api/archive/stage`` and ``/api/archive/process``, run now or as a polled job."""

from __future__ import annotations

from typing import Any

from render_pool.batch import archives
from tornado_app.documents.async_requests import answer, submit
from tornado_app.documents.base import DocsError, UploadHandler, bool_field
from tornado_app.documents.batches import batch_service
from tornado_app.documents.batches.batch_chunks import chunk_options
from tornado_app.documents.batches.batch_service import BatchStorageFailed
from tornado_app.documents.conversion import storage_of


class ArchiveRunner(UploadHandler):
    """Shared by upload-archive and archive/process: run now, or as a polled job."""

    async def run_archive(self, data: bytes, filename: str, fields: dict[str, str],
                          staged_key: str = "") -> None:
        prefix, version = batch_service.batch_params(fields)
        chunks = chunk_options(fields)
        encoding = (fields.get("encoding") or "").strip() or None
        storage = storage_of(self.services)
        await storage.store(self.company_id)  # 50201 before any work without storage
        if bool_field(fields, "async"):
            await self.enqueue_archive(data, filename, fields, prefix, version, encoding,
                                       staged_key, chunks)
            return
        try:
            files = await batch_service.process_archive(
                self.services, self.company_id, data, filename, prefix=prefix,
                version_id=version, encoding=encoding, chunks=chunks)
        except BatchStorageFailed as exc:
            self.write_json(200, {"code": 50201, "msg": exc.message,
                                  "data": {"count": len(exc.files), "total": exc.total,
                                           "files": exc.files}})
            return
        self.success({"count": len(files), "files": files})

    async def enqueue_archive(self, data: bytes, filename: str, fields: dict[str, str],
                              prefix: str, version: str, encoding: str | None,
                              staged_key: str = "",
                              chunks: dict[str, Any] | None = None) -> None:
        """Store the input (unless already staged) and queue a job; answers its id."""
        if archives.detect_archive_kind(filename, data) is None:
            raise DocsError(40002, "not a zip, tar.gz or tgz archive")
        job_input = {"key": staged_key, "owned": False, "name": filename, "prefix": prefix,
                     "versionId": version, "encoding": encoding or "", "chunks": chunks}
        answer(self, await submit(self, "archive", fields, {"file": (filename, data)},
                                  None if staged_key else data, job_input))


class UploadArchiveHandler(ArchiveRunner):
    async def post(self) -> None:
        fields, files = await self.form()
        upload = files.get("file")
        if not upload:
            raise DocsError(40001, "file (zip, tar.gz or tgz) is required")
        await self.run_archive(upload[1], upload[0], fields)


class StageArchiveHandler(UploadHandler):
    async def post(self) -> None:
        _, files = await self.form()
        upload = files.get("file")
        if not upload:
            raise DocsError(40001, "file (zip, tar.gz or tgz) is required")
        name, data = upload
        staged = await batch_service.stage_archive(self.services, self.company_id, name, data)
        self.success({"id": staged.id, "name": name, "size": len(data)})


class ProcessArchiveHandler(ArchiveRunner):
    async def post(self) -> None:
        fields, _ = await self.form()
        stage_id = (fields.get("id") or "").strip()
        if not stage_id:
            raise DocsError(40001, "id of a staged archive is required")
        staged, data = await batch_service.staged_archive(self.services, self.company_id,
                                                          stage_id)
        await self.run_archive(data, staged.name, fields, staged.key)
