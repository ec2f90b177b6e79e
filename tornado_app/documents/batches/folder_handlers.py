"""``/md/convert-folder`` (plain JSON): a server folder under the caller's company's
``FOLDER_ROOTS`` (:mod:`tornado_app.documents.folder_roots`), run now or as a polled job."""

from __future__ import annotations

from pathlib import Path

from tornado_app.documents.async_requests import submit
from tornado_app.documents.base import bool_field
from tornado_app.documents.batches import batch_service
from tornado_app.documents.batches.batch_chunks import chunk_options
from tornado_app.documents.batches.batch_service import BatchStorageFailed
from tornado_app.documents.folder_roots import NOT_A_FOLDER, allowed_folder
from tornado_app.documents.plain import PlainError, PlainHandler


class ConvertFolderHandler(PlainHandler):
    """``/md/convert-folder`` (ADMIN only); a folder outside the company's roots answers like
    a missing one."""

    admin_methods = frozenset({"POST"})

    async def post(self) -> None:
        fields, _ = await self.form()
        raw = (fields.get("folder_path") or "").strip()
        if not raw:
            raise PlainError(400, "folder_path is required")
        folder = Path(raw)
        if not folder.is_absolute():
            raise PlainError(400, "folder_path must be an absolute path")
        real = await allowed_folder(self.services, self.company_id, folder)
        if real is None:  # outside the company's roots answers like a missing folder
            raise PlainError(404, NOT_A_FOLDER)
        prefix, version = batch_service.batch_params(fields)
        chunks = chunk_options(fields)
        if bool_field(fields, "async"):
            job_id = await submit(self, "folder", fields, {}, None, {
                "folder": str(real), "name": real.name, "prefix": prefix, "versionId": version,
                "chunks": chunks})
            self.reply({"ok": True, "job_id": job_id, "status_url": f"/api/jobs/{job_id}"})
            return
        try:
            files = await batch_service.process_tree(self.services, self.company_id, real,
                                                     prefix=prefix, version_id=version,
                                                     chunks=chunks)
        except BatchStorageFailed as exc:
            self.write_json(502, {"ok": False, "error": exc.message, "hint": "",
                                  "count": len(exc.files), "files": exc.files})
            return
        self.reply({"ok": True, "count": len(files), "files": files})
